"""Images from the system clipboard (pi's Ctrl+V): read with ``wl-paste`` or ``xclip``, saved to a temp file.

pi inserts the saved file's *path* into the prompt, so the model reads the image with the ``read`` tool; we
do the same. Where neither tool is installed, or the clipboard holds no image, the caller says so. As in pi,
PNG, JPEG, WebP and GIF are taken first; an image offered only in another type (a BMP from a Windows or
older X program, a TIFF) is converted to PNG, and one that cannot be converted counts as no image.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = ["IMAGE_TYPES", "read_clipboard_image", "save_clipboard_image"]

IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}
"""The MIME types the ``read`` tool attaches as images, in pi's order of preference, and the file extension
each is saved with."""

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
    """The clipboard's image and its MIME type (one of `IMAGE_TYPES`), or None (no image, or no clipboard
    tool)."""
    for list_types, read in _readers():
        listed = _run(list_types)
        if listed is None:
            continue
        offered = listed.decode("utf-8", "replace").split()
        bases = {mime.split(";")[0].lower(): mime for mime in offered}
        wanted = [bases[mime] for mime in IMAGE_TYPES if mime in bases]
        wanted += [
            mime for base, mime in bases.items() if base.startswith("image/") and base not in IMAGE_TYPES
        ]
        for mime in wanted:
            data = _run([*read, mime])
            image = _supported(data, mime) if data else None
            if image is not None:
                return image
    return None


def _supported(data: bytes, mime: str) -> tuple[bytes, str] | None:
    """The image as one of `IMAGE_TYPES` (converted to PNG when it is of another type), or None."""
    from pi_tui.tools.image_process import ProcessedImage, process_image

    processed = process_image(data, mime, auto_resize=False)  # the read tool fits it into the model's limits
    return (processed.data, processed.mime_type) if isinstance(processed, ProcessedImage) else None


def save_clipboard_image(data: bytes, mime: str) -> Path:
    """Write the image to ``$TMP/pi-clipboard-<uuid>.<ext>`` (pi's name) and return the path."""
    path = Path(tempfile.gettempdir()) / f"pi-clipboard-{uuid.uuid4()}.{IMAGE_TYPES[mime]}"
    path.write_bytes(data)
    return path
