"""The ``/mcp`` command: servers, status, tools, costs, logs; enable, disable, reconnect, direct/proxy.

Its output is one notification (in the TUI a message in the chat; in RPC an ``extension_ui_request``
notify), so the same words reach every mode.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pi_tui.extensions.api import CommandContext, ExtensionAPI

from . import proxy
from .config import ServerConfig
from .servers import Server, ServerPool

if TYPE_CHECKING:
    from . import McpState

USAGE = ("/mcp [NAME] · /mcp tools NAME · /mcp logs NAME · /mcp enable|disable NAME · /mcp reconnect NAME · "
         "/mcp direct|proxy NAME [now] · /mcp login|logout NAME · /mcp costs")  # fmt: skip
ACTIONS = ("tools", "logs", "enable", "disable", "reconnect", "direct", "proxy", "login", "logout", "costs")


def server_line(server: Server, direct: bool) -> str:
    """``name  status  N tools  mode`` (+ the failure reason)."""
    tools = (
        f"{len(server.tools)} tools" if server.tools or server.status == "connected" else "tools not listed"
    )
    where = server.config.url or " ".join([server.config.command or "", *server.config.args]).strip()
    line = f"{server.name}: {server.status}, {tools}, {'direct' if direct else 'proxy'} ({server.config.transport}: {where})"
    if server.config.url and server.status != "needs login":
        from .oauth_commands import login_state

        state = login_state(server)
        line += f", {state}" if state == "logged in" else ""
    if server.status == "needs login":
        return line + f"\n    {server.reason}"
    return line + (f"\n    {server.reason}" if server.reason and server.status == "failed" else "")


@dataclass(frozen=True)
class CostRow:
    """One server's costs: its tools direct (None until listed), what it returned, whether direct now."""

    server: str
    status: str
    tools: int
    direct_tokens: int | None
    returned_tokens: int
    calls: int
    direct: bool


def cost_rows(pool: ServerPool, direct_now: set[str]) -> list[CostRow]:
    """Per server: tokens its tools cost direct, what it returned so far, and whether it is direct now."""
    return [
        CostRow(
            s.name,
            s.status,
            len(s.tools),
            _direct_tokens(s),
            s.returned_tokens,
            s.calls,
            s.name in direct_now,
        )
        for s in pool.servers.values()
    ]


def _direct_tokens(server: Server) -> int | None:
    return sum(t.tokens for t in server.tools) if server.tools else None


def costs_text(pool: ServerPool, direct_now: set[str]) -> str:
    """The cost table: direct vs proxy per server, with the what-if of switching."""
    proxy_cost = proxy.proxy_tokens()
    lines = [
        f"MCP tool costs per request (estimates): the proxy tool {proxy_cost} tokens, whatever is connected"
    ]
    total_direct = 0
    for row in cost_rows(pool, direct_now):
        direct = row.direct_tokens
        if direct is None:
            lines.append(f"  {row.server}: tools not listed yet (start it: /mcp tools {row.server})")
            continue
        total_direct += direct if row.direct else 0
        mode = "direct" if row.direct else "proxy"
        switch = (f"switching to proxy saves {direct} tokens per request" if row.direct
                  else f"switching to direct adds {direct} tokens per request")  # fmt: skip
        lines.append(f"  {row.server} ({mode}): {row.tools} tools = {direct} tokens direct; "
                     f"returned {row.returned_tokens} tokens in {row.calls} calls; {switch}")  # fmt: skip
    lines.append(f"  now: {proxy_cost + total_direct} tokens of MCP tool definitions in each request")
    return "\n".join(lines)


def register_commands(pi: ExtensionAPI, state: McpState) -> None:
    """Register ``/mcp``."""

    async def handler(args: str, ctx: CommandContext) -> None:
        pool = state.pool
        if pool is None or not pool.servers:
            files = ", ".join(str(p) for p in state.config.files) or "no mcp.json found"
            errors = "\n".join(state.config.errors)
            ctx.ui.notify(f"No MCP servers configured ({files}).{chr(10) + errors if errors else ''}", "info")
            return
        words = args.split()
        action = words[0] if words and words[0] in ACTIONS else ""
        name = words[1] if action and len(words) > 1 else (words[0] if words and not action else "")
        if action == "costs":
            ctx.ui.notify(costs_text(pool, state.direct_now), "info")
            return
        if not action and not name:
            lines = [server_line(s, s.name in state.direct_now) for s in pool.servers.values()]
            ctx.ui.notify("MCP servers:\n" + "\n".join(lines) + "\n" + USAGE, "info")
            return
        server = pool.get(name)
        if server is None:
            ctx.ui.notify(f'No MCP server "{name}" (configured: {", ".join(pool.servers)})', "error")
            return
        await _act(action or "tools", server, state, ctx, now=words[2:] == ["now"])

    def complete(prefix: str) -> list[str] | None:
        # Nothing once a word is complete, so Enter runs the command instead of picking a candidate.
        names = list(state.pool.servers) if state.pool else []
        words = prefix.split(" ")
        if len(words) == 1:
            found = [a for a in (*ACTIONS, *names) if a.startswith(words[0])]
            return [] if words[0] in found else found
        if len(words) == 2 and words[0] in ACTIONS and words[1] not in names:
            return [f"{words[0]} {n}" for n in names if n.startswith(words[1])]
        if len(words) == 3 and words[0] in ("direct", "proxy") and words[1] in names and words[2] != "now":
            return [f"{words[0]} {words[1]} now"] if "now".startswith(words[2]) else []
        return []

    def context_lines() -> list[str]:
        if state.pool is None or not state.pool.servers:
            return ["No MCP servers configured."]
        return costs_text(state.pool, state.direct_now).splitlines()

    pi.register_context_section("MCP servers", context_lines)
    pi.register_command("mcp", handler=handler, description="MCP servers: status, tools, costs, logs",
                        get_argument_completions=complete)  # fmt: skip


async def _act(action: str, server: Server, state: McpState, ctx: CommandContext, now: bool = False) -> None:
    from .servers import McpCallError

    if action in ("login", "logout"):
        from .oauth_commands import log_in_command, log_out_command

        await (log_in_command if action == "login" else log_out_command)(server, ctx)
    elif action == "logs":
        tail = server.log_tail(40)
        ctx.ui.notify(f"{server.name} stderr ({server.log_path}):\n" + ("\n".join(tail) or "(empty)"), "info")
    elif action in ("enable", "disable"):
        enabled = action == "enable"
        server.config = _with(server, enabled=enabled)
        await server.stop()
        ctx.ui.notify(f"MCP server {server.name}: {server.status} ({_persist(server, enabled, ctx)})", "info")
    elif action == "reconnect":
        await server.stop()
        try:
            await server.ensure()
        except McpCallError as exc:
            ctx.ui.notify(str(exc), "error")
            return
        ctx.ui.notify(f"MCP server {server.name}: connected, {len(server.tools)} tools", "info")
    elif action in ("direct", "proxy"):
        current = "direct" if server.name in state.direct_now else "proxy"
        if current != action and now and state.switch_now is not None:
            try:
                reason = await state.switch_now(server, action == "direct")
            except McpCallError as exc:
                ctx.ui.notify(str(exc), "error")
                return
            ctx.ui.notify(f"{reason}. The cached prefix is re-billed once; /context lists it.", "warning")
            return
        state.direct_next[server.name] = action == "direct"
        note = ("unchanged" if current == action
                else f"from the next session (/new): the tool list is part of the cached prefix; "
                     f"/mcp {action} {server.name} now switches at once and re-bills the cache")  # fmt: skip
        ctx.ui.notify(f"MCP server {server.name}: {action} {note}", "info")
    else:
        try:
            await server.ensure()
        except McpCallError as exc:
            ctx.ui.notify(str(exc), "error")
            return
        lines = [f"  {t.name} ({t.tokens} tokens): {t.description.strip().splitlines()[0] if t.description.strip() else ''}"
                 for t in server.tools]  # fmt: skip
        ctx.ui.notify(f"{server_line(server, server.name in state.direct_now)}\n" + "\n".join(lines), "info")


def _persist(server: Server, enabled: bool, ctx: CommandContext) -> str:
    """Write the flag back into the file the server came from; the words saying where it holds."""
    from .config import ConfigError, project_config_paths, save_enabled

    source = server.config.source
    if source in project_config_paths(ctx.cwd) and not ctx.is_project_trusted():
        return "until pi-tui restarts: the project is not trusted, its files are left alone"
    try:
        save_enabled(source, server.name, enabled)
    except ConfigError as exc:
        return f"until pi-tui restarts: {exc}"
    return f"saved in {source}"


def _with(server: Server, enabled: bool) -> ServerConfig:
    return replace(server.config, enabled=enabled)
