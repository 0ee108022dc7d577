"""``terminal.showTerminalProgress``: the terminal's own busy indicator (OSC 9;4) while the agent works.

As pi 0.87.1 does it: with the setting on, the start of each turn and of a compaction writes the
indeterminate-progress sequence (``ESC ] 9 ; 4 ; 3 BEL``), written again every second while it lasts
(some terminals drop an indicator nobody refreshes); the end of the run, of a compaction and leaving
the app write the clearing sequence (``ESC ] 9 ; 4 ; 0 BEL``). Terminals that know the sequence
(Windows Terminal, Ghostty, ConEmu, recent WezTerm and iTerm2) show it in the tab or title bar; others
ignore it. The setting is read at each of those moments, so `/settings` changes it for the next one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.timer import Timer

    from pi_tui.resources.settings import SettingsManager

__all__ = ["KEEPALIVE_SECONDS", "PROGRESS_ACTIVE", "PROGRESS_CLEAR", "TerminalProgress"]

PROGRESS_ACTIVE = "\x1b]9;4;3\x07"
"""OSC 9;4 state 3: an indeterminate progress indicator."""
PROGRESS_CLEAR = "\x1b]9;4;0\x07"
"""OSC 9;4 state 0: no indicator."""
KEEPALIVE_SECONDS = 1.0


class SetInterval(Protocol):
    """The app's ``set_interval`` (a repeating timer)."""

    def __call__(
        self, interval: float, callback: Callable[[], object], *, name: str | None = None, repeat: int = 0
    ) -> Timer: ...


class TerminalProgress:
    """The indicator of one app: `show` on a turn's or a compaction's start, `hide` at its end."""

    def __init__(
        self,
        settings: Callable[[], SettingsManager | None],
        write: Callable[[str], None],
        set_interval: SetInterval,
    ) -> None:
        self._settings = settings
        self._write = write
        self._set_interval = set_interval
        self._keepalive: Timer | None = None

    @property
    def active(self) -> bool:
        """Whether the indicator is up (being refreshed)."""
        return self._keepalive is not None

    def _enabled(self) -> bool:
        settings = self._settings()
        return settings is not None and settings.terminal.show_terminal_progress

    def show(self) -> None:
        """Put the indicator up (when the setting is on) and keep it up until `hide`."""
        if not self._enabled():
            return
        self._write(PROGRESS_ACTIVE)
        if self._keepalive is None:
            self._keepalive = self._set_interval(KEEPALIVE_SECONDS, self._refresh, name="terminal-progress")

    def _refresh(self) -> None:
        self._write(PROGRESS_ACTIVE)

    def hide(self) -> None:
        """Take the indicator down: when the setting is on, or one is still up from before it was
        switched off (pi would leave that one refreshing)."""
        was_up = self._keepalive is not None
        if self._keepalive is not None:
            self._keepalive.stop()
            self._keepalive = None
        if was_up or self._enabled():
            self._write(PROGRESS_CLEAR)
