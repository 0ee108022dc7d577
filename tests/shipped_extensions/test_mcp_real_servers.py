"""The ``mcp`` extension against servers nobody here wrote (the reference filesystem and git servers) and
over the network transports (streamable HTTP and SSE, served by the SDK's own server classes)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.mcp_servers import filesystem_server, git_server, require

from .helpers import MODEL, ext, model_requests, open_session

DEMO = Path(__file__).parent / "mcp_servers" / "demo.py"


def write_mcp(agent_dir: Path, servers: dict[str, Any]) -> None:
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def results(fake: FakeLLM) -> list[str]:
    return [r.content for r in model_requests(fake)[-1].tool_results()]


async def test_the_reference_filesystem_server_works_inside_the_project_roots(
    fake: FakeLLM, agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    command = require(filesystem_server)
    (project / "notes.txt").write_text("remember the milk\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours\n")
    # Given the outside folder as its argument, the server follows the roots pi-tui offers: the project.
    write_mcp(agent_dir, {"filesystem": {"command": command[0], "args": [*command[1:], str(outside)]}})
    # The server asks for the roots after its start and applies them asynchronously, with nothing to say
    # it is done (the first call waits for the answer to go out, then a few pings: most first calls see
    # the project, not all): the scripted model lists the allowed directories until the project is
    # among them (bounded), then reads.
    listed = tool_call("mcp", {"tool": "filesystem/list_allowed_directories", "args": {}})
    fake.script([Reply([tool_call("mcp", {"search": "read file"})]), Reply([listed])])
    asks = 0

    def respond(request: Any) -> Reply:
        nonlocal asks
        last = request.last_tool_result()
        listing = last is not None and last.content.startswith("Allowed directories")
        if asks < 200 and listing and str(project) not in last.content:
            asks += 1
            return Reply([listed])
        return plan.pop(0)

    plan = [
        Reply(
            [
                tool_call(
                    "mcp", {"tool": "filesystem/read_text_file", "args": {"path": str(project / "notes.txt")}}
                )
            ]
        ),
        Reply([tool_call("mcp", {"tool": "read_text_file", "args": {"path": str(outside / "secret.txt")}})]),
        Reply([text("done")]),
    ]
    fake.responder = respond
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("read my notes")

    found, *allowed, notes, denied = results(fake)
    assert "filesystem/read_text_file:" in found
    assert str(project) in allowed[-1] and asks < 200  # the server follows the roots pi-tui offers
    assert notes == "remember the milk\n"
    assert "not yours" not in denied and "denied" in denied.lower()


async def test_the_first_call_waits_until_the_roots_the_filesystem_server_asked_for_are_answered(
    project: Path, tmp_path: Path
) -> None:
    from pi_tui.bundled_extensions.mcp.config import ServerConfig
    from pi_tui.bundled_extensions.mcp.servers import ServerPool

    command = require(filesystem_server)
    outside = tmp_path / "outside"
    outside.mkdir()
    config = ServerConfig(
        "filesystem", tmp_path / "mcp.json", command=command[0], args=(*command[1:], str(outside))
    )
    pool = ServerPool({"filesystem": config}, project)
    try:
        server = pool.servers["filesystem"]
        await server.ensure()  # what a first call does before it sends the call
        # The server asked for the roots during its start-up; the answer was written before ensure()
        # returned, so no call reaches the server before it could know the project is the root.
        assert (server.roots.asked, server.roots.unanswered) == (1, 0)
    finally:
        await pool.close()


async def test_the_reference_git_server(fake: FakeLLM, agent_dir: Path, project: Path) -> None:
    command = require(git_server)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "new.txt").write_text("x")
    write_mcp(agent_dir, {"git": {"command": command[0], "args": ["--repository", str(project)]}})
    fake.script(
        [
            Reply([tool_call("mcp", {"tool": "git/git_status", "args": {"repo_path": str(project)}})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("status?")

    (status,) = results(fake)
    assert status.startswith("Repository status:") and "new.txt" in status


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(kind: str) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO), kind, str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError(f"the demo {kind} server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/{'mcp' if kind == 'http' else 'sse'}"
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from _serve("http")


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    yield from _serve("sse")


async def test_streamable_http_and_sse_servers(
    fake: FakeLLM,
    agent_dir: Path,
    project: Path,
    http_url: str,
    sse_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEMO_PORT_URL", http_url)
    write_mcp(
        agent_dir,
        {
            "remote": {"type": "http", "url": "${DEMO_PORT_URL}", "headers": {"X-Test": "1"}},
            "legacy": {"type": "sse", "url": sse_url},
        },
    )
    fake.script(
        [
            Reply([tool_call("mcp", {"tool": "remote/add", "args": {"a": 20, "b": 22}})]),
            Reply([tool_call("mcp", {"tool": "legacy/add", "args": {"a": 1, "b": 2}})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("add remotely")

    assert results(fake) == ["42", "3"]
