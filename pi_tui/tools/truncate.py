"""Output truncation shared by every built-in tool.

Two independent limits apply, whichever is hit first wins: a line count (`DEFAULT_MAX_LINES`) and a
UTF-8 byte count (`DEFAULT_MAX_BYTES`). Head truncation keeps the beginning (file reads, search
results); tail truncation keeps the end (command output, where errors and results usually are).
Only whole lines are returned, except that tail truncation keeps the end of a single last line that
is on its own larger than the byte limit (`TruncationResult.last_line_partial`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pi_tui.util.json_types import JsonObject

__all__ = [
    "DEFAULT_MAX_LINES",
    "DEFAULT_MAX_BYTES",
    "GREP_MAX_LINE_LENGTH",
    "TruncationResult",
    "format_size",
    "utf8_len",
    "truncate_head",
    "truncate_tail",
    "truncate_line",
]

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500

TruncatedBy = Literal["lines", "bytes"]


@dataclass(slots=True)
class TruncationResult:
    """What a truncation kept and what it cut.

    Attributes:
        content: The kept text.
        truncated: Whether anything was cut.
        truncated_by: Which limit cut it (``None`` when nothing was cut).
        total_lines: Lines in the original text (a trailing newline does not start a new line).
        total_bytes: UTF-8 bytes in the original text.
        output_lines: Lines in ``content``.
        output_bytes: UTF-8 bytes in ``content``.
        last_line_partial: Tail truncation kept only the end of an oversized last line.
        first_line_exceeds_limit: Head truncation found a first line larger than the byte limit.
        max_lines: The line limit applied.
        max_bytes: The byte limit applied.
    """

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_dict(self) -> JsonObject:
        """The camelCase shape pi stores in a tool result's ``details.truncation``."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    """Bytes ``text`` takes in UTF-8 (lone surrogates count as three bytes, as Node counts them)."""
    return len(text.encode("utf-8", "surrogatepass"))


def format_size(num_bytes: int) -> str:
    """Human-readable size: ``123B``, ``1.2KB``, ``1.2MB`` (one decimal, halves rounded up like JS)."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{_one_decimal(num_bytes, 1024)}KB"
    return f"{_one_decimal(num_bytes, 1024 * 1024)}MB"


def _one_decimal(num: int, unit: int) -> str:
    # num / unit to one decimal, halves rounded up, in integers (exact, as JavaScript's toFixed(1) on
    # these values: 1280 bytes is "1.3KB", not the banker's "1.2KB"), without loading `decimal`.
    tenths = (num * 20 + unit) // (2 * unit)
    return f"{tenths // 10}.{tenths % 10}"


def _split_lines(content: str) -> list[str]:
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


class _Cut:
    """A text about to be cut, measured once, with the limits that apply (the defaults for None)."""

    __slots__ = ("content", "lines", "max_bytes", "max_lines", "total_bytes", "total_lines")

    def __init__(self, content: str, max_lines: int | None, max_bytes: int | None) -> None:
        self.content = content
        self.max_lines = DEFAULT_MAX_LINES if max_lines is None else max_lines
        self.max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
        self.total_bytes = utf8_len(content)
        self.lines = _split_lines(content)
        self.total_lines = len(self.lines)

    def fits(self) -> bool:
        """Whether the whole text is within both limits."""
        return self.total_lines <= self.max_lines and self.total_bytes <= self.max_bytes

    def whole(self) -> TruncationResult:
        """The result that keeps the whole text."""
        return TruncationResult(
            content=self.content,
            truncated=False,
            truncated_by=None,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
            output_lines=self.total_lines,
            output_bytes=self.total_bytes,
            last_line_partial=False,
            first_line_exceeds_limit=False,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )

    def kept(
        self,
        kept: list[str],
        truncated_by: TruncatedBy,
        *,
        last_line_partial: bool = False,
        first_line_exceeds_limit: bool = False,
    ) -> TruncationResult:
        """The result of a cut that kept the lines ``kept`` (joined by newlines)."""
        output = "\n".join(kept)
        return TruncationResult(
            content=output,
            truncated=True,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
            output_lines=len(kept),
            output_bytes=utf8_len(output),
            last_line_partial=last_line_partial,
            first_line_exceeds_limit=first_line_exceeds_limit,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )


def truncate_head(
    content: str, *, max_lines: int | None = None, max_bytes: int | None = None
) -> TruncationResult:
    """Keep the first lines of ``content`` that fit both limits.

    Never returns a partial line: when the first line alone is over the byte limit the result is
    empty with ``first_line_exceeds_limit`` set, so the caller can point at another way to read it.
    """
    cut = _Cut(content, max_lines, max_bytes)
    if cut.fits():
        return cut.whole()
    max_bytes = cut.max_bytes
    if utf8_len(cut.lines[0]) > max_bytes:
        return cut.kept([], "bytes", first_line_exceeds_limit=True)

    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for index, line in enumerate(cut.lines[: cut.max_lines]):
        cost = utf8_len(line) + (1 if index > 0 else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
    return cut.kept(kept, truncated_by)


def truncate_tail(
    content: str, *, max_lines: int | None = None, max_bytes: int | None = None
) -> TruncationResult:
    """Keep the last lines of ``content`` that fit both limits.

    If the very last line is on its own larger than the byte limit, its final ``max_bytes`` bytes
    are kept (cut on a character boundary) and ``last_line_partial`` is set.
    """
    cut = _Cut(content, max_lines, max_bytes)
    if cut.fits():
        return cut.whole()
    max_lines, max_bytes = cut.max_lines, cut.max_bytes

    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    last_line_partial = False
    for line in reversed(cut.lines):
        if len(kept) >= max_lines:
            break
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if not kept:
                tail = _tail_bytes(line, max_bytes)
                kept.append(tail)
                used = utf8_len(tail)
                last_line_partial = True
            break
        kept.append(line)
        used += cost
    kept.reverse()
    return cut.kept(kept, truncated_by, last_line_partial=last_line_partial)


def _tail_bytes(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    # Step forward past continuation bytes so the cut lands on a character boundary.
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters plus ``... [truncated]``; returns (text, was_cut)."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
