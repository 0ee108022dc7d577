"""Images from the system clipboard (pi's Ctrl+V): read with ``wl-paste`` or ``xclip``, saved to a temp file.

pi inserts the saved file's *path* into the prompt, so the model reads the image with the ``read`` tool; we
do the same. Where neither tool is installed, or the clipboard holds no image, the caller says so.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = ["IMAGE_TYPES", "read_clipboard_image", "save_clipboard_image"]

IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
"""The MIME types the ``read`` tool attaches as images, and the file extension each is saved with."""

_TIMEOUT = 2.0


def _run(argv: list[str]) -> bytes | None:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _readers() -> list[tuple[list[str], list[str]]]:
    """(list-types command, read command prefix) per clipboard tool, Wayland first as pi does."""
    readers = []
    if os.environ.get("WAYLAND_DISPLAY"):
        readers.append((["wl-paste", "--list-types"], ["wl-paste", "--no-newline", "--type"]))
    readers.append(
        (
            ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"],
            ["xclip", "-selection", "clipboard", "-o", "-t"],
        )
    )
    return readers


def read_clipboard_image() -> tuple[bytes, str] | None:
    """The clipboard's image and its MIME type, or None (no image, or no clipboard tool)."""
    for list_types, read in _readers():
        listed = _run(list_types)
        if listed is None:
            continue
        offered = listed.decode("utf-8", "replace").split()
        for mime in IMAGE_TYPES:
            if mime in offered:
                data = _run([*read, mime])
                if data:
                    return data, mime
    return None


def save_clipboard_image(data: bytes, mime: str) -> Path:
    """Write the image to ``$TMP/pi-clipboard-<uuid>.<ext>`` (pi's name) and return the path."""
    path = Path(tempfile.gettempdir()) / f"pi-clipboard-{uuid.uuid4()}.{IMAGE_TYPES[mime]}"
    path.write_bytes(data)
    return path
