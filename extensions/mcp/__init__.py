"""MCP servers for pi-tui, without the context bill.

Enable: ``pi-tui -e mcp``, or ``"extensions": ["bundled:mcp"]`` in settings. Off by default; when off,
nothing of it is imported, and when on with no server configured, the MCP SDK is never imported.

Servers are configured in ``~/.pi/agent/mcp.json`` and, once the project is trusted, the project's
``.mcp.json`` and ``.pi/mcp.json`` (pi-mcp-adapter's and Claude Code's format; see ``config.py``).

- **Proxy** (the default): one ``mcp`` tool whose definition never changes. The model lists, searches,
  describes and calls the servers' tools through it; servers start on first use or when a message names
  them (``lifecycle: "lazy"``), or with the session (``"keep-alive"``). Connecting a server mid-session leaves the cached prefix alone.
- **Direct** (``"direct": true`` on a server): the server's tools become first-class tools named
  ``<server>_<tool>``. They are added only when a session starts (start-up, ``/new``, ``/resume``,
  ``/fork``); ``/mcp direct NAME`` and ``/mcp proxy NAME`` take effect at the next session start;
  ``/mcp direct NAME now`` switches at once, declaring the cache invalidation with its reason (shown in
  the chat and in ``/context``), never silently.
- Resources: ``@server:uri`` in a message appends that resource's text; the TUI editor completes them
  after ``@`` (see ``prompts.py``).
- Prompts: a started server's prompts become commands ``/server:prompt name=value …`` (see ``prompts.py``).
- ``/mcp``: servers with status, tools and costs; ``/mcp tools NAME``, ``/mcp logs NAME``,
  ``/mcp enable|disable NAME``, ``/mcp reconnect NAME``, ``/mcp direct|proxy NAME``, ``/mcp login|logout NAME``
  (OAuth for remote servers: ``oauth_login.py``, ``oauth.py``, ``oauth_store.py``), ``/mcp costs``.
  In RPC mode the same commands are sent as prompts.

Tool calls are ordinary tool calls: ``tool_call`` handlers (``permission_gate``) see them first and
``tool_result`` handlers (``secret_redactor``) see what they return. A call runs at most the server's
``timeout`` seconds (default 60); a server that hangs or exits is restarted on its next use. Server
stderr goes to a log file, never to pi-tui's output.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from pi_tui.extensions.api import (
    AbortSignal,
    Event,
    ExtensionAPI,
    ExtensionContext,
    TextContent,
    ToolError,
    ToolResult,
    text_result,
)

from . import proxy, sdk
from .config import PROJECT_FILES, McpConfig, load_config, project_config_paths
from .prompts import PromptCommands, expand_mentions, mention_completions
from .servers import McpCallError, Server, ServerPool, ToolInfo, tokens_of

ToolUpdate = Callable[[ToolResult], None]  # a tool's on_update: shows a partial result while it runs


class McpState:
    """What the extension knows in one process: config, servers, which are exposed direct."""

    def __init__(self) -> None:
        self.config = McpConfig()
        self.pool: ServerPool | None = None
        self.direct_now: set[str] = set()  # servers whose tools are registered direct this session
        self.direct_next: dict[str, bool] = {}  # switches that apply at the next session start
        self.registered: set[str] = set()
        # Transports whose SDK parts are imported when the next provider request goes out (print/JSON).
        self.preload_on_request: list[str] = []
        # Switches a server between proxy and direct in the running session (set by `register`).
        self.switch_now: Callable[[Server, bool], Awaitable[str]] | None = None

    def direct_wanted(self, server: Server) -> bool:
        return self.direct_next.get(server.name, server.config.direct)


async def _call(state: McpState, tool: ToolInfo, args: object, on_update: ToolUpdate | None) -> ToolResult:
    pool = state.pool
    server = pool.get(tool.server) if pool else None
    if server is None:
        raise ToolError(f'MCP server "{tool.server}" is not configured')
    if isinstance(args, str):
        try:
            import json

            args = json.loads(args or "{}")
        except ValueError:
            raise ToolError("args must be a JSON object") from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ToolError("args must be an object")

    def progress(done: float, total: float | None, message: str | None) -> None:
        if on_update is not None:
            note = f"{done:g}/{total:g}" if total else f"{done:g}"
            on_update(text_result(f"{tool.server}/{tool.name}: {note} {message or ''}".rstrip()))

    try:
        result = await server.call(tool.name, dict(args), progress)
    except McpCallError as exc:
        raise ToolError(str(exc)) from None
    blocks, is_error = (
        proxy.plain_result_text(result) if isinstance(result, dict) else proxy.result_text(result)
    )
    texts = [b.text for b in blocks if isinstance(b, TextContent)]
    returned = sum(tokens_of(text) for text in texts)
    server.returned_tokens += returned
    details = {"server": tool.server, "tool": tool.name, "tokens": returned}
    if is_error:
        raise ToolError("\n".join(texts), details)
    return ToolResult(content=blocks, details=details)


async def _list_all(pool: ServerPool, only: str | None = None) -> list[str]:
    """Start every enabled server whose tools are not known yet (concurrently); the failures, one line each."""
    # A server that failed is tried again only when it is asked for by name.
    pending = [s for s in pool.servers.values() if s.config.enabled and not s.tools
               and (s.name == only or (only is None and s.status != "failed"))]  # fmt: skip
    results = await asyncio.gather(*(s.start_listed() for s in pending), return_exceptions=True)
    return [str(r) for r in results if isinstance(r, BaseException)]


async def _find(pool: ServerPool, ref: str, server: str | None) -> ToolInfo:
    """The tool ``ref`` names, starting the servers it may belong to when their tools are not known yet."""
    found = proxy.find_tool(pool, ref, server)
    if isinstance(found, ToolInfo):
        return found
    named = server or (ref.split("/", 1)[0] if "/" in ref else None)
    # Connected servers may have new tools (a list_changed notification still on its way): list again.
    await asyncio.gather(*(s.refresh_tools() for s in pool.servers.values() if named in (None, s.name)))
    failures = await _list_all(pool, named if named in pool.servers else None)
    found = proxy.find_tool(pool, ref, server)
    if isinstance(found, str):
        raise ToolError("\n".join([*failures, found]) if failures else found)
    return found


def named_servers(pool: ServerPool, text: str) -> list[Server]:
    """The enabled, not yet started servers ``text`` names as a word of its own (any case)."""
    return [s for s in pool.servers.values() if s.config.enabled and s.status == "lazy"
            and re.search(rf"(?<![\w-]){re.escape(s.name)}(?![\w-])", text, re.IGNORECASE)]  # fmt: skip


def direct_name(tool: ToolInfo) -> str:
    """A direct tool's name: ``<server>_<tool>``, in the characters every provider accepts."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{tool.server}_{tool.name}")[:64]


MISSING_SDK = "the MCP SDK is not installed: pip install 'pi-tui[mcp]'"


def register(pi: ExtensionAPI) -> None:
    if importlib.util.find_spec("mcp") is None:  # looks for the package without importing it
        raise ImportError(MISSING_SDK)
    state = McpState()
    # read only once the project is trusted: a project holding them is not trusted by default
    pi.register_trust_requiring_files(*PROJECT_FILES)

    async def execute(tool_call_id: str, params: dict[str, object], signal: AbortSignal,
                      on_update: ToolUpdate | None, ctx: ExtensionContext) -> ToolResult:  # fmt: skip
        pool = state.pool
        if pool is None or not pool.servers:
            return text_result(
                "No MCP servers are configured (~/.pi/agent/mcp.json or the project's .mcp.json)."
            )
        server = str(params["server"]) if params.get("server") else None
        if params.get("tool"):
            found = await _find(pool, str(params["tool"]), server)
            return await _call(state, found, params.get("args"), on_update)
        if params.get("describe"):
            return text_result(proxy.describe(await _find(pool, str(params["describe"]), server)))
        if "search" in params:
            failures = await _list_all(pool, server)
            text = proxy.search(pool, str(params.get("search") or ""), server)
            return text_result("\n".join([text, *failures]))
        return text_result(proxy.status_text(pool))

    pi.register_tool(name=proxy.NAME, label="MCP", description=proxy.DESCRIPTION, parameters=proxy.PARAMETERS,
                     execute=execute)  # fmt: skip

    def register_direct(server: Server) -> None:
        for tool in server.tools:
            name = direct_name(tool)
            if name in state.registered:
                continue

            async def run(tool_call_id: str, params: dict[str, object], signal: AbortSignal,
                          on_update: ToolUpdate | None, ctx: ExtensionContext,
                          _tool: ToolInfo = tool) -> ToolResult:  # fmt: skip
                return await _call(state, _tool, params, on_update)

            pi.register_tool(name=name, label=f"{tool.server}/{tool.name}", description=tool.description or name,
                             parameters=tool.input_schema, execute=run)  # fmt: skip
            state.registered.add(name)
        state.direct_now.add(server.name)

    async def switch_now(server: Server, direct: bool) -> str:
        """Switch ``server`` now, declaring the cache invalidation; the reason, as recorded."""
        pool = state.pool
        assert pool is not None
        if direct:
            await server.ensure()  # McpCallError when it cannot start: nothing changes then
            register_direct(server)
        names = {direct_name(t) for t in server.tools}
        active = [n for n in pi.get_active_tools() if n not in names]
        if direct:
            active += [direct_name(t) for t in server.tools]
        else:
            state.direct_now.discard(server.name)
        state.direct_next[server.name] = direct
        tokens = sum(t.tokens for t in server.tools)
        change = f"adds {tokens}" if direct else f"removes {tokens}"
        reason = (f"MCP server {server.name} switched to {'direct' if direct else 'proxy'} mid-session "
                  f"(/mcp): {change} tokens of tool definitions per request")  # fmt: skip
        pi.set_active_tools(active)
        pi.declare_cache_invalidation(reason, "tools")
        return reason

    state.switch_now = switch_now

    @pi.on("session_start")
    async def on_start(event: Event, ctx: ExtensionContext) -> None:
        if state.pool is None:
            state.config = load_config(ctx.cwd, ctx.is_project_trusted())
            for error in state.config.errors:
                ctx.ui.notify(f"MCP: {error}", "error")
            skipped = (
                [p for p in project_config_paths(ctx.cwd) if p.is_file()]
                if not ctx.is_project_trusted()
                else []
            )
            if skipped:
                names = ", ".join(str(p.relative_to(ctx.cwd)) for p in skipped)
                how = (  # what the user can do in this mode: the full-screen app has /trust
                    "use /trust to save a trust decision, then restart pi-tui"
                    if ctx.mode == "tui"
                    else "run with --approve to trust it for one run, or once with --trust-project to record it"
                )
                ctx.ui.notify(f"MCP: ignored {names}: the project is not trusted ({how}, to use its servers)", "warning")  # fmt: skip
            state.pool = ServerPool(
                state.config.servers, Path(ctx.cwd), on_change=lambda _server: prompts.sync()
            )
        pool = state.pool
        enabled = [s.config.transport for s in pool.servers.values() if s.config.enabled]
        if enabled and ctx.has_ui:
            # Import the SDK's client half (~0.2 s of CPU) in a daemon thread now, so a server's first use
            # does not wait for it: in the TUI this is after the first frame (the session is created
            # then). Nothing is imported when no server is configured or all are disabled.
            sdk.preload(enabled)
        elif any(transport != "stdio" for transport in enabled):
            # Print and JSON runs: once the first request goes out (see on_request), so that the import
            # overlaps the wait for the model rather than the run's own start-up. Not for stdio servers
            # alone: their first call runs without the SDK (``firstcall``), which loads right after it,
            # rather than alongside, competing with the server's start-up for the cores.
            state.preload_on_request = enabled
        # A session start is the cache-safe point for the direct tool set to change.
        for name, wanted in state.direct_next.items():
            if not wanted:
                state.direct_now.discard(name)
        active = [n for n in pi.get_active_tools() if not _is_direct_of(n, state, pool)]
        direct = [s for s in pool.servers.values() if s.config.enabled and state.direct_wanted(s)]
        if direct:
            failures = await _list_all(pool)
            for line in failures:
                ctx.ui.notify(line, "warning")
            for server in direct:
                register_direct(server)
            active += [direct_name(t) for s in direct for t in s.tools]
        pi.set_active_tools(active)
        for server in pool.servers.values():
            if server.config.enabled and server.config.keep_alive and server.status == "lazy":
                asyncio.get_running_loop().create_task(_start_quietly(server, ctx))

    @pi.on("before_provider_request")
    def on_request(event: Event) -> None:
        if state.preload_on_request:
            sdk.preload(state.preload_on_request)
            state.preload_on_request = []

    @pi.on("input")
    async def on_input(event: Event, ctx: ExtensionContext) -> dict[str, str] | None:
        if state.pool is None:
            return None
        # A message naming a lazy server is likely to be followed by a call to it: start it now, while
        # the model reads the request, instead of when the call arrives (not for built-in commands).
        if not event.text.startswith("/"):
            for server in named_servers(state.pool, event.text):
                server.start_in_background()
        if "@" not in event.text:
            return None
        text, errors = await expand_mentions(state.pool, event.text)
        for line in errors:
            ctx.ui.notify(line, "error")
        return {"action": "transform", "text": text} if text != event.text else None

    @pi.on("session_shutdown")
    async def on_shutdown(event: Event) -> None:
        if state.pool is not None:
            await state.pool.close()

    prompts = PromptCommands(pi, lambda: state.pool)
    pi.register_mention_completions(lambda prefix: mention_completions(state.pool, prefix))
    from .commands import register_commands

    register_commands(pi, state)


def _is_direct_of(tool_name: str, state: McpState, pool: ServerPool) -> bool:
    for server in pool.servers.values():
        if server.name in state.direct_now and not state.direct_wanted(server):
            if any(direct_name(t) == tool_name for t in server.tools):
                return True
    return False


async def _start_quietly(server: Server, ctx: ExtensionContext) -> None:
    try:
        await server.ensure()
    except McpCallError as exc:
        ctx.ui.notify(str(exc), "warning")
