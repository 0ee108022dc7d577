"""``/mcp login NAME`` and ``/mcp logout NAME``: a remote server's OAuth login, from every mode.

In the TUI the browser opens (where there is a desktop) and a dialog takes a redirect URL pasted from a
browser on another machine; RPC clients get the URL as a notification and the same question as an
``input`` request; ``pi-tui -e mcp -p "/mcp login NAME"`` writes the URL and the outcome to stderr (print
mode writes its notices there) and waits for the browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .oauth_store import StoreError, TokenStore
from .servers import McpCallError, Server

if TYPE_CHECKING:
    from pi_tui.extensions.api import ExtensionContext, NotifyLevel

__all__ = ["log_in_command", "log_out_command", "login_state"]

LOGIN_TIMEOUT_S = 300.0


def _say(ctx: ExtensionContext, text: str, level: NotifyLevel) -> None:
    # Every mode shows it: print and JSON runs write notices to stderr (``[level] text``) themselves.
    ctx.ui.notify(text, level)


def login_state(server: Server) -> str:
    """``logged in`` / ``not logged in`` for a remote server that may use OAuth, else ""."""
    url = server.config.url
    if server.config.oauth is None or not url:
        return ""
    login = TokenStore().get(url)
    return "logged in" if login is not None and login.logged_in else "not logged in"


async def log_in_command(server: Server, ctx: ExtensionContext) -> None:
    """Log in to ``server`` (discovery, registration, browser, tokens), then reconnect it."""
    cfg = server.config
    if not cfg.url:
        _say(
            ctx, f"MCP server {server.name} runs locally ({cfg.command}); only remote servers log in", "error"
        )
        return
    if cfg.oauth is None:
        _say(ctx, f"MCP server {server.name} authenticates with its configured headers or bearer token; "
                      'OAuth is off for it (remove "auth"/"Authorization" from mcp.json to use OAuth)',
                      "error")  # fmt: skip
        return
    from .oauth_login import LoginError, log_in

    store = TokenStore()
    _say(ctx, f"MCP server {server.name}: logging in to {cfg.url}…", "info")
    try:
        await log_in(cfg, store, ctx.ui, ctx.mode, timeout=LOGIN_TIMEOUT_S)
    except LoginError as exc:
        _say(ctx, str(exc), "error")
        return
    await server.stop()
    try:
        await server.ensure()
    except McpCallError as exc:
        _say(ctx, f"MCP server {server.name}: logged in (saved in {store.path}), but connecting failed: {exc}",
                      "error")  # fmt: skip
        return
    _say(ctx, f"MCP server {server.name}: logged in (saved in {store.path}); connected, "
                  f"{len(server.tools)} tools", "info")  # fmt: skip


async def log_out_command(server: Server, ctx: ExtensionContext) -> None:
    """Forget ``server``'s login (tokens and client registration) and disconnect it."""
    url = server.config.url
    if not url:
        _say(ctx, f"MCP server {server.name} runs locally; it has no login", "error")
        return
    store = TokenStore()
    try:
        removed = store.remove(url)
    except StoreError as exc:
        _say(ctx, f"MCP server {server.name}: cannot log out: {exc}", "error")
        return
    await server.stop()
    if removed:
        _say(ctx, f"MCP server {server.name}: logged out (its tokens are removed from {store.path}; "
                      "the server itself is not told)", "info")  # fmt: skip
    else:
        _say(ctx, f"MCP server {server.name} was not logged in", "info")
