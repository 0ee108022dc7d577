"""Checking the images attached to a prompt before they join the conversation.

A prompt's images come from RPC clients, extensions and pastes, base64 text with a declared type. A
provider refuses an image it cannot decode (Anthropic: 400 "Could not process image"), and because the
prompt stays in the history every later request would be refused too. As pi 0.87.1 does, data that is
not a PNG, JPEG, GIF or WebP image (told by its first bytes) is left out and a line in the prompt's text
says so; a declared type that does not match the bytes is replaced by the real one. A BMP is converted
to PNG (`pi_tui.tools.bmp`) with pi's note in the prompt's text, as pi converts it. No image library
ships with pi-tui, so nothing is resized.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence

from pi_tui.ai.types import ImageContent
from pi_tui.tools.images import (
    IMAGE_SNIFF_BYTES,
    SUPPORTED_IMAGE_MIME_TYPES,
    detect_image_mime_type,
    looks_like_bmp,
)

__all__ = ["IMAGE_NOT_CONVERTIBLE", "IMAGE_NOT_READABLE", "check_prompt_images"]

IMAGE_NOT_READABLE = "[Image omitted: could not be resized below the inline image size limit.]"
"""pi's words for an image of a supported type whose data does not decode as one."""
IMAGE_NOT_CONVERTIBLE = "[Image omitted: could not be converted to a supported inline image format.]"
"""pi's words for data of another type that could not be turned into a supported image."""

# base64 of the first IMAGE_SNIFF_BYTES bytes, rounded up to whole 4-character groups, and how far into
# the text to look for them (wrapped base64 has a line break every 76 characters)
_SNIFF_CHARS = -(-IMAGE_SNIFF_BYTES // 3) * 4
_SCAN_CHARS = 256
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]")


def _head(data: str) -> bytes:
    """The image's first bytes (line breaks and other characters outside base64 skipped, as decoders
    skip them); empty when ``data`` has no base64 to speak of."""
    chars = _NOT_BASE64.sub("", data[:_SCAN_CHARS])[:_SNIFF_CHARS]
    chars = chars[: len(chars) // 4 * 4]
    try:
        return base64.b64decode(chars)[:IMAGE_SNIFF_BYTES]
    except (binascii.Error, ValueError):
        return b""


def check_prompt_images(images: Sequence[ImageContent]) -> tuple[list[ImageContent], list[str]]:
    """The images a prompt may send, and one note per image left out (for the prompt's text).

    Args:
        images: the images attached to the prompt.

    Returns:
        The usable images, in order (with their real type), and pi's note for each one left out.
    """
    kept: list[ImageContent] = []
    notes: list[str] = []
    for image in images:
        head = _head(image.data)
        detected = detect_image_mime_type(head)
        if detected is None:
            declared = image.mime_type.split(";")[0].strip().lower().replace("image/jpg", "image/jpeg")
            if looks_like_bmp(head):
                converted, note = _bmp_as_png(image.data)
                if converted is not None:
                    kept.append(converted)
                notes.append(note)
                continue
            notes.append(
                IMAGE_NOT_READABLE if declared in SUPPORTED_IMAGE_MIME_TYPES else IMAGE_NOT_CONVERTIBLE
            )
            continue
        kept.append(
            image if image.mime_type == detected else ImageContent(data=image.data, mime_type=detected)
        )
    return kept, notes


def _bmp_as_png(data: str) -> tuple[ImageContent | None, str]:
    """A BMP prompt image as PNG and pi's note saying so, or ``None`` and pi's note that it was left out."""
    from pi_tui.tools.bmp import CONVERTED_NOTE, NOT_CONVERTED_NOTE, BmpError, bmp_to_png

    try:
        png = bmp_to_png(base64.b64decode(_NOT_BASE64.sub("", data)))
    except (BmpError, binascii.Error, ValueError):
        return None, NOT_CONVERTED_NOTE
    return ImageContent(data=base64.b64encode(png).decode("ascii"), mime_type="image/png"), CONVERTED_NOTE
