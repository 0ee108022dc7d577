"""One writer per session file: an advisory ``flock`` on a sidecar ``<session>.jsonl.lock``.

The lock is held for as long as a `SessionManager` has the session open for writing. It is released by
the kernel when the process dies, so a lock file left behind by a crash never blocks anyone. ``flock``
locks belong to an open file description, so a second open in the *same* process is refused too.

The holder writes its pid into the lock file so the refusal can name it. The holder unlinks the file
when it releases the lock; a contender that locked a file which was unlinked meanwhile notices (the
path no longer leads to its inode) and tries again.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from pathlib import Path

from pi_tui.session.errors import SessionLockedError

try:  # fcntl is POSIX-only; elsewhere sessions simply are not locked
    import fcntl
except ImportError:  # pragma: no cover - exercised only on Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["SessionLock", "lock_path_for"]

log = logging.getLogger(__name__)

_RETRIES = 5


def lock_path_for(session_path: Path) -> Path:
    return session_path.with_name(session_path.name + ".lock")


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class SessionLock:
    """The write lock of one session file."""

    def __init__(self, session_path: Path) -> None:
        self.session_path = session_path
        self.path = lock_path_for(session_path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise `SessionLockedError` naming the holder's pid when it is known."""
        if self._fd is not None or fcntl is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(_RETRIES):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise SessionLockedError(self.session_path, _read_pid(self.path)) from None
                # A filesystem without flock (some network mounts): work unlocked rather than not at all.
                log.warning("cannot lock %s (%s); continuing without a lock", self.path, exc)
                return
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the previous holder unlinked it after we opened it: try the new file
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
            self._fd = fd
            return
        raise SessionLockedError(self.session_path, _read_pid(self.path))

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still locked, so nobody else unlinks a lock they hold
        with contextlib.suppress(OSError):
            os.close(fd)
