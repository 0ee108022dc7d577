"""When the warm-up may take the UI thread: not while the user is on the way to a screen or in one.

Right after a session shows, the app loads what the first answer needs (the provider module, the markdown
parser and lexer, in a thread: ~40 ms of the interpreter) and mounts sample markdown widgets off screen
(the first answer then does not pay Textual's first stylesheet work for them, ~0.2 s of the UI thread). A
command typed meanwhile (``/tree`` on a big session) would wait behind that work, and so would the keys of
a screen opened over the chat. `WarmUpTurn.wait` returns once none of this is happening (the loading
waits for the first three only: a prompt being typed needs it):

- no big screen is opening (`ScreenPreparation.wait_unheld`);
- the chat is the screen on top (a screen's keys must not wait for the mounting);
- the editor does not hold a slash command (the user is typing one: it goes first), and no command
  sent from it is still running (Enter empties the editor before the command's screen is up);
- no key came in the last `QUIET_SECONDS` (Enter on a command reaches its handler a little later).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

__all__ = ["QUIET_SECONDS", "WarmUpTurn"]

QUIET_SECONDS = 0.3
"""How long after the last key the warm-up may start mounting."""


class WarmUpTurn:
    """Tracks what the warm-up must give way to; the app calls `notice_key` and `notice_change`.

    Args:
        chat_on_top: Whether the chat's screen is the one on top.
        editor_text: The editor's text now.
    """

    def __init__(self, chat_on_top: Callable[[], bool], editor_text: Callable[[], str]) -> None:
        self._chat_on_top = chat_on_top
        self._editor_text = editor_text
        self._last_key = float("-inf")
        self._changed = asyncio.Event()
        self._commands = 0  # commands sent from the editor and still running

    def notice_key(self) -> None:
        """A key came in."""
        self._last_key = time.monotonic()
        self._changed.set()

    def keys_pending(self) -> float:
        """How many more seconds the user's keys count as still coming: `QUIET_SECONDS` after the
        last one (≤ 0: they paused). Safe to call from any thread."""
        return QUIET_SECONDS - (time.monotonic() - self._last_key)

    def notice_change(self) -> None:
        """The screen on top or the editor's text changed."""
        self._changed.set()

    def command_started(self) -> Callable[[], None]:
        """A command sent from the editor starts running; call the returned function once it is done
        (its screen, if any, is up by then)."""
        self._commands += 1
        finished = False

        def done() -> None:
            nonlocal finished
            if not finished:
                finished = True
                self._commands -= 1
                self._changed.set()

        return done

    @property
    def command_running(self) -> bool:
        """Whether a command sent from the editor is still running (see `command_started`)."""
        return bool(self._commands)

    def blocked(self) -> bool:
        """Whether the user is opening or using a screen, typing a command, or waiting for one."""
        return bool(self._commands) or not self._chat_on_top() or self._editor_text().lstrip().startswith("/")

    async def wait(self, unheld: Callable[[], Awaitable[None]], *, quiet: bool = True) -> None:
        """Return once the warm-up may mount (see the module); ``unheld`` returns once no screen is
        opening. Without ``quiet``, recent keys do not count (for work a prompt being typed needs)."""
        while True:
            await unheld()
            self._changed.clear()
            quiet_for = QUIET_SECONDS - (time.monotonic() - self._last_key) if quiet else 0.0
            if not self.blocked() and quiet_for <= 0:
                return
            try:
                # A blocked turn waits for a change; a recent key only for the rest of the quiet time.
                await asyncio.wait_for(self._changed.wait(), None if self.blocked() else quiet_for)
            except TimeoutError:
                pass
