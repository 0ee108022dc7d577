"""Connections to MCP servers, on the official ``mcp`` SDK (loaded in the background by ``sdk.py`` once a
server is configured; a connection waits for that load, never imports in the event loop's thread).

Each connected server lives in one asyncio task that holds the transport and the SDK's session context
managers (their anyio cancel scopes must be entered and left in the same task); calls are sent from the
tool's own task through the session. A stdio server is spawned by ``stdio.py`` before the SDK is needed,
so its start-up overlaps whatever is left of the SDK's load, and is sent ``initialize`` at once
(``handshake.py``); HTTP and SSE use the SDK's transports. A server's stderr goes to a log file (never to
pi-tui's stdout or stderr, so ``--mode json``/``rpc`` stay clean); ``/mcp logs NAME`` shows its tail.

Statuses: ``lazy`` (not started; starts on first use), ``starting``, ``connected``, ``failed`` (with the
reason and the last stderr lines), ``disabled``. A call that overruns the server's ``timeout`` fails, the
server is stopped and starts again on its next use; a server that exits mid-call fails the call the same
way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.extensions.api import kill_group_with_pi_tui

from . import handshake, sdk, stdio
from .config import ServerConfig

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
    from mcp_types import CallToolResult, JSONRPCMessage, ListRootsResult, RequestId

    from .oauth import StoredTokenAuth

__all__ = ["McpCallError", "PromptInfo", "ToolInfo", "Server", "ServerPool", "tokens_of"]

START_TIMEOUT = 30.0  # seconds for spawn + initialize + tools/list
LOG_TAIL = 20
_NULL_HANDLER = logging.NullHandler()
ROOTS_WAIT = 5.0  # seconds a first call waits for the roots a server asked for to be answered


class McpCallError(RuntimeError):
    """A server could not be started or a call failed; the message names the server."""


def tokens_of(value: object) -> int:
    """An estimate of what ``value`` costs as prompt text: its compact JSON length / 4."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class ToolInfo:
    """A tool a server offers, as ``tools/list`` describes it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]

    def definition(self) -> dict[str, Any]:
        """The tool as a model would see it direct: name, description, JSON schema."""
        return {"name": self.name, "description": self.description, "parameters": self.input_schema}

    @property
    def tokens(self) -> int:
        """What this tool's definition costs in every request when exposed direct."""
        return tokens_of(self.definition())


@dataclass(frozen=True)
class PromptInfo:
    """A prompt a server offers (``prompts/list``): its name, description and argument names."""

    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # (name, required)


class RootsWatch:
    """The roots a server asked for: whether they have been answered (the answer written to its stdin).

    A server that asks for the client's roots does so right after ``initialize``, before it answers
    ``tools/list`` (the reference filesystem server does). The protocol has no acknowledgement for
    *applying* them, and the reference server applies them asynchronously after our answer (it resolves
    and stats each root first), so a call sent at once may still see its command-line folders. What
    the client can do: hold the first call until the answer has gone out, then give the server a few
    turns of its event loop (``PINGS`` round trips) to finish; see ``settled``. The pings go out as soon
    as the answer has, while the listings are still on their way, not after them.
    """

    PINGS = 3  # each ~1 ms; measured: 15 of 20 first calls saw the old folders without, 4 of 30 with 3

    def __init__(self) -> None:
        self.asked = 0
        self._unanswered: set[RequestId] = set()
        self._answered = asyncio.Event()
        self._decided = asyncio.Event()  # the server asked, or answered tools/list without asking

    @property
    def unanswered(self) -> int:
        """Roots requests received but not answered yet."""
        return len(self._unanswered)

    def received(self, message: JSONRPCMessage) -> None:
        """Every message from the server, before the session sees it (the stdio transport's hook)."""
        from mcp_types import JSONRPCRequest

        if isinstance(message, JSONRPCRequest) and message.method == "roots/list":
            self.asked += 1
            self._unanswered.add(message.id)
            self._answered.clear()
            self._decided.set()

    def sent(self, message: JSONRPCMessage) -> None:
        """Every message to the server, once written (the stdio transport's hook)."""
        from mcp_types import JSONRPCError, JSONRPCResponse

        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id in self._unanswered:
            self._unanswered.discard(message.id)
            if not self._unanswered:
                self._answered.set()

    async def settled(self, session: ClientSession, listed: Awaitable[object]) -> None:
        """Return once the roots the server asked for are answered (at most ``ROOTS_WAIT`` s) and it
        has answered ``PINGS`` pings since; once ``listed`` (the listings) is done if the server has not
        asked by then (a server that asks does so before it answers ``tools/list``)."""
        if not self.asked:
            asyncio.ensure_future(listed).add_done_callback(lambda _: self._decided.set())
            await self._decided.wait()
            if not self.asked:
                return
        if self._unanswered:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), ROOTS_WAIT)
        for _ in range(self.PINGS):
            await session.send_ping()


class Server:
    """One configured server: its state, its tools once listed, its connection while connected."""

    def __init__(self, config: ServerConfig, root: Path, log_dir: Path,
                 on_change: Callable[[Server], None] | None = None) -> None:  # fmt: skip
        self.config = config
        self.root = root
        self.status = "lazy" if config.enabled else "disabled"
        self.reason = ""
        self.tools: list[ToolInfo] = []
        self.prompts: list[PromptInfo] = []
        self.resources: list[tuple[str, str]] = []  # (uri, name or description), once started
        self.calls = 0
        self.returned_tokens = 0
        self.log_path = log_dir / f"{config.name}.stderr.log"
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._retiring: set[asyncio.Task[None]] = set()
        self._ready: asyncio.Future[ClientSession] | None = None
        self.roots = RootsWatch()
        self._auth: StoredTokenAuth | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def log_tail(self, lines: int = LOG_TAIL) -> list[str]:
        """The last ``lines`` lines the server wrote to stderr."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-lines:]

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    def _fail(self, reason: str) -> McpCallError:
        if self._auth is not None and self._auth.problem is not None:  # the real reason: a login is needed
            self.status, self.reason = "needs login", str(self._auth.problem)
            self._session = None
            self._changed()
            return McpCallError(self.reason)
        tail = self.log_tail(3)
        self.status, self.reason = "failed", reason + (f" (stderr: {' | '.join(tail)})" if tail else "")
        self._session = None
        self._changed()
        return McpCallError(f'MCP server "{self.name}" {self.reason}')

    def start_in_background(self) -> None:
        """Start the server without waiting (a lazy one about to be used); a failure only sets the status."""
        if not self.config.enabled or self.status != "lazy":
            return

        async def start() -> None:
            with contextlib.suppress(McpCallError):
                await self.ensure()

        task = asyncio.get_running_loop().create_task(start(), name=f"mcp-start:{self.name}")
        self._retiring.add(task)  # held (and awaited on close) like a connection being retired

    async def ensure(self) -> ClientSession:
        """The live session, starting the server first when it is not connected."""
        if not self.config.enabled:
            raise McpCallError(f'MCP server "{self.name}" is disabled (/mcp enable {self.name})')
        async with self._lock:
            if self._session is not None and self._task is not None and not self._task.done():
                return self._session
            await self._stop_task()
            return await self._start()

    async def _start(self) -> ClientSession:
        self.status, self.reason = "starting", ""
        self._changed()
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self._ready = ready
        self.roots = RootsWatch()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready, self._stop), name=f"mcp:{self.name}")
        try:
            session = await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        except TimeoutError:
            await self._stop_task()
            raise self._fail(f"did not answer within {START_TIMEOUT:.0f}s of starting") from None
        except Exception as exc:  # the SDK raises many kinds; each becomes one line naming the server
            await self._stop_task()
            raise self._fail(f"failed to start: {_describe(exc)}") from None
        self._session = session
        self.status = "connected"
        self._changed()
        return session

    async def _run(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                session, early = await self._open(stack)
                init = await session.initialize() if early is None else early.adopt(session)
                # The three listings at once (one round trip, not three: they are on the way to a first call).
                async with asyncio.TaskGroup() as listings:
                    tools = listings.create_task(self._list_tools(session))
                    prompts = (listings.create_task(self._list_prompts(session))
                               if init.capabilities.prompts is not None else None)  # fmt: skip
                    resources = (listings.create_task(self._list_resources(session))
                                 if init.capabilities.resources is not None else None)  # fmt: skip
                    # The roots asked for during the handshake, answered and settled meanwhile.
                    listed = asyncio.gather(*(t for t in (tools, prompts, resources) if t is not None),
                                            return_exceptions=True)  # fmt: skip
                    listings.create_task(self.roots.settled(session, listed))
                self.tools = tools.result()
                if prompts is not None:
                    self.prompts = prompts.result()
                if resources is not None:
                    self.resources = resources.result()
                if not ready.done():
                    ready.set_result(session)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 — an exception group from anyio included
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else McpCallError(str(exc)))
            elif not stop.is_set():
                self._fail(f"disconnected: {_describe(exc)}")
            return
        if not stop.is_set() and self.status == "connected":
            self._fail("disconnected")

    async def _open(self, stack: contextlib.AsyncExitStack) -> tuple[ClientSession, handshake.Early | None]:
        """The session, entered on ``stack``, and for a stdio server the ``initialize`` exchange made before the
        SDK was loaded (``handshake``), if there is one to adopt instead of calling ``initialize()``."""
        cfg = self.config
        early: handshake.Early | None = None
        if cfg.transport == "stdio":
            # Spawned first: the server starts while the rest of the SDK import (if any) finishes.
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            errlog = stack.enter_context(self.log_path.open("a", encoding="utf-8"))
            process = await stdio.spawn(cfg.command or "", list(cfg.args), cfg.env or None,
                                        cfg.cwd or str(self.root), errlog)  # fmt: skip
            # SIGKILLed with pi-tui, should pi-tui die without closing it. Registered from a thread, off the
            # way to the first call (the first registration starts the watchdog process).
            watched = asyncio.ensure_future(asyncio.to_thread(kill_group_with_pi_tui, process.pid))
            stack.push_async_callback(_forget_when_registered, watched)
            stack.push_async_callback(stdio.stop_process, process)
            # ``initialize`` at once, while the SDK loads: a server that starts faster than the load has
            # answered by the time it is done. Cancelled if still reading when the load fails or the start
            # is given up.
            known = handshake.versions()
            exchange = asyncio.ensure_future(handshake.start(process, known)) if known is not None else None
            if exchange is not None:
                stack.callback(exchange.cancel)
            sdk.prefetch_when_loaded([cfg.transport])
            await sdk.loaded([cfg.transport])
            early = await exchange if exchange is not None else None
            read, write = await stack.enter_async_context(
                stdio.connect(process, self._garbage, self.roots.received, self.roots.sent,
                              early.rest if early is not None else b"")
            )  # fmt: skip
        else:
            sdk.prefetch_when_loaded([cfg.transport])
            await sdk.loaded([cfg.transport])
            # The SDK logs a server's bad output with tracebacks; with no handler of its own, Python would
            # print them on stderr, over the TUI. A null handler keeps them to whoever configures logging.
            logging.getLogger("mcp").addHandler(_NULL_HANDLER)
            if cfg.transport == "sse":
                from mcp.client.sse import sse_client

                read, write = await stack.enter_async_context(
                    sse_client(cfg.url or "", headers=cfg.headers or None, auth=self._oauth())
                )
            else:
                from mcp.client.streamable_http import streamable_http_client
                from mcp.shared._httpx_utils import create_mcp_http_client

                client = await stack.enter_async_context(
                    create_mcp_http_client(headers=cfg.headers or None, auth=self._oauth())
                )
                read, write = await stack.enter_async_context(
                    streamable_http_client(cfg.url or "", http_client=client)
                )
        from mcp.client.session import ClientSession  # imported by now (sdk.loaded), without the server half
        from mcp_types import Implementation

        session = ClientSession(read, write, message_handler=self._on_message, list_roots_callback=self._list_roots,
                                client_info=Implementation.model_validate(handshake.CLIENT_INFO))  # fmt: skip
        return await stack.enter_async_context(session), early if early and early.answer else None

    def _garbage(self, line: str) -> None:
        """A stdout line that is not JSON-RPC: fails a start at once (afterwards the line is skipped)."""
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_exception(McpCallError(f"wrote something that is not JSON-RPC: {line[:80]!r}"))

    def _oauth(self) -> StoredTokenAuth | None:
        """The stored OAuth login's bearer token, renewed when needed (None when OAuth is off)."""
        if self.config.oauth is None or not self.config.url:
            self._auth = None
            return None
        from .oauth import StoredTokenAuth
        from .oauth_store import TokenStore

        self._auth = StoredTokenAuth(TokenStore(), self.config.url, self.name)
        return self._auth

    async def _list_tools(self, session: ClientSession) -> list[ToolInfo]:
        tools: list[ToolInfo] = []
        cursor: str | None = None
        from mcp_types import PaginatedRequestParams

        while True:
            result = await session.list_tools(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            for tool in result.tools:
                schema = (
                    dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
                )
                tools.append(ToolInfo(self.name, tool.name, tool.description or "", schema))
            cursor = result.next_cursor
            if not cursor:
                return tools

    async def _list_prompts(self, session: ClientSession) -> list[PromptInfo]:
        try:
            result = await session.list_prompts()
        except Exception:  # a server that announces prompts but cannot list them: no prompts
            return []
        return [
            PromptInfo(
                self.name,
                p.name,
                p.description or "",
                tuple((a.name, bool(a.required)) for a in p.arguments or ()),
            )
            for p in result.prompts
        ]

    async def _list_resources(self, session: ClientSession) -> list[tuple[str, str]]:
        from mcp_types import PaginatedRequestParams

        found: list[tuple[str, str]] = []
        cursor: str | None = None
        try:
            while True:
                result = await session.list_resources(
                    params=PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                found += [(str(r.uri), r.description or r.name or "") for r in result.resources]
                cursor = result.next_cursor
                if not cursor or len(found) > 1000:
                    return found
        except Exception:  # a server that announces resources but cannot list them: none to complete
            return found

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        """The text of prompt ``name`` filled with ``arguments`` (its messages' text, one after another)."""
        session = await self.ensure()
        try:
            result = await asyncio.wait_for(session.get_prompt(name, arguments), self.config.timeout)
        except Exception as exc:
            raise McpCallError(f'MCP server "{self.name}": prompt {name} failed: {_describe(exc)}') from None
        from mcp_types import EmbeddedResource, TextContent, TextResourceContents

        texts = []
        for message in result.messages:
            content = message.content
            if isinstance(content, TextContent):
                texts.append(content.text)
            elif isinstance(content, EmbeddedResource) and isinstance(content.resource, TextResourceContents):
                texts.append(content.resource.text)
            else:  # an image, audio, a binary resource or a link: named, not inlined
                texts.append(f"[{content.type}]")
        return "\n\n".join(texts)

    async def refresh_tools(self) -> None:
        """List the tools again if connected (a tool asked for by name may have appeared since)."""
        session = self._session
        if session is not None:
            with contextlib.suppress(Exception):
                self.tools = await self._list_tools(session)

    async def read_resource(self, uri: str) -> str:
        """The text of resource ``uri`` (binary parts named, not decoded)."""
        session = await self.ensure()
        try:
            result = await asyncio.wait_for(session.read_resource(uri), self.config.timeout)
        except Exception as exc:
            raise McpCallError(f'MCP server "{self.name}": reading {uri} failed: {_describe(exc)}') from None
        from mcp_types import TextResourceContents

        parts = [
            item.text if isinstance(item, TextResourceContents) else f"[binary {item.mime_type or 'data'}]"
            for item in result.contents
        ]
        return "\n".join(parts)

    async def _on_message(self, message: IncomingMessage) -> None:
        from mcp_types import ToolListChangedNotification

        # Server notifications: a changed tool list is fetched again (the proxy's schema stays the same).
        # Everything else (an exception: a stdout line that is not JSON-RPC) is skipped.
        if isinstance(message, ToolListChangedNotification) and self._session is not None:
            session = self._session
            with contextlib.suppress(Exception):
                self.tools = await self._list_tools(session)
                self._changed()

    async def _list_roots(self, context: ClientRequestContext) -> ListRootsResult:
        from mcp_types import ListRootsResult, Root
        from pydantic import FileUrl

        return ListRootsResult(roots=[Root(uri=FileUrl(self.root.resolve().as_uri()), name=self.root.name)])

    async def call(self, tool: str, arguments: dict[str, Any],
                   on_progress: Callable[[float, float | None, str | None], None] | None = None) -> CallToolResult:  # fmt: skip
        """Call ``tool``; a hung server times out after the server's ``timeout`` and is restarted next time."""
        session = await self.ensure()
        self.calls += 1

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        call = session.call_tool(tool, arguments, progress_callback=progress)
        waiter = asyncio.ensure_future(call)
        watch = asyncio.ensure_future(self._task) if self._task is not None else None
        try:
            done, _ = await asyncio.wait([f for f in (waiter, watch) if f is not None], timeout=self.config.timeout,
                                         return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        except asyncio.CancelledError:
            waiter.cancel()
            raise
        if waiter in done:
            try:
                return waiter.result()
            except Exception as exc:
                if _connection_lost(exc) or (self._task is not None and self._task.done()):
                    error = self._fail(f"exited during the call to {tool}")
                    self._retire()
                    raise error from None
                raise McpCallError(f'MCP server "{self.name}": {tool} failed: {_describe(exc)}') from None
        waiter.cancel()
        if watch is not None and watch in done:
            error = self._fail(f"exited during the call to {tool}")
            self._retire()
            raise error
        error = self._fail(
            f"did not answer {tool} within {self.config.timeout:g}s; it is restarted on next use"
        )
        self._retire()
        raise error

    async def stop(self, status: str | None = "lazy") -> None:
        """Disconnect (the server process ends); ``status`` is what it shows afterwards."""
        async with self._lock:
            await self._stop_task()
        if status is not None:
            self.status = status if self.config.enabled else "disabled"
            self.reason = ""
            self._changed()

    def _retire(self) -> None:
        # Detach the current connection and end it in the background; the next use starts a new one.
        task, stop = self._task, self._stop
        self._task, self._stop, self._session = None, None, None
        if task is not None:
            self._retiring.add(asyncio.get_running_loop().create_task(_end(task, stop)))

    async def _stop_task(self) -> None:
        task, stop, ready = self._task, self._stop, self._ready
        self._task, self._stop, self._session = None, None, None
        # Only a connection that got ready waits for ``stop``; one still starting (stuck in initialize,
        # say, after a line that is not JSON-RPC) would never see it, so it is cancelled at once.
        serving = ready is not None and ready.done() and not ready.cancelled() and ready.exception() is None
        await _end(task, stop if serving else None)

    async def wait_retired(self) -> None:
        """Wait until connections given up on (after a timeout) have ended."""
        await asyncio.gather(*self._retiring, return_exceptions=True)
        self._retiring = {t for t in self._retiring if not t.done()}


async def _end(task: asyncio.Task[None] | None, stop: asyncio.Event | None) -> None:
    """End a connection task: ask it (``stop``) to leave its context managers, cancel it if it will not
    or when there is no ``stop`` to ask with."""
    if task is None:
        return
    if stop is not None:
        stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 6.0)
            return
        except (TimeoutError, Exception):
            pass
    task.cancel()
    with contextlib.suppress(BaseException):
        await task


async def _forget_when_registered(registered: asyncio.Future[Callable[[], None]]) -> None:
    """Unregister a process group from the watchdog once it has ended (and once it was registered)."""
    forget = await asyncio.shield(registered)
    forget()


def _connection_lost(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED


def _describe(exc: BaseException) -> str:
    # anyio wraps failures in exception groups: name the innermost useful one.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "…"


class ServerPool:
    """Every configured server, by name, with one log folder for their stderr."""

    def __init__(self, configs: dict[str, ServerConfig], root: Path,
                 on_change: Callable[[Server], None] | None = None) -> None:  # fmt: skip
        self.log_dir = Path(tempfile.mkdtemp(prefix="pi-tui-mcp-"))
        self.servers = {name: Server(cfg, root, self.log_dir, on_change) for name, cfg in configs.items()}

    def get(self, name: str) -> Server | None:
        return self.servers.get(name)

    def all_tools(self) -> list[ToolInfo]:
        return [tool for server in self.servers.values() for tool in server.tools]

    async def close(self) -> None:
        """Stop every server (concurrently)."""
        await asyncio.gather(*(s.stop() for s in self.servers.values()), return_exceptions=True)
        await asyncio.gather(*(s.wait_retired() for s in self.servers.values()), return_exceptions=True)
        shutil.rmtree(self.log_dir, ignore_errors=True)
