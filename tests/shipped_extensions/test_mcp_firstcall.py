"""A stdio server's first call runs in plain JSON-RPC before the SDK is loaded (``firstcall.py``): whatever
the server answers, the tool result (or the error) is the one the SDK's session gives for the same call,
and afterwards the SDK's session has the connection, messages written meanwhile included."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from pi_tui.bundled_extensions.mcp import proxy
from pi_tui.bundled_extensions.mcp.config import ServerConfig
from pi_tui.bundled_extensions.mcp.servers import McpCallError, Server, ServerPool

from tests.mcp_servers import filesystem_server, require

SERVERS = Path(__file__).parent / "mcp_servers"
PLAIN = [sys.executable, str(SERVERS / "plain.py")]
DEMO = [sys.executable, str(SERVERS / "demo.py")]
# The plain server's answers the plain path converts itself (the others it leaves to the SDK's checks).
# (Errors are raised either way: no conversion to tell apart.)
CONVERTED_PLAINLY = {"text", "image", "audio", "error_result", "progress", "roots", "ping", "grow", "empty",
                     "structured"}  # fmt: skip

Outcome = tuple[str, object, list[tuple[float, float | None, str | None]], bool]


async def first_call(command: list[str], project: Path, tool: str, args: dict[str, Any], plain: bool,
                     timeout: float = 30.0) -> Outcome:  # fmt: skip
    """(kind, tool result blocks and error flag or the error's text, progress reported, converted plainly)."""
    config = ServerConfig(
        "s", project / "mcp.json", command=command[0], args=tuple(command[1:]), timeout=timeout
    )
    pool = ServerPool({"s": config}, project)
    server = pool.servers["s"]
    server.plain_first = plain
    progress: list[tuple[float, float | None, str | None]] = []
    try:
        try:
            result = await server.call(tool, args, lambda *update: progress.append(update))
        except McpCallError as exc:
            return "error", str(exc), progress, False
        converted = proxy.plain_result_text(result) if isinstance(result, dict) else proxy.result_text(result)
        return "result", converted, progress, isinstance(result, dict)
    finally:
        await pool.close()


async def both(command: list[str], project: Path, tool: str, args: dict[str, Any],
               timeout: float = 30.0) -> tuple[Outcome, Outcome]:  # fmt: skip
    return (await first_call(command, project, tool, args, True, timeout),
            await first_call(command, project, tool, args, False, timeout))  # fmt: skip


@pytest.mark.parametrize(
    "tool",
    ["text", "image", "audio", "resource", "error_result", "rpc_error", "progress", "roots", "ping", "grow",
     "empty", "structured", "bad_structured", "no_structured", "crash"],
)  # fmt: skip
async def test_the_plain_first_call_gives_what_the_sdk_gives(project: Path, tool: str) -> None:
    plain, by_sdk = await both(PLAIN, project, tool, {})
    assert plain[:3] == by_sdk[:3]
    assert plain[3] is (tool in CONVERTED_PLAINLY)
    assert not by_sdk[3]


async def test_a_first_call_that_is_never_answered_times_out_as_with_the_sdk(project: Path) -> None:
    plain, by_sdk = await both(PLAIN, project, "hang", {}, timeout=0.5)
    assert plain == by_sdk
    assert plain[0] == "error" and "did not answer hang within 0.5s" in str(plain[1])


async def test_what_the_roots_request_is_answered_with_is_the_sdk_session_answer(project: Path) -> None:
    plain, by_sdk = await both(PLAIN, project, "roots", {})
    assert plain[:3] == by_sdk[:3]
    assert project.resolve().as_uri() in str(plain[1])


@pytest.mark.parametrize(("tool", "args"), [("add", {"a": 1, "b": 2}), ("add", {"a": "x"}), ("count", {"n": 2}),
                                            ("huge", {}), ("crash", {})])  # fmt: skip
async def test_the_sdk_built_demo_server_answers_the_same_either_way(
    project: Path, tool: str, args: dict[str, Any]
) -> None:
    plain, by_sdk = await both(DEMO, project, tool, args)
    assert plain[:3] == by_sdk[:3]


@pytest.mark.parametrize(
    ("tool", "args"), [("list_allowed_directories", {}), ("read_text_file", {"path": "nope"})]
)
async def test_the_reference_filesystem_server_answers_the_same_either_way(
    project: Path, tool: str, args: dict[str, Any]
) -> None:
    command = require(filesystem_server)
    plain, by_sdk = await both([*command, str(project)], project, tool, args)
    assert plain[:3] == by_sdk[:3]
    assert plain[3] and plain[0] == "result"


async def test_after_the_first_call_the_sdk_session_takes_over_with_what_the_server_wrote_meanwhile(
    project: Path,
) -> None:
    changed = asyncio.Event()

    def on_change(server: Server) -> None:
        if any(t.name == "grown" for t in server.tools):
            changed.set()

    config = ServerConfig("s", project / "mcp.json", command=PLAIN[0], args=tuple(PLAIN[1:]))
    pool = ServerPool({"s": config}, project, on_change=on_change)
    try:
        server = pool.servers["s"]
        server.plain_first = True  # whether or not another test loaded the SDK in this process already
        # The server says its tool list changed in the middle of the first call: the SDK session, once it
        # has the pipes, reads that first and lists the tools again.
        assert isinstance(await server.call("grow", {}), dict)
        await asyncio.wait_for(changed.wait(), 30)
        second = await server.call("grown", {})
        assert not isinstance(second, dict)  # the SDK session's
        assert proxy.result_text(second)[0][0].text == "I am new"
    finally:
        await pool.close()
