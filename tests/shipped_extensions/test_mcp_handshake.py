"""A stdio server is sent ``initialize`` as soon as it is spawned, before the SDK is loaded, and its answer is
installed in the SDK's session once the SDK is there (``handshake.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from pi_tui.bundled_extensions.mcp import handshake

# A bare JSON-RPC server: answers initialize (after creating the file named by argv[1], when given),
# asks for the roots once initialized, answers pings and tools/list; every message it gets goes to stderr.
BARE_SERVER = r"""
import json, os, sys

def send(message):
    os.write(1, (json.dumps(message) + "\n").encode())

pending = b""
while chunk := os.read(0, 65536):
    pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in filter(None, lines):
        message = json.loads(line)
        print(json.dumps(message), file=sys.stderr, flush=True)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            if len(sys.argv) > 1:
                open(sys.argv[1], "w").close()
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "serverInfo": {"name": "bare", "version": "1"},
                "capabilities": {"tools": {}}}})
        elif method == "notifications/initialized":
            send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
"""

# In a fresh interpreter: the SDK's protocol types cannot be imported until the server has received
# ``initialize`` (the file it creates then), at most 8 s. A client that sends ``initialize`` only once the
# SDK is loaded never gets there. The wait is in the module's execution (under its own module lock), not
# in the finder, which Python calls holding the lock every import takes.
HELD_LOAD = """
import asyncio, importlib.abc, json, sys, time
from pathlib import Path

MARK = Path(sys.argv[1])

class WaitForInitialize(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        deadline = time.monotonic() + 8
        while not MARK.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not MARK.exists():
            raise ImportError("initialize was not sent while the SDK loaded")
        self.loader.exec_module(module)

class HoldTheProtocolTypes(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "mcp_types._types":
            return None
        for finder in sys.meta_path:
            spec = None if finder is self else finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = WaitForInitialize(spec.loader)
                return spec
        return None

sys.meta_path.insert(0, HoldTheProtocolTypes())

from pi_tui.bundled_extensions.mcp.config import ServerConfig
from pi_tui.bundled_extensions.mcp.servers import ServerPool

async def main():
    config = ServerConfig("bare", Path("mcp.json"), command=sys.executable, args=("-c", sys.argv[2], str(MARK)))
    pool = ServerPool({"bare": config}, Path.cwd())
    server = pool.servers["bare"]
    try:
        session = await server.ensure()
        print(json.dumps({"status": server.status, "tools": [t.name for t in server.tools],
                          "server": session.server_info.name, "roots": [server.roots.asked, server.roots.unanswered],
                          "log": server.log_tail(10)}))
    finally:
        await pool.close()

asyncio.run(main())
"""


def test_initialize_is_answered_before_the_sdk_is_loaded_and_the_session_goes_on_from_it(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(HELD_LOAD), str(tmp_path / "initialized"), BARE_SERVER],
        capture_output=True, text=True, timeout=50, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["status"] == "connected" and seen["tools"] == ["t"] and seen["server"] == "bare"
    assert seen["roots"] == [1, 0]  # asked during the load, answered by the session once it existed
    received = [json.loads(line) for line in seen["log"]]
    # One initialize (no second one from the session), then the rest in protocol order.
    assert [m.get("method") for m in received[:2]] == ["initialize", "notifications/initialized"]
    assert sum(m.get("method") == "initialize" for m in received) == 1
    assert received[0]["params"]["clientInfo"] == handshake.CLIENT_INFO


async def test_the_early_request_is_the_one_the_sdks_own_initialize_sends() -> None:
    # What pi-tui's session would have sent itself (the SDK, with a roots callback and pi-tui's client
    # info), read off a memory stream: an SDK whose initialize asks differently fails here.
    from mcp.client.session import ClientSession
    from mcp.shared.message import SessionMessage
    from mcp_types import Implementation, ListRootsResult

    known = handshake.versions()
    assert known is not None
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    write, sent = anyio.create_memory_object_stream[SessionMessage](1)

    async def roots(context: object) -> ListRootsResult:
        return ListRootsResult(roots=[])

    client_info = Implementation.model_validate(handshake.CLIENT_INFO)
    async with (
        to_session,
        sent,
        ClientSession(read, write, list_roots_callback=roots, client_info=client_info) as s,
    ):
        with anyio.move_on_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(s.initialize)
                message = (await sent.receive()).message
                tasks.cancel_scope.cancel()
    wire = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
    assert wire["method"] == "initialize"
    assert wire["params"] == handshake.initialize_params(known.latest)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"jsonrpc": "2.0", "error": {"code": -32600, "message": "not today"}}, "not today"),
        ({"jsonrpc": "2.0", "result": {"protocolVersion": "1999-01-01", "capabilities": {},
                                               "serverInfo": {"name": "old", "version": "1"}}},
         "Unsupported protocol version from the server: 1999-01-01"),
    ],
)  # fmt: skip
async def test_an_initialize_answer_the_sdk_refuses_is_refused_the_same_way(
    tmp_path: Path, answer: dict[str, object], reason: str
) -> None:
    from pi_tui.bundled_extensions.mcp.config import ServerConfig
    from pi_tui.bundled_extensions.mcp.servers import McpCallError, ServerPool

    # Answers the first request (the initialize, whoever sends it) with ``answer``, under that request's id.
    script = (f"import sys, json; answer = {answer!r}; answer['id'] = json.loads(sys.stdin.readline())['id']; "
              "print(json.dumps(answer), flush=True); sys.stdin.read()")  # fmt: skip
    config = ServerConfig("refused", tmp_path / "mcp.json", command=sys.executable, args=("-c", script))
    pool = ServerPool({"refused": config}, tmp_path)
    try:
        with pytest.raises(McpCallError) as failed:
            await pool.servers["refused"].ensure()
    finally:
        await pool.close()
    assert str(failed.value) == f'MCP server "refused" failed to start: {reason}'
