"""The ``find`` tool: list files by glob pattern, in pure Python, the way pi's fd call does."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from pi_tui.agent.tool import AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util.json_types import JsonObject

from ._common import ABORTED_MESSAGE, Notice, listing_result, opt_int_arg, opt_str_arg, run_blocking, str_arg
from .paths import resolve_to_cwd
from .truncate import DEFAULT_MAX_BYTES

__all__ = ["create_find_tool", "FIND_PARAMETERS", "FIND_DESCRIPTION", "DEFAULT_FIND_LIMIT", "FindMatcher"]

DEFAULT_FIND_LIMIT = 1000

FIND_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
    },
    "required": ["pattern"],
}

FIND_DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects "
    f".gitignore. Output is truncated to {DEFAULT_FIND_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)


class FindMatcher:
    """fd's ``--glob`` matching.

    A pattern without ``/`` matches the file name. A pattern with one matches the absolute path,
    with an implicit leading ``**/`` unless it already starts with ``/`` or ``**/``. Matching is
    case-insensitive unless the pattern contains an upper-case letter (fd's smart case).
    """

    def __init__(self, pattern: str) -> None:
        self.full_path = "/" in pattern
        from .globs import glob_to_regex  # loaded with the first search

        source = glob_to_regex(pattern, braces=True)
        if self.full_path and not (pattern.startswith("/") or pattern.startswith("**/") or pattern == "**"):
            source = "(?:.*/)?" + source
        flags = re.DOTALL | (0 if any(c.isupper() for c in pattern) else re.IGNORECASE)
        self._regex = re.compile(source, flags)

    def matches(self, name: str, absolute: str) -> bool:
        return self._regex.fullmatch(absolute if self.full_path else name) is not None


def create_find_tool(cwd: Path) -> AgentTool:
    """Build the find tool for ``cwd``."""

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        pattern = str_arg(params, "pattern")
        search_path = resolve_to_cwd(opt_str_arg(params, "path") or ".", cwd)
        limit = max(1, opt_int_arg(params, "limit") or DEFAULT_FIND_LIMIT)
        try:
            matcher = FindMatcher(pattern)
        except re.error as exc:
            raise ToolError(f"Invalid glob pattern '{pattern}': {exc}") from exc

        def stopped() -> bool:
            return signal is not None and signal.aborted

        return await run_blocking(lambda: _find(search_path, matcher, limit, stopped), signal)

    return AgentTool(
        name="find",
        label="find",
        description=FIND_DESCRIPTION,
        parameters=FIND_PARAMETERS,
        execute=execute,
        prompt_snippet="Find files by glob pattern (respects .gitignore)",
    )


def _find(search_path: Path, matcher: FindMatcher, limit: int, stopped: Callable[[], bool]) -> ToolResult:
    if not os.path.exists(search_path):
        raise ToolError(f"Path not found: {search_path}")
    if not search_path.is_dir():
        raise ToolError(f"Not a directory: {search_path}")
    found: list[str] = []
    from .walk import walk  # the tree walker loads with the first search

    for entry in walk(search_path, should_stop=stopped):
        absolute = Path(entry.path).as_posix()
        if matcher.matches(entry.name, absolute):
            found.append(f"{entry.rel}/" if entry.is_dir else entry.rel)
            if len(found) >= limit:
                break
    if stopped():
        raise ToolError(ABORTED_MESSAGE)
    if not found:
        return ToolResult(content=[TextContent(text="No files found matching pattern")])

    limit_notice: Notice | None = None
    if len(found) >= limit:
        text = f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
        limit_notice = (text, "resultLimitReached", limit)
    return listing_result(found, limit=limit_notice)
