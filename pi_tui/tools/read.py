"""The ``read`` tool: a text file with line numbers kept out, paged by offset/limit, or an image."""

from __future__ import annotations

import base64
import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pi_tui.agent.tool import PREFER_STRICT_SCHEMA, AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import ImageContent, TextContent
from pi_tui.util.json_types import JsonObject

from ._common import opt_int_arg, run_blocking, str_arg
from .images import IMAGE_SNIFF_BYTES, ImageResizer, detect_image_mime_type, looks_like_bmp
from .line_scan import scan_lines
from .paths import resolve_read_path
from .truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_head,
    utf8_len,
)

if TYPE_CHECKING:
    from .image_resize import ResizeLimits

__all__ = ["create_read_tool", "READ_PARAMETERS", "READ_DESCRIPTION", "read_file_result"]

READ_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}

READ_DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as "
    f"attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you need "
    "the full file, continue with offset until complete."
)

STREAMED_TEXT_BYTES = 8 * 1024 * 1024
"""Text files larger than this are read in chunks, keeping only the lines shown."""

BMP = "image/bmp"
"""Read as an image too, sent as PNG (`pi_tui.tools.bmp`), as pi converts it."""
NON_VISION_NOTE = "[Current model does not support images. The image will be omitted from this request.]"
"""Added to an image's note when the current model takes no images (pi's words): the request will carry
a placeholder instead of the picture, and this says why."""


def create_read_tool(
    cwd: Path,
    *,
    image_resizer: ImageResizer | None = None,
    auto_resize_images: bool = True,
    image_limits: Callable[[], ResizeLimits] | None = None,
    model_takes_images: Callable[[], bool] | None = None,
) -> AgentTool:
    """Build the read tool for ``cwd``.

    Args:
        cwd: Directory relative paths start from.
        image_resizer: Fits images into the model's limits (default: `pi_tui.tools.image_process.fit_image`
            with ``image_limits``).
        auto_resize_images: pi's ``images.autoResize`` setting; off sends images at their size (a BMP is
            still converted).
        image_limits: Asked per read: the current model's image limits (None: pi's defaults).
        model_takes_images: Asked per read: whether the current model accepts image input; when it
            says no, an image's note says the image will be left out (None: assume it does).
    """

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        path = str_arg(params, "path")
        offset = opt_int_arg(params, "offset")
        limit = opt_int_arg(params, "limit")
        resizer: ImageResizer | None = None
        if auto_resize_images:
            resizer = image_resizer or _default_resizer(image_limits() if image_limits is not None else None)
        vision = model_takes_images() if model_takes_images is not None else True
        return await run_blocking(
            lambda: read_file_result(cwd, path, offset, limit, resizer, model_takes_images=vision), signal
        )

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
    cwd: Path,
    path: str,
    offset: int | None,
    limit: int | None,
    resizer: ImageResizer | None = None,
    *,
    model_takes_images: bool = True,
) -> ToolResult:
    """Do the whole read synchronously (run it off the event loop). Raises `ToolError` on failure.

    ``model_takes_images`` False adds `NON_VISION_NOTE` to an image's note."""
    absolute = resolve_read_path(path, cwd)
    with _guarded(absolute):
        _check_readable(absolute)
        with absolute.open("rb") as file:
            head = file.read(IMAGE_SNIFF_BYTES)
            size = os.fstat(file.fileno()).st_size
            mime_type = detect_image_mime_type(head) or (BMP if looks_like_bmp(head) else None)
            if mime_type is None and size > STREAMED_TEXT_BYTES:
                # a log of gigabytes: count its lines and keep only what is shown (reading it whole
                # took about six times its size in memory)
                file.seek(0)
                return _streamed_text_result(file, path, offset, limit)
            data = head + file.read()
    if mime_type is not None:
        return _image_result(data, mime_type, resizer, None if model_takes_images else NON_VISION_NOTE)
    return _text_result(data.decode("utf-8", errors="replace"), path, offset, limit)


@contextmanager
def _guarded(absolute: Path) -> Iterator[None]:
    """OS errors as the tool errors the model sees (Node's wording, which is what pi shows it)."""
    try:
        yield
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, "EIO")
        raise ToolError(f"{code}: {exc.strerror or exc}, read '{absolute}'") from exc


def _check_readable(absolute: Path) -> None:
    if not os.access(absolute, os.R_OK):
        if not os.path.exists(absolute):
            raise ToolError(f"ENOENT: no such file or directory, access '{absolute}'")
        raise ToolError(f"EACCES: permission denied, access '{absolute}'")
    if absolute.is_dir():
        raise ToolError("EISDIR: illegal operation on a directory, read")


def _default_resizer(limits: ResizeLimits | None) -> ImageResizer:
    from .image_process import DEFAULT_LIMITS, fit_image  # loaded when an image is read

    return lambda data, mime: fit_image(data, mime, limits or DEFAULT_LIMITS)


def _image_result(
    data: bytes, mime_type: str, resizer: ImageResizer | None, extra_note: str | None
) -> ToolResult:
    """pi's image reply: ``Read image file [type]`` and its notes, then the image (or the notes alone when
    it cannot be sent)."""
    from .image_process import ImageOmitted, process_image  # loaded when an image is read

    tail = f"\n{extra_note}" if extra_note else ""
    processed = process_image(data, mime_type, auto_resize=resizer is not None, resizer=resizer)
    if isinstance(processed, ImageOmitted):
        reason = f"\n{processed.reason}" if processed.reason else ""
        return ToolResult(
            content=[TextContent(text=f"Read image file [{mime_type}]\n{processed.message}{reason}{tail}")]
        )
    hints = "".join(f"\n{hint}" for hint in processed.hints)
    return ToolResult(
        content=[
            TextContent(text=f"Read image file [{processed.mime_type}]{hints}{tail}"),
            ImageContent(
                data=base64.b64encode(processed.data).decode("ascii"), mime_type=processed.mime_type
            ),
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
    return _shown(truncation, path, start, total, user_limited, lambda: utf8_len(all_lines[start]))


def _streamed_text_result(file: BinaryIO, path: str, offset: int | None, limit: int | None) -> ToolResult:
    """`_text_result` of a large file read in chunks: the same text and notices, holding only the lines
    shown. Byte counts are those of the file (an invalid UTF-8 byte counts 1, not the 3 of its
    replacement character)."""
    start = max(0, offset - 1) if offset else 0
    scan = scan_lines(file, start, None if limit is None else start + max(0, limit), DEFAULT_MAX_BYTES + 2)
    if start >= scan.total_lines:
        raise ToolError(f"Offset {offset} is beyond end of file ({scan.total_lines} lines total)")
    user_limited = None if limit is None else max(0, min(start + limit, scan.total_lines) - start)
    truncation = truncate_head(scan.kept.decode("utf-8", errors="replace"))
    if not scan.complete:  # what the scan kept is the head of the selection: give the whole's size
        truncation = replace(truncation, total_lines=scan.selection_lines, total_bytes=scan.selection_bytes)
    return _shown(truncation, path, start, scan.total_lines, user_limited, lambda: scan.first_line_bytes)


def _shown(
    truncation: TruncationResult,
    path: str,
    start: int,
    total: int,
    user_limited: int | None,
    first_line_bytes: Callable[[], int],
) -> ToolResult:
    """The tool's answer for the lines from ``start`` (0-based) of a ``total``-line file."""
    first_shown = start + 1
    details: JsonObject | None = None
    if truncation.first_line_exceeds_limit:
        size = format_size(first_line_bytes())
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
