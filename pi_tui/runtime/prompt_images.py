"""The images attached to a prompt, processed before they join the conversation.

A prompt's images come from RPC clients, extensions and pastes, base64 text with a declared type. A
provider refuses an image it cannot decode or one over its size limit (Anthropic: 400 "Could not process
image"), and because the prompt stays in the history every later request would be refused too. As pi
0.87.1 does, each image goes through `pi_tui.tools.image_process.process_image`: a BMP or another type
Pillow decodes becomes PNG, an image over the model's limits is scaled down, and an image that cannot be
sent is left out. pi's notes (conversion, dimensions, "Image omitted") go at the end of the prompt's text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence

from pi_tui.ai.types import ImageContent
from pi_tui.tools.image_process import (
    DEFAULT_LIMITS,
    NOT_CONVERTIBLE,
    NOT_RESIZABLE,
    ProcessedImage,
    ResizeLimits,
    process_image,
)

__all__ = ["IMAGE_NOT_CONVERTIBLE", "IMAGE_NOT_READABLE", "check_prompt_images", "decode_base64"]

IMAGE_NOT_READABLE = NOT_RESIZABLE
"""pi's words for an image of a supported type whose data does not decode as one (or is too large)."""
IMAGE_NOT_CONVERTIBLE = NOT_CONVERTIBLE
"""pi's words for data of another type that could not be turned into a supported image."""

_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]")


def decode_base64(data: str) -> bytes:
    """``data`` decoded as leniently as providers (and Node) decode it: characters outside base64 (line
    breaks, padding) skipped, a dangling last character ignored."""
    chars = _NOT_BASE64.sub("", data)
    chars = chars[: len(chars) - len(chars) % 4] if len(chars) % 4 == 1 else chars
    try:
        return base64.b64decode(chars + "=" * (-len(chars) % 4))
    except (binascii.Error, ValueError):
        return b""


def check_prompt_images(
    images: Sequence[ImageContent], *, auto_resize: bool = True, limits: ResizeLimits = DEFAULT_LIMITS
) -> tuple[list[ImageContent], list[str]]:
    """The images a prompt may send, and pi's notes about them (for the prompt's text).

    Args:
        images: the images attached to the prompt.
        auto_resize: pi's ``images.autoResize`` setting.
        limits: the current model's limits (`pi_tui.tools.image_process.limits_for_model`).

    Returns:
        The usable images, in order (converted or resized where needed), and the notes: one for each image
        left out, and pi's conversion and dimension notes for those changed.
    """
    kept: list[ImageContent] = []
    notes: list[str] = []
    for image in images:
        data = decode_base64(image.data)
        processed = process_image(data, image.mime_type, auto_resize=auto_resize, limits=limits)
        if not isinstance(processed, ProcessedImage):
            notes.append(processed.message)
            continue
        if processed.data is data and processed.mime_type == image.mime_type:
            kept.append(image)
        else:
            encoded = base64.b64encode(processed.data).decode("ascii")
            kept.append(ImageContent(data=encoded, mime_type=processed.mime_type))
        notes.extend(processed.hints)
    return kept, notes
