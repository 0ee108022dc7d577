"""MCP prompts as slash commands, and resources as ``@server:uri`` mentions.

Prompts as slash commands: ``/server:prompt args`` fills the prompt and sends it as your message.

A server's prompts become commands once it has started (a ``keep-alive`` server at start-up, a lazy one
after its first use or ``/mcp tools NAME``). Arguments: ``name=value`` pairs (quote values with spaces);
for a prompt with a single argument, the whole text after the command is that argument.

A message mentioning ``@server:uri`` (a configured server's name) gets that resource's text appended
before it is sent (the server starts if needed); the mention itself stays in the message. In the TUI
editor, ``@`` offers the resources of started servers; typing ``@server:`` starts a lazy server so its
resources are offered from the next keystroke.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Awaitable, Callable

from pi_tui.extensions.api import CommandContext, ExtensionAPI

from .servers import McpCallError, PromptInfo, ServerPool

__all__ = ["parse_arguments", "PromptCommands", "expand_mentions", "mention_completions"]

MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_.-]+):(\S+)")


async def expand_mentions(pool: ServerPool, text: str) -> tuple[str, list[str]]:
    """Append the resources ``@server:uri`` mentions name (servers that exist only) to ``text``.

    Returns the new text (unchanged when nothing is mentioned) and one line per resource that failed.
    """
    attached: list[str] = []
    errors: list[str] = []
    for match in MENTION.finditer(text):
        server = pool.get(match.group(1))
        if server is None:
            continue
        uri = match.group(2).rstrip(".,;:!?)")
        try:
            body = await server.read_resource(uri)
        except McpCallError as exc:
            errors.append(str(exc))
            continue
        attached.append(f'<resource server="{server.name}" uri="{uri}">\n{body}\n</resource>')
    return (text + "\n\n" + "\n\n".join(attached) if attached else text), errors


def mention_completions(pool: ServerPool | None, prefix: str) -> list[tuple[str, str]]:
    """``@`` completions: ``(server:uri, description)`` of started servers' resources matching ``prefix``.

    ``prefix`` is what follows the ``@``. Once it names a lazy server (``server:``), that server is
    started in the background: its resources are offered from the next keystroke on.
    """
    if pool is None:
        return []
    name, colon, rest = prefix.partition(":")
    if colon:
        server = pool.get(name)
        if server is None:
            return []
        if server.config.enabled and server.status == "lazy":
            with contextlib.suppress(RuntimeError):  # no event loop here: nothing to offer until it starts
                server.start_in_background()
        return [(f"{name}:{uri}", text) for uri, text in server.resources if rest in uri]
    return [(f"{s.name}:{uri}", text) for s in pool.servers.values() for uri, text in s.resources
            if prefix in f"{s.name}:{uri}"]  # fmt: skip


def parse_arguments(prompt: PromptInfo, text: str) -> dict[str, str]:
    """``a=1 b="two words"`` → ``{"a": "1", "b": "two words"}``; a one-argument prompt takes the whole text.

    Raises:
        ValueError: a required argument is missing, or the text does not split.
    """
    names = [name for name, _ in prompt.arguments]
    text = text.strip()
    if len(names) == 1 and not text.startswith(f"{names[0]}="):
        values = {names[0]: text} if text else {}
    else:
        values = {}
        for word in shlex.split(text):
            key, eq, value = word.partition("=")
            if not eq:
                raise ValueError(f'"{word}" is not name=value (arguments: {", ".join(names) or "none"})')
            values[key] = value
    missing = [name for name, required in prompt.arguments if required and not values.get(name)]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (arguments: {', '.join(names)})")
    return values


class PromptCommands:
    """Registers ``/server:prompt`` for every prompt a started server lists (once each)."""

    def __init__(self, pi: ExtensionAPI, pool: Callable[[], ServerPool | None]) -> None:
        self._pi = pi
        self._pool = pool
        self.registered: set[str] = set()

    def sync(self) -> None:
        """Register the commands of prompts not registered yet."""
        pool = self._pool()
        for prompt in [p for s in (pool.servers.values() if pool else ()) for p in s.prompts]:
            name = f"{prompt.server}:{prompt.name}"
            if name in self.registered:
                continue
            self.registered.add(name)
            args = " ".join(f"{n}=…" if required else f"[{n}=…]" for n, required in prompt.arguments)
            description = (prompt.description or f"MCP prompt of {prompt.server}") + (
                f" ({args})" if args else ""
            )
            self._pi.register_command(name, handler=self._handler(prompt), description=description)

    def _handler(self, prompt: PromptInfo) -> Callable[[str, CommandContext], Awaitable[None]]:
        async def run(args: str, ctx: CommandContext) -> None:
            pool = self._pool()
            server = pool.get(prompt.server) if pool else None
            if server is None:
                return
            try:
                text = await server.get_prompt(prompt.name, parse_arguments(prompt, args))
            except (ValueError, McpCallError) as exc:
                ctx.ui.notify(f"/{prompt.server}:{prompt.name}: {exc}", "error")
                return
            self._pi.send_user_message(text, deliver_as=None if ctx.is_idle() else "follow_up")

        return run
