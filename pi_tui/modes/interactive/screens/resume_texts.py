"""The conversation texts the session picker searches, as they arrive from the folders' text index.

pi's session search matches the whole conversation of every session (`pi_tui.session.search`). The
picker opens with what the listing read (names, first messages); the text index
(`pi_tui.session.text_index`) then brings the conversations in, from its file for unchanged sessions and
by reading the others, in a worker thread. Meanwhile and afterwards each keystroke filters at once with
what is quick to search: the first messages, and conversations that are short (all of them together
within `QUICK_BUDGET` characters). Long conversations are searched once the typing pauses, in a worker
thread, and their matches join the list when that search ends.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["QUICK_CHARS", "QUICK_BUDGET", "ConversationTexts"]

log = logging.getLogger(__name__)

QUICK_CHARS = 16_384
"""A conversation at most this long is searched on the keystroke itself."""

QUICK_BUDGET = 2_000_000
"""The most characters of conversation searched on the keystroke itself (a few milliseconds)."""

YIELD_S = 0.2
"""The reading of conversations waits while the picker had a key or a search within this long
(seconds): on a busy machine the keys get the process's share of the CPU."""


class ConversationTexts:
    """Conversation texts by session path, split into those searched on the keystroke (`quick`) and
    the rest (`every` holds both), and the progress of the index being read."""

    def __init__(self) -> None:
        self.every: dict[Path, str] = {}
        self.quick: dict[Path, str] = {}
        self.progress: tuple[int, int] | None = None
        """(sessions done, sessions to do) while the index is being read; None otherwise."""
        self._quick_total = 0
        self._stop = threading.Event()
        self._busy_until = 0.0

    @property
    def has_long(self) -> bool:
        """Whether some conversation is searched only after the keystroke."""
        return len(self.every) > len(self.quick)

    def add(self, found: dict[Path, str]) -> None:
        for path, text in found.items():
            old = self.quick.pop(path, None)
            if old is not None:
                self._quick_total -= len(old)
            self.every[path] = text
            if len(text) <= QUICK_CHARS and self._quick_total + len(text) <= QUICK_BUDGET:
                self.quick[path] = text
                self._quick_total += len(text)

    def busy(self) -> None:
        """The picker is answering a key: the reading waits until `YIELD_S` after the last one."""
        self._busy_until = time.monotonic() + YIELD_S

    def _pause(self, stop: threading.Event) -> None:
        while not stop.is_set() and (left := self._busy_until - time.monotonic()) > 0:
            stop.wait(left)

    def stop(self) -> None:
        """Ask the reading under way (if any) to end at its next file."""
        self._stop.set()

    async def read(self, paths: list[Path], arrived: Callable[[], None]) -> None:
        """Read the conversations of ``paths`` through their folders' indexes, in a worker thread.

        Texts are added as each piece of the reading ends (on the event loop), and ``arrived`` is then
        called; a reading started later, or `stop`, ends this one at its next file.
        """
        from pi_tui.session.text_index import index_texts

        from .prepare import run_in_daemon_thread

        self._stop.set()
        stop = self._stop = threading.Event()
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()  # the app's: a thread's callbacks would run in the thread's
        total = len(paths)
        self.progress = (0, total)
        arrived()  # the hint shows from now on

        def landed(found: dict[Path, str], done: int) -> None:
            if stop.is_set():
                return
            self.add(found)
            self.progress = (done, total) if done < total else None
            arrived()

        def deliver(found: dict[Path, str], done: int) -> None:
            try:
                loop.call_soon_threadsafe(landed, found, done, context=context)
            except RuntimeError:  # the app closed its loop meanwhile
                stop.set()

        try:
            await run_in_daemon_thread(
                lambda: index_texts(paths, deliver, stop.is_set, pause=lambda: self._pause(stop))
            )
        except Exception:  # only an aid: the search goes on with what arrived
            log.warning("Reading the sessions' conversations for the search failed", exc_info=True)
        if not stop.is_set() and self.progress is not None:
            self.progress = None
            arrived()
