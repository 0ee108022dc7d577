"""Turning what extensions return (dicts in pi's camelCase shape, strings, models) into runtime types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_tui.agent.tool import ToolResult
from pi_tui.ai.types import CustomMessage, ImageContent, TextContent, UserContent, load_message
from pi_tui.util.record import Record, Validator

from .events import to_snake

__all__ = ["to_content", "to_images", "to_custom_message", "to_message", "to_tool_result"]

_CONTENT: Validator[TextContent | ImageContent] = Validator(UserContent, "content block")


def _block(item: object) -> TextContent | ImageContent:
    if isinstance(item, TextContent | ImageContent):
        return item
    if isinstance(item, str):
        return TextContent(text=item)
    if isinstance(item, dict):
        return _CONTENT.validate(item)
    raise TypeError(f"content blocks are text/image dicts or strings, got {type(item).__name__}")


def to_content(value: object) -> list[TextContent | ImageContent]:
    """A string (one text block) or a list of blocks (models, ``{"type": "text", ...}`` dicts, strings)."""
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, Sequence):
        return [_block(item) for item in value]
    raise TypeError(f"content must be a string or a list of blocks, got {type(value).__name__}")


def to_images(value: Any) -> list[ImageContent] | None:
    if value is None:
        return None
    blocks = [_block(item) for item in value]
    images = [b for b in blocks if isinstance(b, ImageContent)]
    if len(images) != len(blocks):
        raise TypeError("images must be image blocks")
    return images


def to_custom_message(value: object, default_type: str = "extension") -> CustomMessage:
    """``{"customType", "content", "display"?, "details"?}`` (either key spelling) or a `CustomMessage`."""
    if isinstance(value, CustomMessage):
        return value
    if isinstance(value, str):
        return CustomMessage(custom_type=default_type, content=value)
    if not isinstance(value, dict):
        raise TypeError(f"a custom message is a dict, got {type(value).__name__}")
    fields = {to_snake(str(k)): v for k, v in value.items()}
    content = fields.get("content", "")
    return CustomMessage(
        custom_type=str(fields.get("custom_type") or default_type),
        content=content if isinstance(content, str) else to_content(content),
        display=bool(fields.get("display", True)),
        details=fields.get("details"),
    )


def to_message(value: Any) -> Any:
    """A message model, or its JSON dict (camelCase, as pi writes it)."""
    if isinstance(value, Record) and hasattr(value, "role"):
        return value
    if isinstance(value, dict):
        return load_message(value)
    raise TypeError(f"expected a message, got {type(value).__name__}")


def to_tool_result(value: Any) -> ToolResult:
    """What an extension tool returned: a `ToolResult`, ``{"content", "details"?}``, or a string."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult(content=[])
    if isinstance(value, str):
        return ToolResult(content=[TextContent(text=value)])
    if isinstance(value, dict):
        return ToolResult(content=to_content(value.get("content", [])), details=value.get("details"))
    raise TypeError(f"a tool must return a ToolResult, a dict or a string, got {type(value).__name__}")
