"""Opening a login page in the user's browser, where there is a desktop to open it on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

__all__ = ["open_in_browser"]


def open_in_browser(url: str) -> bool:
    """Open ``url`` with the desktop's opener (never a terminal browser, which would take over the
    screen); False where there is no desktop (a remote shell) or no opener."""
    if sys.platform == "darwin":
        opener = shutil.which("open")
    elif os.name == "nt":
        opener = None
    elif os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        opener = shutil.which("xdg-open")
    else:
        opener = None
    if opener is None:
        return False
    try:
        subprocess.Popen(
            [opener, url],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True
