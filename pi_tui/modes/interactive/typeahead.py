"""Keys typed while a command opens its screen reach that screen, as typed.

``/model⏎small``, typed fast: the command runs after Enter, and its screen is up only once its module is
loaded and its rows are made. The editor kept the focus meanwhile, so the keys went into it, hidden
behind the screen (the picker's search stayed empty, and the words turned up in the next prompt). pi
handles each key after the one before it, so they reach the selector. Here the editor holds the keys
typed from a command's Enter until the command has put its screen up (then they go to that screen, in
order) or has finished without one (then they go to the editor, as if typed then). The hold starts in
the editor's Enter itself: the keys typed after it may already be queued behind it.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events

__all__ = ["TypeAhead", "OPENS_A_SCREEN"]

OPENS_A_SCREEN = frozenset(
    {
        "context", "tree", "resume", "model", "scoped-models", "settings", "hotkeys", "changelog",
        "session", "fork", "summary", "login", "logout", "thinking",
    }
)  # fmt: skip
"""The built-in commands that open a screen or a picker (some only without an argument)."""


_MOST_WAITS = 20
"""Refreshes a new screen gets to take the focus before the held keys go to it regardless."""


class TypeAhead:
    """The keys typed while a command opens its screen, replayed once it is up (or the command is done)."""

    def __init__(
        self,
        post: Callable[[events.Key], object],
        after_refresh: Callable[[Callable[[], None]], object],
        focused_on_top: Callable[[], bool],
    ) -> None:
        """``post`` hands a key to the app as if typed (`App.post_message`); ``after_refresh`` runs a
        callback after the next refresh (`App.call_after_refresh`); ``focused_on_top`` says whether a
        widget of the topmost screen has the focus (a screen just pushed takes it in its mount)."""
        self._post = post
        self._after_refresh = after_refresh
        self._focused_on_top = focused_on_top
        self._keys: list[events.Key] | None = None
        self._waits = 0

    @property
    def holding(self) -> bool:
        return self._keys is not None

    def start_for(self, text: str) -> None:
        """``text`` is being sent: a command that may open a screen holds the keys typed from now on."""
        words = text[1:].split(maxsplit=1) if text.startswith("/") else []
        if words and words[0] in OPENS_A_SCREEN:
            self._keys = []

    def take(self, event: events.Key) -> bool:
        """Hold ``event`` (True) while a command opens its screen; False: handle it as usual."""
        if self._keys is None:
            return False
        self._keys.append(events.Key(event.key, event.character))
        return True

    def screen_changed(self) -> None:
        """A screen went up (or away): once it has taken the focus, it gets the held keys."""
        if self._keys is not None:
            self._waits = 0
            self._after_refresh(self._release_when_focused)

    def _release_when_focused(self) -> None:
        # A screen focuses its field in its mount, which may come a refresh or two after the push; one
        # that focuses nothing gets the keys after a few (its own bindings still see them).
        if self._keys is None:
            return
        if not self._focused_on_top() and self._waits < _MOST_WAITS:
            self._waits += 1
            self._after_refresh(self._release_when_focused)
            return
        self.release()

    def release(self) -> None:
        """Send the held keys on, in order, to whatever has the focus now (idempotent)."""
        keys, self._keys = self._keys, None
        for key in keys or ():
            self._post(key)
