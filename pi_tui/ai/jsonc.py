"""JSONC (JSON with comments and trailing commas) to plain JSON, keeping every offset.

pi reads ``models.json`` as JSONC since 0.73.1. Rather than pull in a parser library, comments and
trailing commas are blanked out with spaces (newlines inside block comments are kept), so the
result is the same length as the input and a line or column reported by `json` for the stripped
text is the line or column in the user's file.
"""

from __future__ import annotations

__all__ = ["JsoncError", "strip_jsonc"]


class JsoncError(ValueError):
    """The text cannot be JSONC (an unterminated block comment). ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _blank(chunk: str) -> str:
    # newlines survive so line numbers of everything after the comment stay right
    return "".join(ch if ch in "\r\n" else " " for ch in chunk)


def strip_jsonc(text: str, block_comment_lines: list[int] | None = None) -> str:
    """Return ``text`` with ``//`` and ``/* */`` comments and trailing commas replaced by spaces.

    Strings (with their escapes) are copied untouched, so ``"http://x"`` keeps its slashes. A
    leading UTF-8 BOM becomes a space. Everything else, valid or not, is left for the JSON parser
    to judge.

    Args:
        text: The JSONC source.
        block_comment_lines: When given, the 1-based line of each ``/*`` comment is appended: pi
            0.87.1 itself strips only ``//`` comments, so such a file works here but not in pi.

    Raises:
        JsoncError: a ``/*`` comment is never closed.
    """
    out: list[str] = []
    i = 0
    n = len(text)
    if text.startswith("\ufeff"):
        out.append(" ")
        i = 1
    pending_comma: int | None = None  # index in ``out`` of a comma that may turn out to be trailing
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            pending_comma = None
            i = j + 1
        elif ch == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(_blank(text[i:j]))
            i = j
        elif ch == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JsoncError("unterminated /* comment", text.count("\n", 0, i) + 1)
            if block_comment_lines is not None:
                block_comment_lines.append(text.count("\n", 0, i) + 1)
            out.append(_blank(text[i : j + 2]))
            i = j + 2
        elif ch in " \t\r\n":
            out.append(ch)
            i += 1
        else:
            if ch in "}]" and pending_comma is not None:
                out[pending_comma] = " "
            # ",," is an error the JSON parser should report where it is, so neither comma is blanked
            pending_comma = len(out) if ch == "," and pending_comma is None else None
            out.append(ch)
            i += 1
    return "".join(out)
