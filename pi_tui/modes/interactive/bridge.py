"""`TuiBridge`: extensions' ``ctx.ui`` answered by the full-screen app (dialogs, status, widgets)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from textual.screen import ModalScreen

from .dialogs import ConfirmDialog, EditorDialog, InputDialog, SelectDialog

if TYPE_CHECKING:
    from textual.app import App

    from .app import PiApp

__all__ = ["TuiBridge", "ask"]

T = TypeVar("T")
R = TypeVar("R")


async def ask(app: App[R], screen: ModalScreen[T], timeout: float | None = None) -> T | None:
    """Push a modal screen and wait for its answer; None when ``timeout`` seconds pass first."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[T | None] = loop.create_future()

    def done(value: T | None) -> None:
        if not answer.done():
            answer.set_result(value)

    app.push_screen(screen, done)
    try:
        return await asyncio.wait_for(asyncio.shield(answer), timeout)
    except TimeoutError:
        if screen.is_attached and app.screen is screen:
            app.pop_screen()
        return None
    except asyncio.CancelledError:  # the asker no longer needs the answer: the dialog goes too
        if screen.is_attached and app.screen is screen:
            app.pop_screen()
        raise


class TuiBridge:
    """Implements `pi_tui.extensions.ui.UIBridge` on top of `PiApp`."""

    def __init__(self, app: PiApp) -> None:
        self.app = app

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None:
        return await ask(self.app, SelectDialog(title, list(options)), timeout)

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return await ask(self.app, ConfirmDialog(title, message), timeout) is True

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        return await ask(self.app, InputDialog(title, placeholder), timeout)

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return await ask(self.app, EditorDialog(title, prefill))

    def notify(self, message: str, level: str = "info") -> None:
        self.app.chat_notice(
            message, "warning" if level == "warning" else "error" if level == "error" else "info"
        )

    def set_status(self, key: str, text: str | None) -> None:
        self.app.set_extension_status(key, text)

    def set_widget(self, key: str, lines: Sequence[str] | None, placement: str = "aboveEditor") -> None:
        self.app.set_extension_widget(key, list(lines) if lines is not None else None, placement)

    def set_title(self, title: str) -> None:
        self.app.title = title
        self.app.set_terminal_title(title)

    def set_working_message(self, message: str | None = None) -> None:
        self.app.working_message = message or "Working"

    def set_editor_text(self, text: str) -> None:
        self.app.set_editor_text(text)

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        from .ui_settings import set_hidden_thinking_label

        set_hidden_thinking_label(self.app, label)
