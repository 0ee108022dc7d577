"""Settings the full-screen app applies to itself, at start-up and whenever `/settings` changes one.

``hideThinkingBlock`` shows every thinking block as one "Thinking..." line (blocks mounted later, from
history or while scrolling back, ask the app, so they follow it too); ``editorPaddingX`` adds columns left and right of the
editor's text; ``showHardwareCursor`` shows the terminal's own cursor, which Textual already moves to
the editor's cursor (for input methods and screen readers), instead of hiding it; ``terminal.hyperlinks``
(or ``PI_HYPERLINKS``, else detection) decides whether links in answers drawn from then on are OSC 8 links.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.resources.settings import SettingsManager

    from .app import PiApp

__all__ = [
    "EDITOR_BASE_PADDING",
    "apply_ui_settings",
    "set_hardware_cursor",
    "set_hidden_thinking_label",
    "set_hide_thinking",
]

EDITOR_BASE_PADDING = 1
"""Columns between the editor's border and its text with ``editorPaddingX`` 0 (pi draws no side border)."""

_SHOW_CURSOR = "\x1b[?25h"
_HIDE_CURSOR = "\x1b[?25l"


def set_hide_thinking(app: PiApp, hidden: bool) -> None:
    """Hide (or show) every thinking block, now and later (a hidden one is pi's "Thinking..." line);
    blocks a click hid or showed follow too."""
    from .blocks import ThinkingBlock

    app.hide_thinking = hidden
    for block in app.chat.query(ThinkingBlock):
        block.follow_chat()


def set_hidden_thinking_label(app: PiApp, label: str | None) -> None:
    """What hidden thinking blocks show from now on (None: pi's "Thinking..."), as an extension asks."""
    from .blocks import ThinkingBlock

    app.hidden_thinking_label = label or "Thinking..."
    for block in app.chat.query(ThinkingBlock):
        block.follow_label()


def set_hardware_cursor(app: PiApp, shown: bool) -> None:
    """Show or hide the terminal's cursor; a shown one is shown again after a suspend (Ctrl+Z, the
    external editor), since Textual hides it whenever it takes the terminal back."""
    if shown and not app.hardware_cursor:
        app.app_resume_signal.subscribe(app, lambda _resumed: _show_again(app))
    app.hardware_cursor = shown
    app.write_to_terminal(_SHOW_CURSOR if shown else _HIDE_CURSOR)


def _show_again(app: PiApp) -> None:
    if app.hardware_cursor:
        app.write_to_terminal(_SHOW_CURSOR)


def apply_ui_settings(app: PiApp, settings: SettingsManager | None) -> None:
    """Apply the session's settings (a `SettingsManager`, or None for the defaults) to ``app``."""
    if settings is None:
        return
    set_hide_thinking(app, bool(settings.hide_thinking_block))
    padding = EDITOR_BASE_PADDING + int(settings.editor_padding_x)
    app.editor.styles.padding = (0, padding)
    if bool(settings.show_hardware_cursor) != app.hardware_cursor:
        set_hardware_cursor(app, bool(settings.show_hardware_cursor))
    app.chat.set_scrollbar_mode(settings.fullscreen_scrollbar)
    app.chat.set_output_pad(settings.output_pad)
    from .terminal_caps import hyperlinks_enabled

    app.hyperlinks = hyperlinks_enabled(settings.terminal.hyperlinks)
    mermaid = settings.markdown.mermaid
    if mermaid != app.mermaid_mode:
        app.mermaid_mode = mermaid
        from .markdown_block import LabelledFence

        for fence in app.chat.query(LabelledFence):
            fence.show_diagram()
