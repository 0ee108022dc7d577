"""A watchdog that kills the tools' process groups when pi-tui dies, even by SIGKILL.

A command the ``bash`` tool runs gets its own session and process group (so one signal reaches all it
started). If pi-tui is killed outright, nobody is left to send that signal and the group keeps running,
reparented to init. So, once per pi-tui process, a tiny ``sh`` loop is started that reads ``+PGID`` /
``-PGID`` lines from a pipe whose only writer is pi-tui. When pi-tui exits in any way, the kernel closes
the pipe, the loop reads end-of-file and SIGKILLs every group still registered. It costs one idle ``sh``
(about a megabyte) and no polling.

The loop runs detached (its own session, not our child), so it never becomes a zombie of ours and
terminal signals meant for pi-tui do not reach it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading

__all__ = ["ensure_started", "register_group", "unregister_group"]

log = logging.getLogger(__name__)

# POSIX sh: keep the registered groups in a space-separated list; at end of input, kill them all.
_SCRIPT = r"""
trap '' INT HUP
groups=' '
while IFS= read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) id=${line#-}
        case $groups in *" $id "*) groups="${groups%% $id *} ${groups#* $id }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
"""

_lock = threading.Lock()
_write_fd = -1
_owner_pid = -1


def _start() -> int:
    """Start the watchdog; the write end of its pipe (or -1 when it cannot start)."""
    read_fd, write_fd = os.pipe()  # non-inheritable: no command we run keeps the pipe open
    try:
        # The starter sh puts the loop in the background and exits at once, so the loop is not our
        # child. A background job's stdin would be /dev/null, hence the detour through fd 3.
        subprocess.run(
            ["/bin/sh", "-c", f"exec 3<&0\n(\n{_SCRIPT}\n) <&3 3<&- >/dev/null 2>&1 &"],
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            check=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("tool watchdog not started: %s", exc)
        os.close(write_fd)
        return -1
    finally:
        os.close(read_fd)
    return write_fd


def ensure_started() -> None:
    """Start the watchdog now (call it before spawning, so registering is one quick write)."""
    global _write_fd, _owner_pid
    with _lock:
        if _owner_pid != os.getpid():  # first use, or a forked child: start our own
            _write_fd, _owner_pid = _start(), os.getpid()


def _send(line: str) -> None:
    global _owner_pid
    ensure_started()
    with _lock:
        if _write_fd < 0:
            return
        try:
            os.write(_write_fd, line.encode())
        except OSError as exc:  # the watchdog was killed: start another one next time
            log.warning("tool watchdog gone: %s", exc)
            with contextlib.suppress(OSError):
                os.close(_write_fd)
            _owner_pid = -1


def register_group(pgid: int) -> None:
    """Kill process group ``pgid`` if pi-tui dies before `unregister_group` is called for it."""
    _send(f"+{pgid}\n")


def unregister_group(pgid: int) -> None:
    """The group ended (or was killed) normally: forget it, so a reused id is never killed."""
    _send(f"-{pgid}\n")
