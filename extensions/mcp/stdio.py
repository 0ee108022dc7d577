"""The stdio transport: a server as a child process speaking newline-delimited JSON-RPC on its stdin/stdout.

pi-tui's own rather than the SDK's ``stdio_client`` for one reason: the process is spawned before the
SDK is imported (``spawn`` needs nothing of it), so the server's start-up and the rest of the SDK's
import overlap instead of adding up (and ``handshake.py`` sends it ``initialize`` meanwhile). ``connect`` then bridges the pipes to the two memory streams the
SDK's ``ClientSession`` reads and writes, as ``stdio_client`` does.

Like the SDK: the server runs in its own session and process group, with only a few environment
variables inherited (plus the configured ones); it is stopped by closing its stdin, then SIGTERM to its
group after 0.5 s, then SIGKILL after 0.5 s more (shorter than the SDK's 2 s each: quitting pi-tui must not
wait on a server that ignores its stdin). Its stderr goes wherever the caller says (a log file).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCMessage

__all__ = ["INHERITED_ENV", "spawn", "connect", "stop_process"]

# What a server inherits of pi-tui's environment (the SDK's list for POSIX); the config adds to it.
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
GRACE_S = 0.5  # after stdin closes, before SIGTERM; after SIGTERM, before SIGKILL
KILLED_S = 2.0  # after SIGKILL, for the exit to be seen
_CHUNK = 1 << 16


async def spawn(command: str, args: list[str], env: dict[str, str] | None, cwd: str,
                errlog: TextIO) -> asyncio.subprocess.Process:  # fmt: skip
    """Start the server process (its own process group); OSError when it cannot be started."""
    inherited = {
        k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None and not v.startswith("()")
    }
    return await asyncio.create_subprocess_exec(
        command, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errlog,
        cwd=cwd, env=inherited | (env or {}), start_new_session=True,
    )  # fmt: skip


Watch = Callable[["JSONRPCMessage"], None]


@contextlib.asynccontextmanager
async def connect(
    process: asyncio.subprocess.Process,
    on_garbage: Callable[[str], None],
    on_received: Watch | None = None,
    on_sent: Watch | None = None,
    already_read: bytes = b"",
) -> AsyncIterator[TransportStreams]:
    """The (read, write) streams of a ``ClientSession`` over ``process``'s pipes; stops it on exit.

    ``already_read``: what was read from its stdout before (``handshake.start``), read first.

    A stdout line that is not JSON-RPC reaches the session as an exception and ``on_garbage(line)``.
    ``on_received``/``on_sent`` see every message that passes, in wire order (before the session sees
    a received one; once a sent one is written to the pipe).
    """
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    def parse(line: bytes) -> SessionMessage | Exception:
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:
            on_garbage(line.decode(errors="replace"))
            return exc
        if on_received is not None:
            on_received(message)
        return SessionMessage(message)

    async def reader() -> None:
        pending = bytearray(already_read)
        async with to_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
                while True:
                    *lines, rest = pending.split(b"\n")
                    pending = bytearray(rest)
                    for line in lines:
                        if line.strip():
                            await to_session.send(parse(bytes(line)))
                    if not (chunk := await stdout.read(_CHUNK)):
                        break
                    pending += chunk

    async def writer() -> None:
        async with from_session:
            try:
                async for item in from_session:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write(data.encode() + b"\n")
                    await stdin.drain()
                    if on_sent is not None:
                        on_sent(item.message)
            except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                await to_session.aclose()  # the server stopped reading: the session sees the end

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        try:
            yield read, write
        finally:
            with anyio.CancelScope(shield=True):
                await write.aclose()
                await read.aclose()
                await stop_process(process)
            tasks.cancel_scope.cancel()


async def stop_process(process: asyncio.subprocess.Process) -> None:
    """Close its stdin; SIGTERM its group after ``GRACE_S``, SIGKILL after as long again."""
    if process.stdin is not None:
        process.stdin.close()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if await _exited(process, GRACE_S):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
    await _exited(process, KILLED_S)


async def _exited(process: asyncio.subprocess.Process, within: float) -> bool:
    # The return code, not wait(): wait() also waits for the pipes, which a grandchild may hold open.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while process.returncode is None and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return process.returncode is not None
