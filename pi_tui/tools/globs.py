"""Glob patterns compiled to regular expressions over POSIX relative paths.

The glob arguments of find and grep (fd's and ripgrep's ``--glob``; ignore files go through
`pi_tui.util.ignore` and pathspec instead): ``*`` and ``?`` stay
within a path segment, ``**`` as a whole segment spans any number of directories, ``[...]`` is a
character class (``[!...]`` negated) and a backslash escapes the next character. Brace alternatives
(``{ts,tsx}``) are understood when ``braces`` is set.

Kept as our own because neither pathspec (gitignore semantics: a slash-less pattern matches at any
depth, no braces) nor the standard library (``fnmatch``'s ``*`` crosses ``/``; ``glob.translate`` is
3.13+) matches fd/ripgrep globs, and the translator is small.
"""

from __future__ import annotations

import re

__all__ = ["glob_to_regex"]


def glob_to_regex(pattern: str, *, braces: bool = False) -> str:
    """The regex source (without anchors) that matches what ``pattern`` matches."""
    segments = _split_segments(pattern, braces)
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:.*/)?")
            continue
        out.append(_segment(segment, braces))
        if not last:
            out.append("/")
    return "".join(out)


def _split_segments(pattern: str, braces: bool) -> list[str]:
    # Split on "/" outside brace groups, so "{a/b,c}" stays one piece.
    return _split_outside(pattern, "/", braces)


def _split_outside(text: str, separator: str, braces: bool) -> list[str]:
    """Split ``text`` on ``separator`` where it is not escaped and (with ``braces``) not inside ``{...}``."""
    pieces: list[str] = []
    current: list[str] = []
    depth = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index : index + 2])
            index += 2
            continue
        if braces and char == "{":
            depth += 1
        elif braces and char == "}" and depth:
            depth -= 1
        elif char == separator and depth == 0:
            pieces.append("".join(current))
            current = []
            index += 1
            continue
        current.append(char)
        index += 1
    pieces.append("".join(current))
    return pieces


def _segment(text: str, braces: bool) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            if index + 1 < len(text):
                out.append(re.escape(text[index + 1]))
                index += 2
            else:
                out.append(re.escape("\\"))
                index += 1
        elif char == "*":
            while index + 1 < len(text) and text[index + 1] == "*":
                index += 1
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            parsed = _char_class(text, index)
            if parsed is None:
                out.append(re.escape("["))
                index += 1
            else:
                regex, index = parsed
                out.append(regex)
        elif braces and char == "{":
            close = _matching_brace(text, index)
            if close == -1:
                out.append(re.escape("{"))
                index += 1
            else:
                options = _split_outside(text[index + 1 : close], ",", braces=True)
                out.append("(?:" + "|".join(glob_to_regex(option, braces=True) for option in options) + ")")
                index = close + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


def _char_class(text: str, start: int) -> tuple[str, int] | None:
    index = start + 1
    negated = index < len(text) and text[index] in "!^"
    if negated:
        index += 1
    members: list[str] = []
    first = True
    while index < len(text):
        char = text[index]
        if char == "]" and not first:
            body = "".join(members)
            # A class never matches the path separator.
            return (f"[^/{body}]" if negated else f"[{body}]"), index + 1
        if char == "\\" and index + 1 < len(text):
            members.append(re.escape(text[index + 1]))
            index += 2
        else:
            members.append("-" if char == "-" else re.escape(char))
            index += 1
        first = False
    return None


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1
