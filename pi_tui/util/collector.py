"""Holding Python's cyclic garbage collector off while a block builds many objects that stay alive.

Converting a long history to a provider's wire form makes several objects per message (lists, the
cached JSON, the bookkeeping that drops it with the message), and nearly all of them outlive the
request. With the collector on, each young collection moves them on, and full collections walk all of
them again as they pile up: at 100,000 messages that was more than the conversion itself. None of it
is cyclic garbage, so the collector has nothing to find there.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FREEZE_BUILT_HISTORY_ABOVE", "FullCollectionsDeferred", "collector_paused"]

FREEZE_BUILT_HISTORY_ABOVE = 50_000
"""``freeze_above`` for a block that builds a whole history (a resumed big session's first request,
its typed entries): ~10,000 messages at once are frozen, never the few new objects of a turn."""


_lock = threading.Lock()
_pausing = 0
"""Blocks inside `collector_paused` now, in every thread."""
_turned_off = False
"""Whether the first of those blocks turned the collector off (it was on): the last one turns it on."""


@contextmanager
def collector_paused(freeze_above: int | None = None) -> Iterator[None]:
    """No cyclic collection inside the block; the collector is as it was afterwards.

    Blocks may overlap across threads (the work ahead of the big screens and ``/context``'s cache
    projection run beside each other): the collector stays off until the last of them ends, and a
    collector someone else held off (start-up, a test) is left off.

    Args:
        freeze_above: when the block left more than this many new objects the collector tracks (a big
            history converted for the first time), freeze them (`gc.freeze`): they live as long as the
            session, and no later collection walks them again. A block that made fewer leaves them to
            the collector as usual.
    """
    global _pausing, _turned_off
    with _lock:
        if _pausing == 0:
            _turned_off = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _lock:
            _pausing -= 1
            if _turned_off:
                if freeze_above is not None and gc.get_count()[0] > freeze_above:
                    gc.freeze()
                if _pausing == 0:
                    gc.enable()


class FullCollectionsDeferred:
    """Full collections held off while the user is busy (a key held), made once things are quiet.

    Reading up a long session mounts and unmounts widgets with every key press; most of what it makes
    lives a few presses, long enough for young collections to move it to the oldest generation. A full
    collection then comes every ~20 presses and walks every widget on screen (10-30 ms), landing on
    whichever press is under way. `hold` raises the oldest generation's threshold (the young ones
    keep collecting as usual) so that held keys run without them; `release` puts the threshold back
    and collects once, when nobody is waiting. The raised threshold still bounds what piles up: a key
    held for many seconds gets a full collection now and then.
    """

    def __init__(self, held_threshold: int = 150) -> None:
        """
        Args:
            held_threshold: the oldest generation's threshold while held (Python's default is 10): the
                number of middle-generation collections between two full ones.
        """
        self.held_threshold = held_threshold
        self._saved: tuple[int, int, int] | None = None

    @property
    def holding(self) -> bool:
        """Whether full collections are being held off."""
        return self._saved is not None

    def hold(self) -> None:
        """Hold full collections off until `release` (nothing when the collector is off or held)."""
        if self._saved is not None or not gc.isenabled():
            return
        young, middle, oldest = self._saved = gc.get_threshold()
        gc.set_threshold(young, middle, max(oldest, self.held_threshold))

    def release(self) -> None:
        """Put the threshold back and collect everything once (nothing when not holding)."""
        saved = self._saved
        if saved is None:
            return
        self._saved = None
        gc.set_threshold(*saved)
        if gc.isenabled():
            gc.collect()
