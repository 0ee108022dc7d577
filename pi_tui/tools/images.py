"""Image detection for the read tool, and the seam where resizing plugs in.

Images are recognised by their magic bytes, never by extension. No image library ships with
pi-tui, so nothing is resized by default; a caller that has one passes an `ImageResizer` to
``create_read_tool`` and the read tool adds pi's dimension note when the image was scaled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "SUPPORTED_IMAGE_MIME_TYPES",
    "IMAGE_SNIFF_BYTES",
    "detect_image_mime_type",
    "ResizedImage",
    "ImageResizer",
    "format_dimension_note",
]

SUPPORTED_IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_SNIFF_BYTES = 12


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
