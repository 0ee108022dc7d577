"""Pure editing helpers for the prompt editor: pi's word boundaries, the kill ring and undo snapshots.

Kept apart from the widget so the rules can be read (and tested) without Textual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["KillRing", "Snapshot", "UndoStack", "word_end", "word_start"]

PUNCTUATION = frozenset("(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`")
"""pi's ASCII punctuation: it splits a word even where Unicode segmentation would not (``foo.bar``)."""

MARKER = re.compile(r"\[paste #\d+ (?:\+\d+ lines|\d+ chars)\]")
"""A collapsed paste: word motions step over it in one go, as pi does."""


def _kind(ch: str) -> str:
    """``space``, ``word`` or ``punct``: letters, digits and ``_`` (any script) make words."""
    if ch.isspace():
        return "space"
    if ch not in PUNCTUATION and (ch.isalnum() or ch == "_"):
        return "word"
    return "punct"


def _markers(line: str) -> list[tuple[int, int]]:
    return [m.span() for m in MARKER.finditer(line)] if "[paste #" in line else []


def word_start(line: str, column: int) -> int:
    """Where one word-left from ``column`` lands in ``line``: skip whitespace, then one word or one run
    of punctuation (a paste marker counts as one word)."""
    pos = min(column, len(line))
    while pos > 0 and _kind(line[pos - 1]) == "space":
        pos -= 1
    if pos == 0:
        return 0
    for start, end in _markers(line):
        if end == pos:
            return start
    kind = _kind(line[pos - 1])
    while pos > 0 and _kind(line[pos - 1]) == kind:
        pos -= 1
    return pos


def word_end(line: str, column: int) -> int:
    """Where one word-right from ``column`` lands in ``line`` (the mirror of :func:`word_start`)."""
    pos = max(0, column)
    size = len(line)
    while pos < size and _kind(line[pos]) == "space":
        pos += 1
    if pos >= size:
        return size
    for start, end in _markers(line):
        if start == pos:
            return end
    kind = _kind(line[pos])
    while pos < size and _kind(line[pos]) == kind:
        pos += 1
    return pos


@dataclass
class KillRing:
    """Emacs-style kill ring: consecutive kills grow one entry (a backward kill prepends), yank takes
    the newest entry and yank-pop rotates the ring."""

    entries: list[str] = field(default_factory=list)
    limit: int = 60

    def push(self, text: str, *, prepend: bool, accumulate: bool) -> None:
        """Record killed ``text``; with ``accumulate`` it joins the newest entry instead."""
        if not text:
            return
        if accumulate and self.entries:
            last = self.entries.pop()
            text = text + last if prepend else last + text
        self.entries.append(text)
        del self.entries[: -self.limit]

    def peek(self) -> str | None:
        """The newest entry (what a yank inserts)."""
        return self.entries[-1] if self.entries else None

    def rotate(self) -> None:
        """Move the newest entry to the back, so the one before it becomes the newest."""
        if len(self.entries) > 1:
            self.entries.insert(0, self.entries.pop())

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True)
class Snapshot:
    """The editor state an undo returns to: text, cursor and the paste markers' contents."""

    text: str
    cursor: tuple[int, int]
    pastes: dict[int, str]
    paste_counter: int


@dataclass
class UndoStack:
    """Snapshots taken before each change (typing coalesces into words, as in pi)."""

    snapshots: list[Snapshot] = field(default_factory=list)
    limit: int = 500

    def push(self, snapshot: Snapshot) -> None:
        """Remember ``snapshot`` (the oldest is dropped past ``limit``: a prompt's text is small)."""
        if self.snapshots and self.snapshots[-1] == snapshot:
            return  # nothing changed since the last one: one undo step, not two
        self.snapshots.append(snapshot)
        del self.snapshots[: -self.limit]

    def pop(self) -> Snapshot | None:
        """The newest snapshot, removed; None when there is nothing to undo."""
        return self.snapshots.pop() if self.snapshots else None

    def clear(self) -> None:
        """Forget every snapshot (after a submit)."""
        self.snapshots.clear()
