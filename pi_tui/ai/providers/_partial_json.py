"""A tolerant reader for JSON that is still arriving (tool-call arguments streamed in fragments).

`PartialJson.feed()` scans only the new fragment, so following a large argument (a whole file being
written) stays linear; `value()` closes whatever is open and parses with the C json module. Arguments
nested deeper than `json_safe.MAX_DEPTH` are never parsed: once the text goes that deep, `value()` is
None for good (the complete text is then rejected by the same limit when the call ends).
"""

from __future__ import annotations

import re
from typing import Any

from pi_tui.util import json_safe

__all__ = ["PartialJson", "parse_partial_json"]

# A string cut inside an escape sequence: a lone backslash or an incomplete \\uXXXX.
_TORN_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{0,3})?$")


class PartialJson:
    """Accumulates JSON text and parses its longest sensible prefix on demand."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._stack: list[str] = []  # the closers still owed, innermost last
        self._in_string = False
        self._escaped = False
        # Positions where the text can be cut and closed cleanly, with the closers owed there.
        self._cuts: list[tuple[int, str]] = [(0, "")]
        self._cache: tuple[int, Any] | None = None
        self._too_deep = False  # the text nested deeper than the limit: no parse will succeed

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def feed(self, fragment: str) -> None:
        if not fragment:
            return
        if self._too_deep:  # nothing more to track: keep the text only
            self._parts.append(fragment)
            self._length += len(fragment)
            return
        offset = self._length
        stack = self._stack
        for i, ch in enumerate(fragment):
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
                continue
            if ch == '"':
                self._in_string = True
            elif ch in "{[":
                stack.append("}" if ch == "{" else "]")
                if len(stack) > json_safe.MAX_DEPTH:
                    self._too_deep = True
                    stack.clear()
                    self._cuts.clear()
                    break
                self._cuts.append((offset + i + 1, "".join(reversed(stack))))
            elif ch in "}]":
                if stack:
                    stack.pop()
            elif ch == ",":
                # Cutting just before a comma drops only the element that follows it.
                self._cuts.append((offset + i, "".join(reversed(stack))))
        if len(self._cuts) > 64:
            del self._cuts[:-16]
        self._parts.append(fragment)
        self._length += len(fragment)

    def value(self) -> Any:
        """The best parse of the text so far, or ``None`` when nothing sensible can be read yet."""
        if self._cache is not None and self._cache[0] == self._length:
            return self._cache[1]
        result = self._parse()
        self._cache = (self._length, result)
        return result

    def _parse(self) -> Any:
        text = self.text
        if self._too_deep or not text.strip():
            return None
        closers = "".join(reversed(self._stack))
        head = text
        if self._in_string:
            head = _TORN_ESCAPE.sub("", text) if self._escaped or "\\" in text[-6:] else text
            head += '"'
        for candidate in (head + closers, text + closers):
            parsed = _loads(candidate)
            if parsed is not _FAIL:
                return parsed
        # The tail is an unfinished key, literal or number: fall back to the latest clean cut. Only a
        # few are tried, since each attempt parses the whole text again.
        for position, owed in reversed(self._cuts[-8:]):
            parsed = _loads(text[:position].rstrip().rstrip(",") + owed)
            if parsed is not _FAIL:
                return parsed
        return None


_FAIL = object()


def _loads(text: str) -> Any:
    try:
        return json_safe.loads(text)
    except ValueError:
        return _FAIL


def parse_partial_json(text: str) -> Any:
    """One-shot form of `PartialJson`: the best parse of ``text``."""
    parser = PartialJson()
    parser.feed(text)
    return parser.value()
