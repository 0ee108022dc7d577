"""Holding Python's cyclic garbage collector off while a block builds many objects that stay alive.

Converting a long history to a provider's wire form makes several objects per message (lists, the
cached JSON, the bookkeeping that drops it with the message), and nearly all of them outlive the
request. With the collector on, each young collection moves them on, and full collections walk all of
them again as they pile up: at 100,000 messages that was more than the conversion itself. None of it
is cyclic garbage, so the collector has nothing to find there.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused(freeze_above: int | None = None) -> Iterator[None]:
    """No cyclic collection inside the block; the collector is as it was afterwards.

    Args:
        freeze_above: when the block left more than this many new objects the collector tracks (a big
            history converted for the first time), freeze them (`gc.freeze`): they live as long as the
            session, and no later collection walks them again. A block that made fewer leaves them to
            the collector as usual.
    """
    if not gc.isenabled():  # a caller (start-up, a test) holds it off already: leave that to them
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze_above is not None and gc.get_count()[0] > freeze_above:
            gc.freeze()
        gc.enable()
