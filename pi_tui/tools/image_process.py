"""One image on its way into the conversation: converted to a type providers take and fitted into the
model's limits, with the notes pi adds for the model.

Every place an image enters the context goes through `process_image`, as in pi 0.87.1: the ``read``
tool, ``@file`` arguments, images attached to a prompt (RPC, extensions, pastes) and images in any tool's
result (extension and MCP tools included). The steps:

1. The type: PNG, JPEG, GIF and WebP (told by their first bytes, whatever the declared type says) are
   kept; a BMP, or data of another declared type that Pillow decodes (TIFF, ICO, ...), is converted to
   PNG. Data declared as one of the four types that is none of them is left out, as is data that cannot
   be converted.
2. The size (``images.autoResize``, on by default): an image wider or taller than the limits, or whose
   base64 is not below the byte limit, is scaled down and re-encoded (`pi_tui.tools.image_resize`); one
   that cannot be brought below the limits is left out.
3. The notes: ``[Image converted from image/bmp to image/png.]`` after a conversion, and pi's dimension
   note (``[Image: original 4000x3000, displayed at 2000x1500. Multiply coordinates by 2.00 to map to
   original image.]``) after a resize.

An image that already fits is not decoded: its header gives its size (`pi_tui.tools.image_size`), so
Pillow is loaded only for images that need it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .image_resize import DEFAULT_LIMITS, ResizeLimits, base64_size
from .image_size import header_dimensions
from .images import (
    IMAGE_SNIFF_BYTES,
    SUPPORTED_IMAGE_MIME_TYPES,
    ImageResizer,
    ResizedImage,
    detect_image_mime_type,
    format_dimension_note,
    looks_like_bmp,
)

__all__ = [
    "NOT_CONVERTIBLE",
    "NOT_RESIZABLE",
    "ImageOmitted",
    "ProcessedImage",
    "ResizeLimits",
    "DEFAULT_LIMITS",
    "base_mime_type",
    "fit_image",
    "limits_for_model",
    "process_image",
]

NOT_CONVERTIBLE = "[Image omitted: could not be converted to a supported inline image format.]"
"""pi's words for data it could not turn into a PNG, JPEG, GIF or WebP."""
NOT_RESIZABLE = "[Image omitted: could not be resized below the inline image size limit.]"
"""pi's words for an image it could not decode or bring below the limits."""


@dataclass(slots=True)
class ProcessedImage:
    """An image ready to send.

    Attributes:
        data: The image bytes (the input itself when nothing changed).
        mime_type: Their type: image/png, image/jpeg, image/gif or image/webp.
        hints: pi's notes for the model (conversion, dimensions), in order; empty when nothing changed.
    """

    data: bytes
    mime_type: str
    hints: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ImageOmitted:
    """An image that cannot be sent: ``message`` is pi's note, ``reason`` says why when known."""

    message: str
    reason: str | None = None


def base_mime_type(mime_type: str) -> str:
    """``image/JPG; q=1`` -> ``image/jpeg``: lower case, parameters dropped, jpg spelled jpeg."""
    base = mime_type.split(";")[0].strip().lower()
    return "image/jpeg" if base == "image/jpg" else base


def limits_for_model(input_limits: Mapping[str, object] | None) -> ResizeLimits:
    """The model's ``inputLimits.images.resize`` over pi's defaults (a value that is not a positive
    number keeps its default)."""
    images = input_limits.get("images") if isinstance(input_limits, Mapping) else None
    resize = images.get("resize") if isinstance(images, Mapping) else None
    if not isinstance(resize, Mapping):
        return DEFAULT_LIMITS

    def value(key: str, default: int) -> int:
        given = resize.get(key)
        if isinstance(given, (int, float)) and not isinstance(given, bool) and given > 0:
            return int(given)
        return default

    return ResizeLimits(
        max_width=value("maxWidth", DEFAULT_LIMITS.max_width),
        max_height=value("maxHeight", DEFAULT_LIMITS.max_height),
        max_bytes=value("maxBytes", DEFAULT_LIMITS.max_bytes),
        jpeg_quality=value("jpegQuality", DEFAULT_LIMITS.jpeg_quality),
    )


def process_image(
    data: bytes,
    mime_type: str,
    *,
    auto_resize: bool = True,
    limits: ResizeLimits = DEFAULT_LIMITS,
    resizer: ImageResizer | None = None,
) -> ProcessedImage | ImageOmitted:
    """``data`` (declared as ``mime_type``) converted and fitted as the module docstring says.

    Args:
        data: The image bytes.
        mime_type: The type the image came with (a file's sniffed type, a tool's or client's ``mimeType``).
        auto_resize: pi's ``images.autoResize``; off skips step 2.
        limits: The model's limits (`limits_for_model`).
        resizer: Fits the image in place of `fit_image` with ``limits``.

    Returns:
        The image to send with its notes, or `ImageOmitted` with pi's note for the model.
    """
    head = data[:IMAGE_SNIFF_BYTES]
    sniffed = detect_image_mime_type(head)
    converted_from: str | None = None
    if sniffed is None:
        declared = base_mime_type(mime_type)
        is_bmp = looks_like_bmp(head)
        if declared in SUPPORTED_IMAGE_MIME_TYPES and not is_bmp:
            return ImageOmitted(NOT_RESIZABLE)  # what pi says when its decoder refuses the data
        png = _to_png(data, is_bmp)
        if isinstance(png, ImageOmitted):
            return png
        data, sniffed = png, "image/png"
        converted_from = "image/bmp" if declared in SUPPORTED_IMAGE_MIME_TYPES else declared
    if not auto_resize:
        return ProcessedImage(data, sniffed, _conversion_hint(converted_from, sniffed))
    fitted = resizer(data, sniffed) if resizer is not None else fit_image(data, sniffed, limits)
    if fitted is None:
        return ImageOmitted(NOT_RESIZABLE)
    hints = _conversion_hint(converted_from, fitted.mime_type)
    dimension_note = format_dimension_note(fitted)
    if dimension_note:
        hints.append(dimension_note)
    return ProcessedImage(fitted.data, fitted.mime_type, hints)


def fit_image(data: bytes, mime_type: str, limits: ResizeLimits = DEFAULT_LIMITS) -> ResizedImage | None:
    """``data`` within ``limits``: as it is when its header shows it fits (no decoding), else through
    Pillow (`pi_tui.tools.image_resize.fit_with_pillow`). ``None``: it cannot be made to fit."""
    size = header_dimensions(data, mime_type)
    if size is not None and base64_size(len(data)) < limits.max_bytes:
        width, height = size
        fits = width <= limits.max_width and height <= limits.max_height
        # a JPEG may be turned a quarter by its EXIF orientation: then it must fit either way round
        if fits and (
            mime_type != "image/jpeg" or (height <= limits.max_width and width <= limits.max_height)
        ):
            return ResizedImage(data, mime_type, width, height, width, height, was_resized=False)
    from .image_resize import fit_with_pillow

    return fit_with_pillow(data, mime_type, limits)


def _to_png(data: bytes, is_bmp: bool) -> bytes | ImageOmitted:
    """A BMP through the standard-library decoder first (`pi_tui.tools.bmp`), anything else (and the
    BMP kinds it does not cover) through Pillow."""
    reason: str | None = None
    if is_bmp:
        from .bmp import BmpError, bmp_to_png

        try:
            return bmp_to_png(data)
        except BmpError as exc:
            reason = str(exc)
    from .image_resize import convert_to_png

    png = convert_to_png(data)
    return png if png is not None else ImageOmitted(NOT_CONVERTIBLE, reason)


def _conversion_hint(converted_from: str | None, to: str) -> list[str]:
    if converted_from is None or converted_from == to:
        return []
    return [f"[Image converted from {converted_from} to {to}.]"]
