"""``ctx.ui``: how an extension talks to the user, answered by whichever mode is attached.

The runtime holds one `UIBridge`. The interactive mode answers dialogs in the TUI, the RPC mode turns
them into ``extension_ui_request`` lines, and print/json modes use `NullUIBridge`: dialogs return
None/False at once and the rest does nothing. Dialogs are coroutines (``await ctx.ui.confirm(...)``);
everything else is a plain call.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = ["UIBridge", "NullUIBridge", "UIProxy", "ExtensionUIState", "NotifyLevel", "WidgetPlacement"]

log = logging.getLogger(__name__)

NotifyLevel = Literal["info", "warning", "error"]
WidgetPlacement = Literal["aboveEditor", "belowEditor"]


@runtime_checkable
class UIBridge(Protocol):
    """What a mode implements to answer ``ctx.ui``.

    Dialogs return None (or False for ``confirm``) when the user cancels or ``timeout`` seconds pass.
    """

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None:
        """Let the user pick one of ``options``."""
        ...

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        """Ask a yes/no question."""
        ...

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        """Ask for one line of text."""
        ...

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        """Ask for multi-line text."""
        ...

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Show a short notice."""
        ...

    def set_status(self, key: str, text: str | None) -> None:
        """Set (or with None clear) the extension's status text in the footer."""
        ...

    def set_widget(
        self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "aboveEditor"
    ) -> None:
        """Show lines above or below the editor (None removes the widget)."""
        ...

    def set_title(self, title: str) -> None:
        """Set the terminal title."""
        ...

    def set_working_message(self, message: str | None = None) -> None:
        """Replace the "Working…" text while the agent runs (None restores it)."""
        ...

    def set_editor_text(self, text: str) -> None:
        """Put ``text`` in the user's editor."""
        ...

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """What a hidden thinking block shows instead of "Thinking..." (None restores it)."""
        ...


class NullUIBridge:
    """The bridge of modes without a user to ask (print, json): dialogs decline, the rest is a no-op."""

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return False

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        return None

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        log.info("extension notice (%s): %s", level, message)

    def set_status(self, key: str, text: str | None) -> None:
        return None

    def set_widget(
        self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "aboveEditor"
    ) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        return None


_NULL = NullUIBridge()


class ExtensionUIState:
    """The footer statuses and editor widgets extensions have put up, so they can be taken down.

    They belong to the extensions as loaded and to the session they were set in: ``/reload`` and a
    switch to another session (``/new``, ``/resume``, ``/fork``) clear them before ``session_start``
    lets the extensions set them again, as pi does. So does a label for hidden thinking.
    """

    def __init__(self) -> None:
        self.statuses: set[str] = set()
        self.widgets: set[str] = set()
        self.thinking_label = False
        """An extension set the label of hidden thinking."""

    def clear(self, bridge: object) -> None:
        """Remove every status and widget still shown through ``bridge``."""
        proxy = UIProxy(bridge)
        for key in sorted(self.statuses):
            proxy.set_status(key, None)
        for key in sorted(self.widgets):
            proxy.set_widget(key, None)
        if self.thinking_label:
            proxy.set_hidden_thinking_label(None)
        self.statuses.clear()
        self.widgets.clear()
        self.thinking_label = False


class UIProxy:
    """``ctx.ui``: the attached bridge, with `NullUIBridge` behaviour for whatever it does not implement
    (a mode may answer dialogs but have no status line, for instance). With ``state``, the statuses
    and widgets set through it are remembered there (see `ExtensionUIState`)."""

    def __init__(self, bridge: object, state: ExtensionUIState | None = None) -> None:
        self._bridge = bridge
        self._state = state

    def set_status(self, key: str, text: str | None) -> None:
        """Set (or with None clear) a status text in the footer."""
        if self._state is not None:
            (self._state.statuses.add if text else self._state.statuses.discard)(key)
        (self._part("set_status") or _NULL.set_status)(key, text)

    def set_widget(
        self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "aboveEditor"
    ) -> None:
        """Show lines above or below the editor (None removes the widget)."""
        if self._state is not None:
            (self._state.widgets.add if lines is not None else self._state.widgets.discard)(key)
        (self._part("set_widget") or _NULL.set_widget)(key, lines, placement)

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """What a hidden thinking block shows instead of "Thinking..." (None restores it)."""
        if self._state is not None:
            self._state.thinking_label = label is not None
        (self._part("set_hidden_thinking_label") or _NULL.set_hidden_thinking_label)(label)

    def _part(self, name: str) -> Any:
        """The bridge's ``name``, or None when the bridge lacks it."""
        # The bridge is whatever a front end attached (`AgentSession.attach_ui`), and it may implement
        # only part of `UIBridge` (docs/extensions.md): its members are looked up by name.
        return getattr(self._bridge, name, None)

    def __getattr__(self, name: str) -> object:
        found = self._part(name)
        if found is None:  # what the bridge lacks behaves as in NullUIBridge (or does not exist at all)
            return getattr(_NULL, name)
        if name in _DIALOGS and callable(found):  # dialog time pauses the hook budget
            from .dialog_clock import DIALOGS

            return DIALOGS.timed(found)
        return found


_DIALOGS = frozenset({"select", "confirm", "input", "editor"})
