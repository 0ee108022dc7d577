"""Writing a whole byte string to a file descriptor: the one loop every writer of user data shares.

Kept apart from `pi_tui.util.atomic_file` so that the session store, which is on every run's start-up
path, can use it without importing what only the file-writing tools need.
"""

from __future__ import annotations

import os

__all__ = ["write_all"]


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, repeating after a short write.

    Raises:
        OSError: The system refused a write (disk full, file too large, no permission). The bytes
            written before it stay written: the caller decides whether to cut them off.
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
