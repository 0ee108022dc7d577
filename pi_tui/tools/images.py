"""Image detection, and the types resizing is described with.

Images are recognised by their magic bytes, never by extension: PNG, JPEG, GIF and WebP are the types
providers take; a BMP (`looks_like_bmp`) is converted to PNG. What happens to an image on its way into
the context (conversion, fitting into the model's limits, pi's notes) is `pi_tui.tools.image_process`;
an `ImageResizer` given to ``create_read_tool`` replaces its fitting step there.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "SUPPORTED_IMAGE_MIME_TYPES",
    "IMAGE_SNIFF_BYTES",
    "detect_image_mime_type",
    "looks_like_bmp",
    "ResizedImage",
    "ImageResizer",
    "format_dimension_note",
]

SUPPORTED_IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_SNIFF_BYTES = 30
"""Bytes read to tell an image by its start (a BMP header check needs 30)."""


def detect_image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP file from its first bytes, else ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_like_bmp(head: bytes) -> bool:
    """Whether the first bytes (at least 30) are a BMP header: pi's test, so the same files count as BMPs.

    The file and DIB header sizes must be consistent, one plane, and 1, 4, 8, 16, 24 or 32 bits a pixel.
    """
    if len(head) < 26 or not head.startswith(b"BM"):
        return False
    file_size, offset, dib_size = struct.unpack_from("<I4xII", head, 2)
    if file_size != 0 and file_size < 26:
        return False
    if offset < 14 + dib_size or (file_size != 0 and offset >= file_size):
        return False
    if dib_size == 12:
        planes, bits = struct.unpack_from("<HH", head, 22)
    elif 40 <= dib_size <= 124 and len(head) >= 30:
        planes, bits = struct.unpack_from("<HH", head, 26)
    else:
        return False
    return planes == 1 and bits in (1, 4, 8, 16, 24, 32)


@dataclass(slots=True)
class ResizedImage:
    """The outcome of fitting an image into the model's limits.

    Attributes:
        data: The (possibly re-encoded) image bytes.
        mime_type: Their MIME type (a resizer may convert, e.g. to JPEG).
        original_width: Width before resizing, in pixels.
        original_height: Height before resizing.
        width: Width sent to the model.
        height: Height sent to the model.
        was_resized: Whether the dimensions changed.
    """

    data: bytes
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool


class ImageResizer(Protocol):
    """Fits an image into 2000x2000 pixels and 4.5 MB (pi's limits); returns ``None`` if it cannot."""

    def __call__(self, data: bytes, mime_type: str) -> ResizedImage | None: ...


def format_dimension_note(image: ResizedImage) -> str | None:
    """pi's note telling the model how to map coordinates back, or ``None`` when not resized."""
    if not image.was_resized or image.width <= 0:
        return None
    scale = image.original_width / image.width
    return (
        f"[Image: original {image.original_width}x{image.original_height}, "
        f"displayed at {image.width}x{image.height}. "
        f"Multiply coordinates by {scale:.2f} to map to original image.]"
    )
