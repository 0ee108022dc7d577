"""The ``grep`` tool: search file contents, in pure Python, with ripgrep's defaults and pi's output."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.agent.tool import AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util.json_types import JsonObject

from ._common import (
    ABORTED_MESSAGE,
    Notice,
    listing_result,
    opt_bool_arg,
    opt_int_arg,
    opt_str_arg,
    run_blocking,
    str_arg,
)
from .paths import resolve_to_cwd
from .truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line

if TYPE_CHECKING:
    from .walk import WalkEntry

__all__ = ["create_grep_tool", "GREP_PARAMETERS", "GREP_DESCRIPTION", "DEFAULT_GREP_LIMIT", "GlobFilter"]

DEFAULT_GREP_LIMIT = 100

GREP_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
    },
    "required": ["pattern"],
}

GREP_DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects "
    f".gitignore. Output is truncated to {DEFAULT_GREP_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
    f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
)

# Constructs for which "the whole file has no match" does not prove "no line matches".
_NO_PREFILTER = re.compile(r"\\[AZz]|\(\?<[=!]|\(\?[=!]")


class GlobFilter:
    """ripgrep's ``--glob``: without a ``/`` it matches file names at any depth, with one the path
    relative to the search root; a leading ``!`` excludes (files and directories) instead of including.
    """

    def __init__(self, glob: str) -> None:
        self.exclude = glob.startswith("!")
        pattern = glob[1:] if self.exclude else glob
        self.dir_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        self.anchored = "/" in pattern
        from .globs import glob_to_regex  # loaded with the first glob

        source = glob_to_regex(pattern.lstrip("/"), braces=True)
        self._regex = re.compile(source, re.DOTALL)

    def _matches(self, entry: WalkEntry) -> bool:
        if self.dir_only and not entry.is_dir:
            return False
        return self._regex.fullmatch(entry.rel if self.anchored else entry.name) is not None

    def skips(self, entry: WalkEntry) -> bool:
        """Whether the walk should leave ``entry`` out (for a directory: not enter it)."""
        if self.exclude:
            return self._matches(entry)
        return not entry.is_dir and not self._matches(entry)


@dataclass(slots=True)
class _Search:
    regex: re.Pattern[str]
    prefilter: bool
    context: int
    limit: int
    match_count: int = 0
    limit_reached: bool = False
    lines_truncated: bool = False
    output: list[str] = field(default_factory=list)


def create_grep_tool(cwd: Path) -> AgentTool:
    """Build the grep tool for ``cwd``."""

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        pattern = str_arg(params, "pattern")
        search_path = resolve_to_cwd(opt_str_arg(params, "path") or ".", cwd)
        glob = opt_str_arg(params, "glob")
        context = max(0, opt_int_arg(params, "context") or 0)
        limit = max(1, opt_int_arg(params, "limit") or DEFAULT_GREP_LIMIT)
        flags = re.IGNORECASE if opt_bool_arg(params, "ignoreCase") else 0
        literal = opt_bool_arg(params, "literal")
        try:
            regex = re.compile(re.escape(pattern) if literal else pattern, flags)
        except re.error as exc:
            raise ToolError(f"regex parse error: {exc}") from exc
        search = _Search(regex, literal or not _NO_PREFILTER.search(pattern), context, limit)

        def stopped() -> bool:
            return signal is not None and signal.aborted

        return await run_blocking(lambda: _grep(search_path, glob, search, stopped), signal)

    return AgentTool(
        name="grep",
        label="grep",
        description=GREP_DESCRIPTION,
        parameters=GREP_PARAMETERS,
        execute=execute,
        prompt_snippet="Search file contents for patterns (respects .gitignore)",
    )


def _grep(search_path: Path, glob: str | None, search: _Search, stopped: Callable[[], bool]) -> ToolResult:
    if not os.path.exists(search_path):
        raise ToolError(f"Path not found: {search_path}")
    if search_path.is_dir():
        skip = GlobFilter(glob).skips if glob else None
        from .walk import walk  # the tree walker loads with the first search

        for entry in walk(search_path, should_stop=stopped, skip=skip):
            if entry.is_dir or entry.is_symlink:
                continue
            _search_file(Path(entry.path), entry.rel, search)
            if search.limit_reached:
                break
    else:
        _search_file(search_path, search_path.name, search)
    if stopped():
        raise ToolError(ABORTED_MESSAGE)
    return _result(search)


def _search_file(path: Path, display: str, search: _Search) -> None:
    try:
        data = path.read_bytes()
    except OSError:
        return
    if b"\x00" in data:
        return  # a binary file: ripgrep reports no matching lines for it either
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if search.prefilter and search.regex.search(text) is None:
        return
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    for index, line in enumerate(lines):
        if search.regex.search(line) is None:
            continue
        search.match_count += 1
        _emit(display, lines, index, search)
        if search.match_count >= search.limit:
            search.limit_reached = True
            return


def _emit(display: str, lines: list[str], index: int, search: _Search) -> None:
    first = max(0, index - search.context)
    last = min(len(lines) - 1, index + search.context)
    # Like pi, every match gets its own block, so overlapping context lines repeat.
    for current in range(first, last + 1):
        text, cut = truncate_line(lines[current].replace("\r", ""))
        search.lines_truncated = search.lines_truncated or cut
        separator = ":" if current == index else "-"
        search.output.append(f"{display}{separator}{current + 1}{separator} {text}")


def _result(search: _Search) -> ToolResult:
    if search.match_count == 0:
        return ToolResult(content=[TextContent(text="No matches found")])
    limit: Notice | None = None
    if search.limit_reached:
        text = (
            f"{search.limit} matches limit reached. Use limit={search.limit * 2} for more, or refine pattern"
        )
        limit = (text, "matchLimitReached", search.limit)
    after: tuple[Notice, ...] = ()
    if search.lines_truncated:
        text = f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        after = ((text, "linesTruncated", True),)
    return listing_result(search.output, limit=limit, after=after)
