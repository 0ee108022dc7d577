"""Extension dialogs (``ctx.ui``) answered by line prompts.

``confirm`` is a ``[y/N]`` question, ``select`` a numbered list, ``input`` one line and ``editor`` lines up
to a lone ``.``. Dialogs are asked one at a time. Statuses show in the prompt's bottom toolbar; widgets,
which need a fixed place on screen, are not shown in line mode.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from pi_tui.extensions.ui import NotifyLevel, WidgetPlacement

from .render import EventPrinter
from .terminal import Terminal

__all__ = ["PlainUIBridge"]


class PlainUIBridge:
    """A `pi_tui.extensions.ui.UIBridge` for the line mode.

    Args:
        terminal: Where questions are asked.
        printer: Where notices are printed (keeps the output's line discipline).
    """

    def __init__(self, terminal: Terminal, printer: EventPrinter) -> None:
        self.terminal = terminal
        self.printer = printer
        self.statuses: dict[str, str] = {}
        self.editor_text: str | None = None
        self._lock = asyncio.Lock()

    async def _ask(self, prompt: str, timeout: float | None) -> str | None:
        async with self._lock:
            if not self.printer.at_line_start:
                self.printer.write("\n")
            answer = await self.terminal.ask(prompt, timeout)
            self.printer.at_line_start = True
            return answer

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        text = f"{title}: {message}" if message else title
        answer = await self._ask(f"{text} [y/N] ", timeout)
        return answer is not None and answer.strip().lower() in ("y", "yes")

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None:
        if not options:
            return None
        async with self._lock:
            self.printer.line(title)
            for number, option in enumerate(options, 1):
                self.printer.line(f"  {number}. {option}")
        answer = await self._ask(f"Choose 1-{len(options)} (Enter cancels): ", timeout)
        if answer is None or not answer.strip():
            return None
        choice = answer.strip()
        if choice.isdigit() and 1 <= int(choice) <= len(options):
            return options[int(choice) - 1]
        matches = [o for o in options if o.lower().startswith(choice.lower())]
        if len(matches) == 1:
            return matches[0]
        self.printer.line(f"No option {choice!r}; cancelled.")
        return None

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        hint = f" ({placeholder})" if placeholder else ""
        answer = await self._ask(f"{title}{hint}: ", timeout)
        return answer if answer else None

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        async with self._lock:
            self.printer.line(f"{title} (end with a line holding only '.'; an empty first line cancels)")
            if prefill:
                self.printer.line(prefill)
        lines: list[str] = [prefill] if prefill else []
        while True:
            line = await self._ask("", None)
            if line is None or line == ".":
                break
            if not line and not lines:
                return None
            lines.append(line)
        return "\n".join(lines) if lines else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        style = "\x1b[31m" if level == "error" else "\x1b[33m" if level == "warning" else "\x1b[2m"
        self.printer.line(message if level == "info" else f"{level.capitalize()}: {message}", style)

    def set_status(self, key: str, text: str | None) -> None:
        if text:
            self.statuses[key] = text
        else:
            self.statuses.pop(key, None)

    def toolbar(self) -> str | None:
        """The bottom toolbar's text: every extension status, or None when there is none."""
        return " · ".join(self.statuses[k] for k in sorted(self.statuses)) or None

    def set_widget(
        self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "aboveEditor"
    ) -> None:
        return None

    def set_title(self, title: str) -> None:
        if self.terminal.color and sys.stdout.isatty():
            self.terminal.write(f"\x1b]0;{title}\x07")

    def set_working_message(self, message: str | None = None) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        self.editor_text = text
