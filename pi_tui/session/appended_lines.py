"""Reading a session file's lines from where an earlier read ended, in large chunks.

The session picker's listing and the search text index both keep, per file, how far they read and the
bytes just before that point. A file that was only appended to since is read from there on; any other
change reads it again from its first entry. Lines reach a sink whole, several at a time, so the sink
scans one buffer per chunk instead of one bytes object per line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Protocol

__all__ = ["LineSink", "ReadEnd", "TAIL_CHECK", "continues_after", "feed_lines"]

TAIL_CHECK = 64
"""Bytes kept from before a read's end, to recognise later that the file was only appended to."""


class LineSink(Protocol):
    """What takes the lines: ``buf[pos:size]`` holds whole lines (the last may lack its newline)."""

    def feed(self, buf: bytes, pos: int = 0, size: int | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class ReadEnd:
    """Where a read stopped.

    Attributes:
        end: The offset after the last line, the file's size then.
        tail: The last `TAIL_CHECK` bytes before ``end``.
        ended: Whether the last line ended with a newline (a read can go on from ``end`` only then).
    """

    end: int
    tail: bytes
    ended: bool


def continues_after(handle: BinaryIO, header_size: int, end: int, tail: bytes, size: int) -> bool:
    """Whether the file under ``handle`` still holds ``tail`` just before ``end`` (it was only appended
    to): the handle is then at ``end``; otherwise it is back after the header line, to read everything."""
    if header_size <= end <= size:
        handle.seek(end - len(tail))
        if handle.read(len(tail)) == tail:
            return True
    handle.seek(header_size)
    return False


def feed_lines(
    handle: BinaryIO, sink: LineSink, chunk: int, between: Callable[[], None] | None = None
) -> ReadEnd:
    """Feed ``sink`` every line from the handle's position to the end of the file, ``chunk`` bytes at a
    time; ``between`` (if given) is called before each chunk is scanned."""
    carry = b""  # the start of a line that goes on in the next chunk
    while data := handle.read(chunk):
        if between is not None:
            between()
        cut = data.rfind(b"\n")
        if cut < 0:
            carry += data
            continue
        begin = 0
        if carry:
            begin = data.find(b"\n") + 1
            sink.feed(carry + data[:begin])
        sink.feed(data, begin, cut + 1)
        carry = data[cut + 1 :]
    end = handle.tell()
    if carry:
        sink.feed(carry)  # an unterminated last line: its text counts, but a later read cannot go on from it
    handle.seek(max(0, end - TAIL_CHECK))
    tail = handle.read(TAIL_CHECK)
    return ReadEnd(end, tail, not carry and tail.endswith(b"\n"))
