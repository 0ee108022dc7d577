"""Connections to MCP servers, on the official ``mcp`` SDK (loaded in the background by ``sdk.py`` once a
server is configured; a connection waits for that load, never imports in the event loop's thread).

Each connected server lives in one asyncio task that holds the transport and the SDK's session context
managers (their anyio cancel scopes must be entered and left in the same task); calls are sent from the
tool's own task through the session. A stdio server is spawned by ``stdio.py`` before the SDK is needed,
so its start-up overlaps whatever is left of the SDK's load, and is sent ``initialize`` at once
(``handshake.py``); while the SDK is not loaded yet, the rest of its first exchange up to the first call's
answer is plain JSON-RPC too (``firstcall.py``), and the SDK's session takes the pipes over after it. HTTP
and SSE use the SDK's transports (``transports.py`` opens each kind). A server's stderr goes to a log file (never to
pi-tui's stdout or stderr, so ``--mode json``/``rpc`` stay clean); ``/mcp logs NAME`` shows its tail.

Statuses: ``lazy`` (not started; starts on first use), ``starting``, ``connected``, ``failed`` (with the
reason and the last stderr lines), ``disabled``. A call that overruns the server's ``timeout`` fails, the
server is stopped and starts again on its next use; a server that exits mid-call fails the call the same
way.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import firstcall, handshake, listings, sdk, stdio, transports
from .config import ServerConfig
from .records import McpCallError, PromptInfo, ToolInfo, tokens_of
from .roots import RootsWatch

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
    from mcp_types import CallToolResult, InitializeResult, ListRootsResult

    from .oauth import StoredTokenAuth

__all__ = ["McpCallError", "PromptInfo", "ToolInfo", "Server", "ServerPool", "tokens_of"]

START_TIMEOUT = 30.0  # seconds for spawn + initialize + tools/list
LOG_TAIL = 20
_CONNECTION_CLOSED = -32000  # the JSON-RPC error code the SDK gives a request whose connection closed


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
        self._ready: asyncio.Future[ClientSession | None] | None = None
        # Before the SDK is imported: the plain first exchange (``firstcall``), the output schemas it listed
        # and the SDK session to come, once it takes the pipes over.
        self._plain: firstcall.Exchange | None = None
        self._output_schemas: dict[str, dict[str, Any] | None] = {}
        self._handed: asyncio.Future[ClientSession] | None = None
        # Whether a stdio server's first exchange is plain JSON-RPC: None when the SDK is not loaded yet (the
        # point: not to wait for its import), True or False always (to compare the two).
        self.plain_first: bool | None = None
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
                await self.start_listed()

        task = asyncio.get_running_loop().create_task(start(), name=f"mcp-start:{self.name}")
        self._retiring.add(task)  # held (and awaited on close) like a connection being retired

    async def ensure(self) -> ClientSession:
        """The live session, starting the server first when it is not connected."""
        await self.start_listed()
        return await self._sdk_session()

    async def start_listed(self) -> None:
        """Start the server when it is not connected; return once its tools are listed."""
        if not self.config.enabled:
            raise McpCallError(f'MCP server "{self.name}" is disabled (/mcp enable {self.name})')
        async with self._lock:
            live = self._session is not None or self._plain is not None
            if live and self._task is not None and not self._task.done():
                return
            await self._stop_task()
            await self._start()

    async def _sdk_session(self) -> ClientSession:
        """The SDK session, asking the plain first exchange to hand the pipes over when it still has them."""
        if self._session is not None:
            return self._session
        plain, handed = self._plain, self._handed
        if plain is None or handed is None:
            raise self._fail("disconnected")
        plain.wanted.set()
        try:
            return await asyncio.wait_for(asyncio.shield(handed), START_TIMEOUT)
        except TimeoutError:
            await self._stop_task()
            raise self._fail(f"did not answer within {START_TIMEOUT:.0f}s of starting") from None
        except Exception as exc:
            await self._stop_task()
            raise self._fail(f"failed to start: {_describe(exc)}") from None

    def _plain_first(self) -> bool:
        """Whether the first exchange runs in plain JSON-RPC: a stdio server, the SDK not loaded yet."""
        if self.config.transport != "stdio" or handshake.versions() is None or self.plain_first is False:
            return False
        return self.plain_first or not sdk.is_loaded(["stdio"])

    async def _start(self) -> ClientSession | None:
        self.status, self.reason = "starting", ""
        self._changed()
        ready: asyncio.Future[ClientSession | None] = asyncio.get_running_loop().create_future()
        self._ready = ready
        self._handed = asyncio.get_running_loop().create_future()
        self._handed.add_done_callback(lambda f: f.cancelled() or f.exception())  # read, should nobody wait
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
        if session is not None:  # None: the plain first exchange, the SDK session to come
            self._session = session
        self.status = "connected"
        self._changed()
        return session

    async def _run(self, ready: asyncio.Future[ClientSession | None], stop: asyncio.Event) -> None:
        handed = self._handed
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self._plain_first():
                    await self._run_plain(stack, ready, stop)
                else:
                    session, early = await self._open(stack)
                    init = await session.initialize() if early is None else early.adopt(session)
                    await self._list_everything(session, init, with_tools=True)
                    self._session = session
                    if handed is not None and not handed.done():
                        handed.set_result(session)
                    if not ready.done():
                        ready.set_result(session)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            if handed is not None and not handed.done():
                handed.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 — an exception group from anyio included
            error = exc if isinstance(exc, Exception) else McpCallError(str(exc))
            if handed is not None and not handed.done():
                handed.set_exception(error)
            if not ready.done():
                ready.set_exception(error)
            elif not stop.is_set():
                self._fail(f"disconnected: {_describe(exc)}")
            return
        if not stop.is_set() and self.status == "connected":
            self._fail("disconnected")

    async def _run_plain(self, stack: contextlib.AsyncExitStack, ready: asyncio.Future[ClientSession | None],
                         stop: asyncio.Event) -> None:  # fmt: skip
        """Start the server and list its tools in plain JSON-RPC (``firstcall``), be ready for the first call,
        then hand the pipes over to the SDK session once it is wanted. Anything out of the ordinary in the
        handshake or the listing hands over at once, and the SDK's session does it all as before."""
        known = handshake.versions()
        assert known is not None
        process = await self._spawn(stack)
        exchange = asyncio.ensure_future(handshake.start(process, known))
        stack.callback(exchange.cancel)
        early = await exchange
        tools: list[firstcall.PlainTool] | None = None
        rest = early.rest
        if firstcall.plain_initialize(early.answer, known.accepted) is not None:
            plain = firstcall.Exchange(process, early.rest, self._roots_result(), self.roots.note_asked,
                                       self.roots.note_answered, self._garbage)  # fmt: skip
            plain.start()
            listing = asyncio.ensure_future(plain.list_tools())
            settling = asyncio.ensure_future(self.roots.settled(lambda: plain.request("ping"), listing))
            try:
                tools = await listing
                await settling
            finally:
                settling.cancel()
            if tools is not None:
                self.tools = [ToolInfo(self.name, name, text, schema) for name, text, schema, _ in tools]
                self._output_schemas = {name: output for name, _, _, output in tools}
                if any(output is not None for *_, output in tools):
                    sdk.prefetch()  # jsonschema, for the first call's check of structured content
                self._plain = plain
                ready.set_result(None)
                stopping, wanted = (
                    asyncio.ensure_future(stop.wait()),
                    asyncio.ensure_future(plain.wanted.wait()),
                )
                try:
                    await asyncio.wait([stopping, wanted], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stopping.cancel()
                    wanted.cancel()
                if stop.is_set():
                    return
            rest = await plain.handover()
            if stop.is_set():  # the first call gave the server up (it hung or exited)
                return
        session = await self._sdk_on(stack, process, rest)
        # No answer (a line that is not JSON, or none at all): the session's own initialize reports it as before.
        init = await session.initialize() if early.answer is None else early.adopt(session)
        await self._list_everything(session, init, with_tools=tools is None)
        self._session, self._plain = session, None
        if tools is not None:
            self._changed()  # the prompts and resources, listed only now
        if self._handed is not None and not self._handed.done():
            self._handed.set_result(session)
        if not ready.done():
            ready.set_result(session)

    def _roots_result(self) -> dict[str, Any]:
        """The ``roots/list`` result as the SDK session writes the one ``_list_roots`` gives."""
        return {"roots": [{"uri": self.root.resolve().as_uri(), "name": self.root.name}]}

    async def _list_everything(
        self, session: ClientSession, init: InitializeResult, with_tools: bool
    ) -> None:
        """The listings (tools unless known already, prompts and resources if offered) and the roots settled."""
        # The listings at once (one round trip, not three: they are on the way to a first call).
        async with asyncio.TaskGroup() as group:
            tools = group.create_task(listings.list_tools(session, self.name)) if with_tools else None
            prompts = (group.create_task(listings.list_prompts(session, self.name))
                       if init.capabilities.prompts is not None else None)  # fmt: skip
            resources = (group.create_task(listings.list_resources(session))
                         if init.capabilities.resources is not None else None)  # fmt: skip
            # The roots asked for during the handshake, answered and settled meanwhile.
            listed = asyncio.gather(*(t for t in (tools, prompts, resources) if t is not None),
                                    return_exceptions=True)  # fmt: skip
            if with_tools:
                group.create_task(self.roots.settled(session.send_ping, listed))
        if tools is not None:
            self.tools = tools.result()
        if prompts is not None:
            self.prompts = prompts.result()
        if resources is not None:
            self.resources = resources.result()

    async def _open(self, stack: contextlib.AsyncExitStack) -> tuple[ClientSession, handshake.Early | None]:
        """The session, entered on ``stack``, and for a stdio server the ``initialize`` exchange made before the
        SDK was loaded (``handshake``), if there is one to adopt instead of calling ``initialize()``."""
        cfg = self.config
        early: handshake.Early | None = None
        if cfg.transport == "stdio":
            # Spawned first: the server starts while the rest of the SDK import (if any) finishes.
            process = await self._spawn(stack)
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
            session = await self._sdk_on(stack, process, early.rest if early is not None else b"")
            return session, early if early and early.answer else None
        sdk.prefetch_when_loaded([cfg.transport])
        await sdk.loaded([cfg.transport])
        streams = await transports.http_streams(stack, cfg, self._oauth())
        return await self._session_on(stack, streams), None

    async def _spawn(self, stack: contextlib.AsyncExitStack) -> asyncio.subprocess.Process:
        """The stdio server's process, its stderr to the log, stopped when ``stack`` closes."""
        return await transports.spawn_logged(stack, self.config, self.root, self.log_path)

    async def _sdk_on(self, stack: contextlib.AsyncExitStack, process: asyncio.subprocess.Process,
                      already_read: bytes) -> ClientSession:  # fmt: skip
        """An SDK session over ``process``'s pipes (loading the SDK first), ``already_read`` read first."""
        sdk.prefetch_when_loaded(["stdio"])
        await sdk.loaded(["stdio"])
        streams = await stack.enter_async_context(
            stdio.connect(process, self._garbage, self.roots.received, self.roots.sent, already_read)
        )
        return await self._session_on(stack, streams)

    async def _session_on(self, stack: contextlib.AsyncExitStack, streams: TransportStreams) -> ClientSession:
        return await transports.session_on(stack, streams, self._on_message, self._list_roots)

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

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        """The text of prompt ``name`` filled with ``arguments`` (its messages' text, one after another)."""
        session = await self.ensure()
        try:
            result = await asyncio.wait_for(session.get_prompt(name, arguments), self.config.timeout)
        except Exception as exc:
            raise McpCallError(f'MCP server "{self.name}": prompt {name} failed: {_describe(exc)}') from None
        return listings.prompt_text(result)

    async def refresh_tools(self) -> None:
        """List the tools again if connected (a tool asked for by name may have appeared since)."""
        session = self._session
        if session is not None:
            with contextlib.suppress(Exception):
                self.tools = await listings.list_tools(session, self.name)

    async def read_resource(self, uri: str) -> str:
        """The text of resource ``uri`` (binary parts named, not decoded)."""
        session = await self.ensure()
        try:
            result = await asyncio.wait_for(session.read_resource(uri), self.config.timeout)
        except Exception as exc:
            raise McpCallError(f'MCP server "{self.name}": reading {uri} failed: {_describe(exc)}') from None
        return listings.resource_text(result)

    async def _on_message(self, message: IncomingMessage) -> None:
        from mcp_types import ToolListChangedNotification

        # Server notifications: a changed tool list is fetched again (the proxy's schema stays the same).
        # Everything else (an exception: a stdout line that is not JSON-RPC) is skipped.
        if isinstance(message, ToolListChangedNotification) and self._session is not None:
            session = self._session
            with contextlib.suppress(Exception):
                self.tools = await listings.list_tools(session, self.name)
                self._changed()

    async def _list_roots(self, context: ClientRequestContext) -> ListRootsResult:
        from mcp_types import ListRootsResult, Root
        from pydantic import FileUrl

        return ListRootsResult(roots=[Root(uri=FileUrl(self.root.resolve().as_uri()), name=self.root.name)])

    async def call(self, tool: str, arguments: dict[str, Any],
                   on_progress: Callable[[float, float | None, str | None], None] | None = None,
                   ) -> CallToolResult | dict[str, Any]:  # fmt: skip
        """Call ``tool``; a hung server times out after the server's ``timeout`` and is restarted next time.

        The result: the SDK's, or for the first call of a stdio server made before the SDK is loaded, the
        plain JSON result, checked (``firstcall.plain_call_result`` holds; structured content against the
        tool's output schema as the SDK checks it) — ``proxy.plain_result_text`` converts it.
        """
        await self.start_listed()
        plain = self._plain
        if plain is not None and not plain.called:
            return await self._plain_call(plain, tool, arguments, on_progress)
        session = await self._sdk_session()
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

    async def _plain_call(self, plain: firstcall.Exchange, tool: str, arguments: dict[str, Any],
                          on_progress: firstcall.Progress | None) -> CallToolResult | dict[str, Any]:  # fmt: skip
        """The first call, over the plain first exchange; the SDK session takes the pipes over after it."""
        plain.called = True
        self.calls += 1

        def progress(done: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(done, total, message)

        try:
            call = plain.request("tools/call", {"name": tool, "arguments": arguments}, progress)
            result = await asyncio.wait_for(call, self.config.timeout)
        except TimeoutError:
            error = self._fail(
                f"did not answer {tool} within {self.config.timeout:g}s; it is restarted on next use"
            )
            self._retire()
            raise error from None
        except (firstcall.Closed, firstcall.RpcError) as exc:
            if isinstance(exc, firstcall.Closed) or exc.code == _CONNECTION_CLOSED:
                error = self._fail(f"exited during the call to {tool}")
                self._retire()
                raise error from None
            plain.wanted.set()
            raise McpCallError(f'MCP server "{self.name}": {tool} failed: {_describe(exc)}') from None
        plain.wanted.set()  # the SDK loads now, after the call, and takes the next ones
        if not firstcall.plain_call_result(result) or tool not in self._output_schemas:
            return await self._checked_by_sdk(tool, result)
        schema = self._output_schemas[tool]
        if schema is not None and result.get("isError") is not True:
            try:
                firstcall.check_structured(tool, schema, result)
            except RuntimeError as exc:
                raise McpCallError(f'MCP server "{self.name}": {tool} failed: {_describe(exc)}') from None
        return result

    async def _checked_by_sdk(self, tool: str, raw: dict[str, Any]) -> CallToolResult:
        """A first call's result that is not of the plain shape, checked by the SDK's models and session."""
        session = await self._sdk_session()
        from mcp_types import CallToolResult

        try:
            result = CallToolResult.model_validate(raw, by_name=False)
            if not result.is_error:
                await session.validate_tool_result(tool, result)
        except Exception as exc:
            raise McpCallError(f'MCP server "{self.name}": {tool} failed: {_describe(exc)}') from None
        return result

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
        self._task, self._stop, self._session, self._plain = None, None, None, None
        if task is not None:
            self._retiring.add(asyncio.get_running_loop().create_task(_end(task, stop)))

    async def _stop_task(self) -> None:
        task, stop, ready = self._task, self._stop, self._ready
        self._task, self._stop, self._session, self._plain = None, None, None, None
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
