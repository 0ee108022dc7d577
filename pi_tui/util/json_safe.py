"""Decoding JSON that comes from outside with a limit on how deeply it may nest.

Python's `json` module recurses once per nested array or object, so one line such as ``[[[[…]]]]``
a hundred thousand levels deep raises `RecursionError` — not a `ValueError` — wherever it is decoded,
and nothing that expects malformed JSON catches that. Every value read from outside (an RPC line, a
session line, a server-sent event, a model's tool-call arguments, a configuration file, extension
data) is decoded here instead: a value nested deeper than `MAX_DEPTH` raises `JsonTooDeepError`, which
is a `json.JSONDecodeError`, so each caller treats it exactly like any other malformed JSON.

The limit also protects what walks the decoded value afterwards (copying, dumping, rendering): those
recurse too, and 256 levels leave them ample room under the interpreter's recursion limit.

The check costs next to nothing for ordinary text: the opening brackets are counted by `str.count`
in C, and only text with more of them than the limit (a big file's source quoted in a tool result,
say) is looked at further, still without a Python step per character: C replaces and translations
reduce it to the brackets outside its strings (a split is needed only for strings with brackets in
them), and the depth comes from C replaces or a running sum.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate, repeat
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_RECORD_DEPTH", "JsonTooDeepError", "check_depth", "loads", "raw_decode"]

MAX_DEPTH = 256
"""Deepest nesting of arrays and objects accepted in a value from outside (tool-call arguments, a
configuration file)."""

MAX_RECORD_DEPTH = MAX_DEPTH + 16
"""Deepest nesting accepted in a record that carries such values (a session line, a server-sent event,
an RPC line): a session line holds a tool call's arguments a few levels down, and must read back."""

# A JSON string or one bracket: the steps of the search for the offending position (error path only).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_STEP = {"[": 1, "]": -1}
# Quotes and brackets stay, everything else goes (`_brackets_outside_strings`); then the quotes go and
# objects' braces become square brackets, before the depth is summed.
_NOT_QUOTE_OR_BRACKET = bytes(code for code in range(256) if code not in b'"[]{}')
_SQUARE = bytes.maketrans(b"{}", b"[]")
# How many innermost levels are peeled off by replaces before the depth is summed character by character.
_PAIR_PASSES = 16

_decoder = json.JSONDecoder()


class JsonTooDeepError(json.JSONDecodeError):
    """JSON nested deeper than the limit; ``pos`` is the bracket that went one level too far."""


def _error(doc: str, pos: int, limit: int) -> JsonTooDeepError:
    return JsonTooDeepError(f"JSON nested deeper than {limit} levels", doc, pos)


def _brackets_outside_strings(text: str) -> str:
    """The brackets of ``text`` that are not inside its JSON strings, objects' braces as square brackets.

    Every step is one C pass over the text's UTF-8 bytes (whose multi-byte characters have no ASCII
    byte in them), and no object is made per string: escaped backslashes and then escaped quotes go
    (every quote left opens or closes a string), then everything but quotes and brackets, then every
    pair of adjacent quotes. Such a pair is a string with no bracket in it, or the end of one string
    and the start of the next with nothing kept between them; dropping it takes two consecutive quotes
    away, so every other quote still opens or closes what it did, and the brackets between them stay
    inside or outside as before. Only strings with brackets in them are left to cut out (an
    unterminated string's brackets count as inside).
    """
    data = text.encode("utf-8", "surrogatepass")
    kept = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_QUOTE_OR_BRACKET)
    kept = kept.replace(b'""', b"")
    if b'"' in kept:
        kept = b"".join(kept.split(b'"')[0::2])
    return kept.translate(_SQUARE, b'"').decode("ascii")


def _depth_within(brackets: str, limit: int) -> bool:
    """Whether ``brackets`` (square brackets; other characters count as nothing) nest ``limit`` deep at most."""
    # Wide, shallow data: each pass (one C replace) removes the innermost level of every container,
    # so after ``passes`` passes what is left nests ``passes`` levels less deep.
    passes = 0
    while passes < _PAIR_PASSES:
        fewer = brackets.replace("[]", "")
        if not fewer:
            return True
        if fewer == brackets:
            break
        brackets = fewer
        passes += 1
    return passes + max(accumulate(map(_STEP.get, brackets, repeat(0))), default=0) <= limit


def _first_too_deep(text: str, start: int, limit: int) -> int:
    depth = 0
    for match in _TOKEN.finditer(text, start):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif char in "]}":
            depth -= 1
    return start


def check_depth(text: str, start: int = 0, *, limit: int = MAX_DEPTH) -> None:
    """Raise `JsonTooDeepError` when the JSON in ``text`` (from ``start``) nests deeper than ``limit``.

    Brackets inside strings do not count. Text that is not JSON may pass or fail; the decoder judges it.
    """
    if text.count("[", start) + text.count("{", start) <= limit:
        return
    brackets = _brackets_outside_strings(text[start:] if start else text)
    if brackets.count("[") <= limit or _depth_within(brackets, limit):
        return
    raise _error(text, _first_too_deep(text, start, limit), limit)


def _text_of(data: str | bytes | bytearray) -> str:
    if isinstance(data, str):
        return data
    # the same decoding `json.loads` applies to bytes (UTF-8, -16 or -32, told apart by their first bytes)
    return bytes(data).decode(json.detect_encoding(data), "surrogatepass")


def loads(data: str | bytes | bytearray, *, limit: int = MAX_DEPTH) -> Any:
    """`json.loads` for text from outside: nesting deeper than ``limit`` raises `JsonTooDeepError`.

    Raises:
        json.JSONDecodeError: the text is not JSON, or it nests too deeply (`JsonTooDeepError`).
        UnicodeDecodeError: bytes that are not in the encoding they start in.
    """
    text = _text_of(data)
    check_depth(text, limit=limit)
    try:
        return json.loads(text)
    except RecursionError:  # the caller's own stack was already deep: still a plain decoding error
        raise _error(text, 0, limit) from None


def raw_decode(text: str, pos: int = 0, *, limit: int = MAX_DEPTH) -> tuple[Any, int]:
    """`json.JSONDecoder.raw_decode` with the depth limit: the value at ``pos`` and where it ends.

    The depth is checked from ``pos`` to the end of ``text``, so a caller decoding many values from
    one text should check once and decode with `json` itself.
    """
    check_depth(text, pos, limit=limit)
    try:
        return _decoder.raw_decode(text, pos)
    except RecursionError:
        raise _error(text, pos, limit) from None
