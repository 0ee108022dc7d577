"""Decoding, converting and resizing images with Pillow, as pi does with its image library.

Loaded only for an image that needs it (too large for the model, of a type providers do not take, or
whose header `pi_tui.tools.image_size` cannot read), so Pillow stays off start-up and off the usual
small screenshot.

pi's strategy for fitting an image, kept here: scale it into the maximum width and height (keeping its
aspect ratio, after applying a JPEG's EXIF orientation); encode it as PNG, then as JPEG at the
configured quality and at 85, 70, 55 and 40, and keep the first encoding whose base64 is below the byte
limit; if none is, shrink both sides to three quarters and try again, down to 1x1.
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .images import ResizedImage

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["ResizeLimits", "DEFAULT_LIMITS", "base64_size", "convert_to_png", "fit_with_pillow"]


@dataclass(frozen=True, slots=True)
class ResizeLimits:
    """How large an image may be sent inline (pi's defaults; a model's ``inputLimits.images.resize``
    overrides any of them).

    Attributes:
        max_width: Widest image sent, in pixels.
        max_height: Tallest image sent.
        max_bytes: The image's base64 must be shorter than this (4.5 MB leaves room below Anthropic's 5 MB).
        jpeg_quality: The first JPEG quality tried when re-encoding.
    """

    max_width: int = 2000
    max_height: int = 2000
    max_bytes: int = 4718592
    jpeg_quality: int = 80


DEFAULT_LIMITS = ResizeLimits()


def base64_size(byte_count: int) -> int:
    """The length of ``byte_count`` bytes in base64."""
    return math.ceil(byte_count / 3) * 4


def _open(data: bytes) -> Image | None:
    """The decoded image, upright, or ``None`` when Pillow cannot decode ``data``."""
    try:
        from PIL import ImageOps
        from PIL.Image import DecompressionBombError
        from PIL.Image import open as open_image
    except ImportError:  # an install without Pillow: the image is treated as one that cannot be decoded
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow warns about very large images; they are scaled down
            image = open_image(io.BytesIO(data))
            image.load()
            upright = ImageOps.exif_transpose(image)
    except (OSError, ValueError, SyntaxError, DecompressionBombError, MemoryError):
        return None
    return upright


def _as_rgb_or_rgba(image: Image) -> Image:
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    wanted = "RGBA" if has_alpha else "RGB"
    return image if image.mode == wanted else image.convert(wanted)


def _encode(image: Image, kind: str, quality: int = 0) -> bytes:
    out = io.BytesIO()
    if kind == "PNG":
        image.save(out, "PNG")
    else:
        (image.convert("RGB") if image.mode != "RGB" else image).save(out, "JPEG", quality=quality)
    return out.getvalue()


def convert_to_png(data: bytes) -> bytes | None:
    """Any image Pillow decodes (BMP, TIFF, ICO, ...) as PNG, or ``None`` if it cannot decode it."""
    image = _open(data)
    if image is None:
        return None
    try:
        return _encode(_as_rgb_or_rgba(image), "PNG")
    except (OSError, ValueError):
        return None


def fit_with_pillow(data: bytes, mime_type: str, limits: ResizeLimits) -> ResizedImage | None:
    """``data`` fitted into ``limits`` (pi's strategy, see the module docstring), or ``None`` when it
    cannot be decoded or no size down to 1x1 fits. An image already within the limits comes back as it
    is (``was_resized`` false)."""
    image = _open(data)
    if image is None:
        return None
    width, height = image.size
    if (
        width <= limits.max_width
        and height <= limits.max_height
        and base64_size(len(data)) < limits.max_bytes
    ):
        return ResizedImage(data, mime_type, width, height, width, height, was_resized=False)
    target_width, target_height = width, height
    if target_width > limits.max_width:
        target_height = round(target_height * limits.max_width / target_width)
        target_width = limits.max_width
    if target_height > limits.max_height:
        target_width = round(target_width * limits.max_height / target_height)
        target_height = limits.max_height
    target_width, target_height = max(1, target_width), max(1, target_height)
    qualities = list(dict.fromkeys((limits.jpeg_quality, 85, 70, 55, 40)))
    source = _as_rgb_or_rgba(image)
    from PIL.Image import Resampling

    try:
        while True:
            scaled = source.resize((target_width, target_height), Resampling.LANCZOS)
            encodings = [("image/png", 0)] + [("image/jpeg", quality) for quality in qualities]
            for mime, quality in encodings:
                encoded = _encode(scaled, "PNG" if quality == 0 else "JPEG", quality)
                if base64_size(len(encoded)) < limits.max_bytes:
                    return ResizedImage(encoded, mime, width, height, target_width, target_height, True)
            if target_width == 1 and target_height == 1:
                return None
            target_width = max(1, math.floor(target_width * 0.75))
            target_height = max(1, math.floor(target_height * 0.75))
    except (OSError, ValueError, MemoryError):
        return None
