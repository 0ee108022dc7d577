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
say) is looked at further, still without a Python step per character: its strings are cut out (by
json's own string scanner, or by replaces and a split), the rest is reduced to its brackets, and the
depth comes from C replaces or a running sum.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate, repeat
from json import decoder as _json_decoder
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
# Outside its strings JSON has brackets, numbers, literals, commas, colons and whitespace: all but the
# brackets are dropped, and objects' braces become square brackets, before the depth is summed.
_ONLY_BRACKETS = str.maketrans("{}", "[]", "0123456789+-.eE,: \t\r\ntruefalsn")
# How many strings are skipped one by one before the rest are cut out in bulk.
_FEW_STRINGS = 64
# How many innermost levels are peeled off by replaces before the depth is summed character by character.
_PAIR_PASSES = 16

_decoder = json.JSONDecoder()
# The C string scanner json itself uses: (text, index after the opening quote, strict) -> (value, end).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = _json_decoder.scanstring  # type: ignore[attr-defined]


class JsonTooDeepError(json.JSONDecodeError):
    """JSON nested deeper than the limit; ``pos`` is the bracket that went one level too far."""


def _error(doc: str, pos: int, limit: int) -> JsonTooDeepError:
    return JsonTooDeepError(f"JSON nested deeper than {limit} levels", doc, pos)


def _outside_strings(text: str) -> str:
    """``text`` with its JSON strings cut out (an unterminated string's text is kept)."""
    kept: list[str] = []
    pos = 0
    # A few strings (typically: big ones) are skipped one by one with the C string scanner ...
    for _ in range(_FEW_STRINGS):
        quote = text.find('"', pos)
        if quote < 0:
            kept.append(text[pos:])
            return "".join(kept)
        kept.append(text[pos:quote])
        try:
            pos = _scanstring(text, quote + 1, False)[1]
        except ValueError:
            pos = quote + 1
    # ... many more (typically: small ones) by whole-text replaces and a split. With escaped
    # backslashes and then escaped quotes gone, every quote left opens or closes a string.
    rest = text[pos:].replace("\\\\", "").replace('\\"', "")
    kept.extend(rest.split('"')[0::2])
    return "".join(kept)


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
    outside = _outside_strings(text[start:] if start else text)
    if outside.count("[") + outside.count("{") <= limit:
        return
    if _depth_within(outside.translate(_ONLY_BRACKETS), limit):
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
