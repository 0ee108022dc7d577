"""One pass over a large file: how many lines it has, and the head of a range of its lines.

The ``read`` tool shows at most 50 KB of a file but names its line count, so a multi-gigabyte log used
to be read whole (bytes, decoded text and its split lines: about six times its size in memory).
`scan_lines` reads it in chunks, counting newlines and keeping only the first bytes of the lines asked
for, so memory stays at a chunk plus what is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["LineScan", "scan_lines"]

CHUNK_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LineScan:
    """What `scan_lines` found.

    Attributes:
        total_lines: lines in the file, split on ``\\n`` (a trailing newline ends with an empty line).
        kept: the first bytes of the selection (the lines ``start``..``end`` joined by ``\\n``).
        complete: ``kept`` is the whole selection.
        selection_lines: lines of the selection, a trailing newline not starting one.
        selection_bytes: bytes of the selection.
        first_line_bytes: bytes of line ``start``.
    """

    total_lines: int
    kept: bytes = b""
    complete: bool = True
    selection_lines: int = 0
    selection_bytes: int = 0
    first_line_bytes: int = 0


def _nth_newline(chunk: bytes, n: int) -> int:
    """Index of the ``n``-th (1-based) newline of ``chunk``; the caller knows there are that many."""
    index = -1
    for _ in range(n):
        index = chunk.find(b"\n", index + 1)
    return index


def scan_lines(file: BinaryIO, start: int, end: int | None, keep: int) -> LineScan:
    """Scan ``file`` from its current position (its start) to the end.

    Args:
        file: a binary file positioned at its first byte (seekable).
        start: the first line of the selection, 0-based.
        end: the line after the selection (None: to the end of the file).
        keep: how many bytes of the selection to keep at most.
    """
    pos = newlines = 0
    start_at: int | None = 0 if start == 0 else None
    end_at: int | None = None
    first_end: int | None = None
    kept = bytearray()
    while chunk := file.read(CHUNK_BYTES):
        count = chunk.count(b"\n")
        if start_at is None and newlines + count >= start:
            start_at = pos + _nth_newline(chunk, start - newlines) + 1
        if end is not None and end > 0 and end_at is None and newlines + count >= end:
            end_at = pos + _nth_newline(chunk, end - newlines) + 1
        if start_at is not None:
            low = max(0, start_at - pos)
            if first_end is None:
                found = chunk.find(b"\n", low)
                first_end = None if found < 0 else pos + found
            if len(kept) < keep and low < len(chunk):
                kept += chunk[low : low + keep - len(kept)]
        newlines += count
        pos += len(chunk)
    total = newlines + 1
    if start_at is None or start >= total:
        return LineScan(total)
    selection_end = max(start_at, end_at - 1 if end_at is not None else pos)
    size = selection_end - start_at
    lines = (total if end is None else min(end, total)) - start
    if size == 0:
        lines = 0
    else:
        file.seek(selection_end - 1)
        if file.read(1) == b"\n":  # the selection ends with an empty line, which is not counted
            lines -= 1
    return LineScan(
        total_lines=total,
        kept=bytes(kept[:size]),
        complete=len(kept) >= size,
        selection_lines=max(0, lines),
        selection_bytes=size,
        first_line_bytes=(pos if first_end is None else first_end) - start_at,
    )
