"""No network inside by default; bad settings and a broken bwrap fail closed with one line."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.sandbox.policy import SandboxSettings

from .helpers import Box


@pytest.fixture
def local_server() -> Iterator[int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"REACHED")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


async def test_local_server_is_unreachable_and_the_result_says_so(box: Box, local_server: int) -> None:
    unsandboxed = Box(box.project, box.outside, override="off")
    reached = await unsandboxed.run(f"curl -s http://127.0.0.1:{local_server}/")
    assert "REACHED" in reached.text  # the server works
    result = await box.run(f"curl -sS http://127.0.0.1:{local_server}/")
    assert not result.ok
    assert "REACHED" not in result.text
    assert "[sandbox] Refused network access to 127.0.0.1" in result.text


async def test_name_lookup_fails_and_names_the_host(box: Box) -> None:
    result = await box.run("curl -sS https://pypi.org/simple/")
    assert not result.ok
    assert "[sandbox] Refused network access to pypi.org" in result.text


async def test_missing_allow_write_path_fails_closed(box: Box) -> None:
    box.settings = SandboxSettings(allow_write=("/no/such/dir",))
    result = await box.run("echo ran > ran.txt")
    assert not result.ok
    assert not (box.project / "ran.txt").exists()
    assert result.text == (
        "Sandbox refused to run the command: sandbox.allowWrite: /no/such/dir does not exist "
        "(fix or remove it in settings.json)"
    )


async def test_missing_deny_read_path_fails_closed(box: Box) -> None:
    box.settings = SandboxSettings(deny_read=("~/nothing-here",))
    result = await box.run("echo ran > ran.txt")
    assert not result.ok and not (box.project / "ran.txt").exists()
    assert "sandbox.denyRead: ~/nothing-here does not exist" in result.text


@pytest.mark.parametrize(
    "pattern", ["https://pypi.org", "pypi.org:443", "*", "*.com", "pypi.org/simple", "bad host"]
)
async def test_malformed_host_pattern_fails_closed(box: Box, pattern: str) -> None:
    box.settings = SandboxSettings(allow_network=(pattern,))
    result = await box.run("echo ran > ran.txt")
    assert not result.ok and not (box.project / "ran.txt").exists()
    assert f"sandbox.allowNetwork: {pattern!r} is not a host pattern" in result.text
    assert "\n" not in result.text


async def test_missing_bwrap_fails_closed_when_asked(box: Box) -> None:
    box.bwrap_path = "/nonexistent/bwrap"
    box.override = "workspace-write"
    result = await box.run("echo ran > ran.txt")
    assert not result.ok and not (box.project / "ran.txt").exists()
    assert result.text.startswith("Sandbox workspace-write cannot start: bubblewrap (bwrap) is not installed")
    assert "\n" not in result.text


async def test_missing_bwrap_by_default_runs_unsandboxed_and_says_so(box: Box) -> None:
    box.bwrap_path = "/nonexistent/bwrap"
    result = await box.run("echo ran > ran.txt")
    assert result.ok
    notice = box.sandbox.startup_notice()
    assert notice is not None and notice.startswith(
        "Commands are not sandboxed: bubblewrap (bwrap) is not installed"
    )
    assert "apt-get install bubblewrap" in notice
    assert box.sandbox.status() == "not sandboxed"


async def test_bwrap_that_cannot_create_namespaces_fails_closed(box: Box, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not "
        "allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    box.bwrap_path = str(fake)
    box.settings = SandboxSettings(mode="workspace-write")
    result = await box.run("echo ran > ran.txt")
    assert not result.ok and not (box.project / "ran.txt").exists()
    assert "user namespaces are off" in result.text
    assert "\n" not in result.text


async def test_invalid_mode_setting_fails_closed(box: Box) -> None:
    box.settings = SandboxSettings(invalid_mode="strict")
    result = await box.run("echo ran > ran.txt")
    assert not result.ok and not (box.project / "ran.txt").exists()
    assert "'strict' is not a mode" in result.text


async def test_allowed_host_is_reached_through_the_proxy(box: Box, local_server: int) -> None:
    box.settings = SandboxSettings(allow_network=("127.0.0.1",))
    result = await box.run(f"curl -sS http://127.0.0.1:{local_server}/")
    assert result.ok, result.text
    assert "REACHED" in result.text


async def test_host_not_on_the_allow_list_is_refused_by_the_proxy(box: Box, local_server: int) -> None:
    box.settings = SandboxSettings(allow_network=("pypi.org",))
    result = await box.run(
        f"curl -fsS http://127.0.0.1:{local_server}/ ; curl -fsS https://blocked.example.com/"
    )
    assert not result.ok
    assert "REACHED" not in result.text  # loopback stays inside the sandbox: nothing listens there
    assert "[sandbox] Refused network access to blocked.example.com" in result.text
    assert "allowed hosts: pypi.org" in result.text


async def test_a_program_ignoring_the_proxy_gets_no_network(box: Box, local_server: int) -> None:
    box.settings = SandboxSettings(allow_network=("127.0.0.1",))
    result = await box.run(f"curl -sS --noproxy '*' http://127.0.0.1:{local_server}/")
    assert not result.ok
    assert "REACHED" not in result.text
