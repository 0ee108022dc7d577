"""The ``auth.json`` write lock, shared with pi.

pi guards ``auth.json`` with the npm package proper-lockfile: the lock is a *directory* named
``auth.json.lock`` next to the file (``mkdir`` is atomic, so exactly one process creates it). Its
holder touches the directory every few seconds; a lock whose modification time is older than the
stale limit (30 s for pi's asynchronous writers, 10 s for its synchronous readers) belongs to a
process that died and may be removed. Doing the same here makes pi and pi-tui exclude each other:
an OAuth refresh in one waits for the other's, re-reads the file and finds the fresh token.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["AuthLockError", "hold_lock", "lock_path_for"]

STALE_S = 30.0
"""A lock untouched for this long is abandoned (pi's asynchronous writers use the same limit)."""
HEARTBEAT_S = 4.0
"""How often a held lock is touched: below half of pi's shortest stale limit (10 s)."""
WAIT_S = 30.0
"""How long to wait for another process's lock before giving up."""


class AuthLockError(OSError):
    """The lock could not be taken (held too long by another process, or the disk refused)."""


def lock_path_for(path: Path) -> Path:
    """The lock directory guarding ``path`` (``auth.json`` → ``auth.json.lock``), as proper-lockfile names it."""
    return path.with_name(path.name + ".lock")


def _try_create(lock: Path) -> bool:
    try:
        os.mkdir(lock, 0o700)
    except FileExistsError:
        return False
    except OSError as exc:
        raise AuthLockError(exc.errno or errno.EIO, f"cannot create the lock {lock}: {exc.strerror}") from exc
    now = time.time()
    with contextlib.suppress(OSError):
        os.utime(lock, (now, now))
    return True


def _remove_if_stale(lock: Path, stale_s: float) -> None:
    try:
        modified = os.stat(lock).st_mtime
    except FileNotFoundError:
        return
    if modified < time.time() - stale_s:
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(lock)


def _acquire(lock: Path, wait_s: float, stale_s: float, cancel: threading.Event | None) -> None:
    deadline = time.monotonic() + wait_s
    attempt = 0
    while True:
        if _try_create(lock):
            return
        _remove_if_stale(lock, stale_s)
        if _try_create(lock):
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AuthLockError(
                errno.EBUSY,
                f"{lock} is held by another process (a pi or pi-tui writing {lock.name.removesuffix('.lock')}); "
                "try again, or remove that directory if no pi is running",
            )
        # Jittered exponential backoff as pi's writers use: 10 ms doubling, at most about a second.
        base = min(0.01 * 2**attempt, 1.0)
        attempt += 1
        delay = min(base * (1 + random.random()), remaining)
        if cancel is not None:
            if cancel.wait(delay):
                raise AuthLockError(errno.ECANCELED, "cancelled while waiting for the auth.json lock")
        else:
            time.sleep(delay)


class _Heartbeat(threading.Thread):
    """Touches the lock directory while it is held, so no other process takes it as abandoned."""

    def __init__(self, lock: Path) -> None:
        super().__init__(name="auth-lock-heartbeat", daemon=True)
        self.lock = lock
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(HEARTBEAT_S):
            now = time.time()
            try:
                os.utime(self.lock, (now, now))
            except OSError:
                return  # removed under us: nothing left to keep fresh


@contextlib.contextmanager
def hold_lock(
    path: Path,
    *,
    wait_s: float = WAIT_S,
    stale_s: float = STALE_S,
    cancel: threading.Event | None = None,
) -> Iterator[None]:
    """Hold the pi-compatible lock on ``path`` for the ``with`` block.

    Args:
        path: The guarded file (``auth.json``); its directory must exist.
        wait_s: How long to wait for another holder.
        stale_s: Age after which another holder's lock counts as abandoned.
        cancel: Set to stop waiting early.

    Raises:
        AuthLockError: the lock stayed held for ``wait_s``, waiting was cancelled, or it could not be made.
    """
    lock = lock_path_for(path)
    _acquire(lock, wait_s, stale_s, cancel)
    heartbeat = _Heartbeat(lock)
    heartbeat.start()
    try:
        yield
    finally:
        heartbeat.stopped.set()
        heartbeat.join()
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(lock)
