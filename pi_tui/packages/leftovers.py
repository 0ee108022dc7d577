"""Cleaning up after a package install that was killed part way.

An install works beside its destination and moves the result into place at the end: pip installs into
``.<name>.pip-<random>/``, git clones into ``.<name>.clone-<random>/``, and a replaced folder is first
moved to ``.<name>.old-<pid>/`` (`pip_ops.replace_dir`). A process killed in the middle (``SIGKILL``, a
closed terminal, a power cut) leaves those folders behind, and one killed between the two moves of a
replacement leaves the package without its folder. `tidy` runs before each install of the same
destination and repairs both:

- an ``old-<pid>`` folder of a process that is gone is put back when the destination is missing (the
  install that moved it away never finished), otherwise removed;
- a ``pip-``/``clone-`` work folder untouched for `STALE_WORK_SECONDS` is removed (a live install
  writes into its folder all along; the limit leaves a slow one running in another process alone).

Only those exact name patterns next to the destination are considered; nothing else is ever touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

__all__ = ["STALE_WORK_SECONDS", "tidy"]

STALE_WORK_SECONDS = 3600.0
_WORK_KINDS = ("pip-", "clone-")


def tidy(dest: Path, *, now: float | None = None) -> list[str]:
    """Repair what killed installs of ``dest`` left next to it. Returns what was done, one line each.

    Nothing fails: a folder that cannot be checked or removed is left as it is.
    """
    done: list[str] = []
    moment = time.time() if now is None else now
    prefix = f".{dest.name}."
    try:
        entries = [e for e in os.scandir(dest.parent) if e.name.startswith(prefix)]
    except OSError:
        return done
    for entry in sorted(entries, key=lambda e: e.name):
        with contextlib.suppress(OSError):
            if not entry.is_dir(follow_symlinks=False):
                continue
            rest = entry.name[len(prefix) :]
            if rest.startswith("old-") and rest[4:].isdigit():
                if _alive(int(rest[4:])):
                    continue
                if not os.path.lexists(dest):
                    os.rename(entry.path, dest)
                    done.append(
                        f"put back {dest.name}, which an interrupted update had moved to {entry.name}"
                    )
                else:
                    shutil.rmtree(entry.path)
                    done.append(f"removed {entry.name}, left by an interrupted update")
            elif (
                rest.startswith(_WORK_KINDS)
                and moment - entry.stat(follow_symlinks=False).st_mtime > STALE_WORK_SECONDS
            ):
                shutil.rmtree(entry.path)
                done.append(f"removed {entry.name}, left by an interrupted install")
    return done


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: alive
    return True
