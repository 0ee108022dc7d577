"""The ``read`` tool: a text file with line numbers kept out, paged by offset/limit, or an image."""

from __future__ import annotations

import base64
import errno
import os
from pathlib import Path
from typing import Any

from pi_tui.agent.tool import PREFER_STRICT_SCHEMA, AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import ImageContent, TextContent

from ._common import opt_int_arg, run_blocking, str_arg
from .images import IMAGE_SNIFF_BYTES, ImageResizer, detect_image_mime_type, format_dimension_note
from .paths import resolve_read_path
from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head, utf8_len

__all__ = ["create_read_tool", "READ_PARAMETERS", "READ_DESCRIPTION", "read_file_result"]

READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}

READ_DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as "
    f"attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you need "
    "the full file, continue with offset until complete."
)

_IMAGE_OMITTED = "[Image omitted: could not be resized below the inline image size limit.]"


def create_read_tool(
    cwd: Path,
    *,
    image_resizer: ImageResizer | None = None,
    auto_resize_images: bool = True,
) -> AgentTool:
    """Build the read tool for ``cwd``.

    Args:
        cwd: Directory relative paths start from.
        image_resizer: Fits images into the model's limits; without one images are sent as they are.
        auto_resize_images: pi's ``images.autoResize`` setting; off sends images untouched.
    """

    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        path = str_arg(params, "path")
        offset = opt_int_arg(params, "offset")
        limit = opt_int_arg(params, "limit")
        resizer = image_resizer if auto_resize_images else None
        return await run_blocking(lambda: read_file_result(cwd, path, offset, limit, resizer), signal)

    return AgentTool(
        name="read",
        label="read",
        description=READ_DESCRIPTION,
        parameters=READ_PARAMETERS,
        execute=execute,
        constrained_sampling=PREFER_STRICT_SCHEMA,
        prompt_snippet="Read file contents",
    )


def read_file_result(
    cwd: Path, path: str, offset: int | None, limit: int | None, resizer: ImageResizer | None = None
) -> ToolResult:
    """Do the whole read synchronously (run it off the event loop). Raises `ToolError` on failure."""
    absolute = resolve_read_path(path, cwd)
    data = _read_bytes(absolute)
    mime_type = detect_image_mime_type(data[:IMAGE_SNIFF_BYTES])
    if mime_type is not None:
        return _image_result(data, mime_type, resizer)
    return _text_result(data.decode("utf-8", errors="replace"), path, offset, limit)


def _read_bytes(absolute: Path) -> bytes:
    # Error texts follow Node's wording, which is what the model sees from pi.
    try:
        if not os.access(absolute, os.R_OK):
            if not os.path.exists(absolute):
                raise ToolError(f"ENOENT: no such file or directory, access '{absolute}'")
            raise ToolError(f"EACCES: permission denied, access '{absolute}'")
        if absolute.is_dir():
            raise ToolError("EISDIR: illegal operation on a directory, read")
        return absolute.read_bytes()
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, "EIO")
        raise ToolError(f"{code}: {exc.strerror or exc}, read '{absolute}'") from exc


def _image_result(data: bytes, mime_type: str, resizer: ImageResizer | None) -> ToolResult:
    note = f"Read image file [{mime_type}]"
    if resizer is None:
        return ToolResult(
            content=[
                TextContent(text=note),
                ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type),
            ]
        )
    resized = resizer(data, mime_type)
    if resized is None:
        return ToolResult(content=[TextContent(text=f"{note}\n{_IMAGE_OMITTED}")])
    text = f"Read image file [{resized.mime_type}]"
    dimension_note = format_dimension_note(resized)
    if dimension_note:
        text += f"\n{dimension_note}"
    return ToolResult(
        content=[
            TextContent(text=text),
            ImageContent(data=base64.b64encode(resized.data).decode("ascii"), mime_type=resized.mime_type),
        ]
    )


def _text_result(text: str, path: str, offset: int | None, limit: int | None) -> ToolResult:
    all_lines = text.split("\n")
    total = len(all_lines)
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")

    user_limited: int | None = None
    if limit is not None:
        end = max(start, min(start + limit, total))
        selected = "\n".join(all_lines[start:end])
        user_limited = end - start
    else:
        selected = "\n".join(all_lines[start:])

    truncation = truncate_head(selected)
    first_shown = start + 1
    details: dict[str, Any] | None = None
    if truncation.first_line_exceeds_limit:
        size = format_size(utf8_len(all_lines[start]))
        output = (
            f"[Line {first_shown} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first_shown}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        details = {"truncation": truncation.to_dict()}
    elif truncation.truncated:
        last_shown = first_shown + truncation.output_lines - 1
        if truncation.truncated_by == "lines":
            notice = f"[Showing lines {first_shown}-{last_shown} of {total}. Use offset={last_shown + 1} to continue.]"
        else:
            notice = (
                f"[Showing lines {first_shown}-{last_shown} of {total} ({format_size(DEFAULT_MAX_BYTES)} limit). "
                f"Use offset={last_shown + 1} to continue.]"
            )
        output = f"{truncation.content}\n\n{notice}"
        details = {"truncation": truncation.to_dict()}
    elif user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        output = f"{truncation.content}\n\n[{remaining} more lines in file. Use offset={start + user_limited + 1} to continue.]"
    else:
        output = truncation.content
    return ToolResult(content=[TextContent(text=output)], details=details)
