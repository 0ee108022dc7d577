"""An exclusive lock on a directory for a read-modify-write of a file in it.

A file that is replaced by a rename (see `pi_tui.util.atomic_file`) cannot carry the lock itself: the
next writer opens the new file and locks that one. Its directory stays, so an advisory ``flock`` on the
directory serialises the writers of every file in it, across processes, and leaves nothing behind (no
``.lock`` file in a project's folder). The kernel releases it when the process dies.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["directory_lock"]


@contextlib.contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``directory`` for the ``with`` block (waiting for another holder).

    Where ``flock`` is not available (not POSIX) nothing is locked: the writes are still atomic, only not
    serialised.

    Raises:
        OSError: the directory cannot be opened.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
