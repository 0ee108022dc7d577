"""The ``ls`` tool: one directory's entries, sorted case-insensitively, directories marked with ``/``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pi_tui.agent.tool import AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util.json_types import JsonObject

from ._common import ABORTED_MESSAGE, Notice, listing_result, opt_int_arg, opt_str_arg, run_blocking
from .paths import resolve_to_cwd
from .truncate import DEFAULT_MAX_BYTES

__all__ = ["create_ls_tool", "LS_PARAMETERS", "LS_DESCRIPTION", "DEFAULT_LS_LIMIT"]

DEFAULT_LS_LIMIT = 500

LS_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
    },
}

LS_DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes "
    f"dotfiles. Output is truncated to {DEFAULT_LS_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)


def create_ls_tool(cwd: Path) -> AgentTool:
    """Build the ls tool for ``cwd``."""

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        directory = resolve_to_cwd(opt_str_arg(params, "path") or ".", cwd)
        limit = opt_int_arg(params, "limit")
        limit = DEFAULT_LS_LIMIT if limit is None else max(1, limit)

        def stopped() -> bool:
            return signal is not None and signal.aborted

        return await run_blocking(lambda: _ls(directory, limit, stopped), signal)

    return AgentTool(
        name="ls",
        label="ls",
        description=LS_DESCRIPTION,
        parameters=LS_PARAMETERS,
        execute=execute,
        prompt_snippet="List directory contents",
    )


def _ls(directory: Path, limit: int, stopped: Callable[[], bool]) -> ToolResult:
    if not os.path.exists(directory):
        raise ToolError(f"Path not found: {directory}")
    if not directory.is_dir():
        raise ToolError(f"Not a directory: {directory}")
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {exc.strerror or exc}") from exc
    names.sort(key=lambda name: (name.lower(), name))

    results: list[str] = []
    limit_reached = False
    for name in names:
        if stopped():
            raise ToolError(ABORTED_MESSAGE)
        if len(results) >= limit:
            limit_reached = True
            break
        try:
            # Follows symlinks, so a link to a directory is listed as a directory; broken links are left out.
            is_dir = (directory / name).is_dir()
            if not is_dir:
                os.stat(directory / name)
        except OSError:
            continue
        results.append(f"{name}/" if is_dir else name)

    if not results:
        return ToolResult(content=[TextContent(text="(empty directory)")])
    limit_notice: Notice | None = None
    if limit_reached:
        limit_notice = (
            f"{limit} entries limit reached. Use limit={limit * 2} for more",
            "entryLimitReached",
            limit,
        )
    return listing_result(results, limit=limit_notice)
