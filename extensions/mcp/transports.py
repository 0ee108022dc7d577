"""Opening a connection to an MCP server: the pieces a ``Server`` puts together on its connection's stack.

- `spawn_logged`: a stdio server's process, its stderr appended to a log file, killed with pi-tui should
  pi-tui die without closing it, stopped when the stack closes;
- `http_streams`: the SDK's SSE or streamable-HTTP transport, with the server's headers and OAuth;
- `session_on`: the SDK's ``ClientSession`` over a transport's two streams, with pi-tui's client info.

Each is entered on an ``AsyncExitStack`` the caller owns: the connection's task enters and leaves them
(the SDK's anyio cancel scopes must be left in the task that entered them). The SDK must be loaded
(``sdk.loaded``) before `http_streams` and `session_on`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.extensions.api import kill_group_with_pi_tui

from . import handshake, stdio
from .config import ServerConfig

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.client.session import ClientSession, ListRootsFnT, MessageHandlerFnT

    from .oauth import StoredTokenAuth

__all__ = ["http_streams", "session_on", "spawn_logged"]

_NULL_HANDLER = logging.NullHandler()


async def spawn_logged(
    stack: contextlib.AsyncExitStack, config: ServerConfig, root: Path, log_path: Path
) -> asyncio.subprocess.Process:
    """The stdio server's process (run in ``config.cwd``, else ``root``), its stderr appended to
    ``log_path``, stopped when ``stack`` closes."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    errlog = stack.enter_context(log_path.open("a", encoding="utf-8"))
    process = await stdio.spawn(config.command or "", list(config.args), config.env or None,
                                config.cwd or str(root), errlog)  # fmt: skip
    # SIGKILLed with pi-tui, should pi-tui die without closing it. Registered from a thread, off the
    # way to the first call (the first registration starts the watchdog process).
    watched = asyncio.ensure_future(asyncio.to_thread(kill_group_with_pi_tui, process.pid))
    stack.push_async_callback(_forget_when_registered, watched)
    stack.push_async_callback(stdio.stop_process, process)
    return process


async def _forget_when_registered(registered: asyncio.Future[Callable[[], None]]) -> None:
    """Unregister a process group from the watchdog once it has ended (and once it was registered)."""
    forget = await asyncio.shield(registered)
    forget()


async def http_streams(
    stack: contextlib.AsyncExitStack, config: ServerConfig, auth: StoredTokenAuth | None
) -> TransportStreams:
    """The (read, write) streams of an ``sse`` or ``http`` server at ``config.url``, entered on ``stack``."""
    # The SDK logs a server's bad output with tracebacks; with no handler of its own, Python would
    # print them on stderr, over the TUI. A null handler keeps them to whoever configures logging.
    logging.getLogger("mcp").addHandler(_NULL_HANDLER)
    if config.transport == "sse":
        from mcp.client.sse import sse_client

        read, write = await stack.enter_async_context(
            sse_client(config.url or "", headers=config.headers or None, auth=auth)
        )
        return read, write
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = await stack.enter_async_context(create_mcp_http_client(headers=config.headers or None, auth=auth))
    read, write = await stack.enter_async_context(streamable_http_client(config.url or "", http_client=client))
    return read, write


async def session_on(
    stack: contextlib.AsyncExitStack,
    streams: TransportStreams,
    on_message: MessageHandlerFnT,
    list_roots: ListRootsFnT,
) -> ClientSession:
    """The SDK's client session over ``streams``, entered on ``stack`` (not yet initialized)."""
    read, write = streams
    from mcp.client.session import ClientSession  # imported by now (sdk.loaded), without the server half
    from mcp_types import Implementation

    session = ClientSession(read, write, message_handler=on_message, list_roots_callback=list_roots,
                            client_info=Implementation.model_validate(handshake.CLIENT_INFO))  # fmt: skip
    return await stack.enter_async_context(session)
