"""The images a tool returns, fitted before they enter the history (pi 0.87.1's tool-result normalising).

``read`` fits its images itself, but an extension or MCP tool (a screenshot, a chart) hands back
whatever base64 it has. An image too large for the provider makes it refuse the whole conversation,
every later request included, so each image block of a result goes through
`pi_tui.tools.image_process.process_image` once, after the extensions' ``tool_result`` handlers: a BMP
or TIFF becomes PNG, a 6000x4000 screenshot is scaled to fit, and pi's notes follow the image as a text
block. Unlike a prompt's images, an image that cannot be processed is kept as the tool returned it
(pi's choice: a tool's output is not silently deleted).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

from pi_tui.ai.types import ImageContent, TextContent

from .image_process import DEFAULT_LIMITS, ProcessedImage, ResizeLimits, process_image

__all__ = ["normalize_result_images"]


def normalize_result_images(
    content: Sequence[TextContent | ImageContent],
    *,
    auto_resize: bool = True,
    limits: ResizeLimits = DEFAULT_LIMITS,
) -> list[TextContent | ImageContent] | None:
    """The result's content with each image processed and its notes after it, or ``None`` when nothing
    changed (no images, or every image already fine as it was).

    Args:
        content: A tool result's blocks.
        auto_resize: pi's ``images.autoResize``.
        limits: The current model's limits (`pi_tui.tools.image_process.limits_for_model`).
    """
    if not any(isinstance(block, ImageContent) for block in content):
        return None
    out: list[TextContent | ImageContent] = []
    changed = False
    for block in content:
        if not isinstance(block, ImageContent):
            out.append(block)
            continue
        try:
            data = base64.b64decode(block.data)
        except (binascii.Error, ValueError):
            out.append(block)  # not base64: kept as the tool returned it
            continue
        processed = process_image(data, block.mime_type, auto_resize=auto_resize, limits=limits)
        if not isinstance(processed, ProcessedImage) or _unchanged(processed, data, block):
            out.append(block)
            continue
        out.append(
            ImageContent(data=base64.b64encode(processed.data).decode("ascii"), mime_type=processed.mime_type)
        )
        if processed.hints:
            out.append(TextContent(text="\n".join(processed.hints)))
        changed = True
    return out if changed else None


def _unchanged(processed: ProcessedImage, data: bytes, block: ImageContent) -> bool:
    return processed.data is data and processed.mime_type == block.mime_type and not processed.hints
