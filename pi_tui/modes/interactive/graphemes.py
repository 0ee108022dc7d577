"""Where a user-perceived character starts and ends in a line, for the prompt editor's Backspace, Delete
and Left/Right: "é" written as e + a combining accent, "👍🏽" (an emoji and its skin tone), "👨‍👩‍👧"
(emoji joined by zero-width joiners) and a flag (two regional indicators) each count as one, as in pi.

A small subset of Unicode's extended grapheme cluster rules that covers what people type and paste:
combining marks, variation selectors, emoji modifiers, tag characters, ZWJ sequences and flag pairs.
"""

from __future__ import annotations

import unicodedata

__all__ = ["next_boundary", "previous_boundary"]

_ZWJ = "\u200d"


def _extends(ch: str) -> bool:
    """True for a character that belongs to the one before it."""
    code = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or 0xFE00 <= code <= 0xFE0F  # variation selectors (text or emoji style)
        or 0x1F3FB <= code <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
        or ch == _ZWJ
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def next_boundary(line: str, column: int) -> int:
    """The end of the character that starts at ``column`` (``len(line)`` at most)."""
    size = len(line)
    if column >= size:
        return size
    pos = column + 1
    if _regional(line[column]) and pos < size and _regional(line[pos]):
        pos += 1
    while pos < size and _extends(line[pos]):
        pos += 2 if line[pos] == _ZWJ and pos + 1 < size else 1
    return min(pos, size)


def previous_boundary(line: str, column: int) -> int:
    """The start of the character that ends at ``column`` (0 at least)."""
    pos = min(column, len(line)) - 1
    if pos <= 0:
        return 0
    while pos > 0 and (_extends(line[pos]) or line[pos - 1] == _ZWJ):
        pos -= 1
    if _regional(line[pos]):
        run = pos
        while run > 0 and _regional(line[run - 1]):
            run -= 1
        if (pos - run) % 2 == 1:  # the second of a pair: the flag starts one before
            pos -= 1
    return pos
