"""A big plain session's lines are decoded and checked at once by msgspec (`plain_decode`): every line it
takes must come out as `json` reads it, and the reading must find what the usual decoding and checks find."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from bench.big_sessions import big_session_lines
from pi_tui.session.fast_context import PlainPath, read_plain_path
from pi_tui.session.loader import line_decoder
from pi_tui.session.plain_decode import decode_plain
from tests.session.test_fast_context import _sources


def _entry(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-06-01T00:00:01.000Z",
        "message": message,
    }


def _call(arguments: object, **extra: object) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "t1", "name": "read", "arguments": arguments, **extra}],
        "stopReason": "toolUse",
        "timestamp": 5,
    }


_USAGE_INT_COST = {
    "input": 1,
    "output": 2,
    "reasoning": 0,
    "totalTokens": 3,
    "cost": {"input": 0, "total": 0.5},
}
# Lines of plain entries (or nearly): each is either decoded to exactly what `json` gives or refused.
EDGE_LINES: list[bytes] = [
    # integers beyond 64 bits, floats with long mantissas, a negative zero, exponents
    b'{"type":"message","id":"e1","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall",'
    b'"id":"t","name":"n","arguments":{"a":123456789012345678901234567890,"b":-9223372036854775809,'
    b'"c":18446744073709551615,"d":0.1000000000000000055511151231257827,"e":-0.0,"f":1E2,"g":2.5e-320}}],'
    b'"timestamp":1}}',
    # numbers json reads as infinities or NaN
    b'{"type":"message","id":"e2","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall",'
    b'"id":"t","name":"n","arguments":{"a":1e400}}],"timestamp":1}}',
    b'{"type":"message","id":"e3","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall",'
    b'"id":"t","name":"n","arguments":{"a":NaN}}],"timestamp":1}}',
    # a lone surrogate escape (json keeps it), a surrogate pair, an escaped NUL, raw non-ASCII
    b'{"type":"message","id":"e4","parentId":null,"message":{"role":"user","content":"half \\ud83d","timestamp":1}}',
    b'{"type":"message","id":"e5","parentId":null,"message":{"role":"user","content":"\\ud83d\\ude00 \\u0000 \xc3\xa9",'
    b'"timestamp":1}}',
    # bytes that are not UTF-8 in a string, CESU-8 surrogates, a byte-order mark
    b'{"type":"message","id":"e6","parentId":null,"message":{"role":"user","content":"\xff","timestamp":1}}',
    b'{"type":"message","id":"e7","parentId":null,"message":{"role":"user","content":"\xed\xa0\x80","timestamp":1}}',
    b'\xef\xbb\xbf{"type":"message","id":"e8","parentId":null,"message":{"role":"user","content":"x","timestamp":1}}',
    # a key given twice (the last wins), of the same type and of two types
    b'{"type":"message","id":"e9","parentId":null,"message":{"role":"user","content":"a","content":"b","timestamp":1}}',
    b'{"type":"message","id":"ea","parentId":null,"message":{"role":"user","content":"a","timestamp":"x",'
    b'"timestamp":2}}',
    # the tag after the fields, whitespace around the value, a carriage return
    b' {"id":"eb","parentId":null,"message":{"content":"x","timestamp":1,"role":"user"},"type":"message"} \r\n',
    # data after the value, a raw tab in a string, a truncated line
    b'{"type":"message","id":"ec","parentId":null,"message":{"role":"user","content":"x","timestamp":1}} x',
    b'{"type":"message","id":"ed","parentId":null,"message":{"role":"user","content":"a\tb","timestamp":1}}',
    b'{"type":"message","id":"ee","parentId":null,"message":{"role":"user","content":"x"',
    # nested deeper than the limit, and deep but within it (refused: deeper than the structures' own bound)
    b'{"type":"message","id":"ef","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall",'
    b'"id":"t","name":"n","arguments":{"a":' + b"[" * 300 + b"]" * 300 + b'}}],"timestamp":1}}',
    b'{"type":"message","id":"eg","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall",'
    b'"id":"t","name":"n","arguments":{"a":' + b"[" * 200 + b"]" * 200 + b'}}],"timestamp":1}}',
    *(
        json.dumps(_entry(f"m{i}", None, message)).encode()
        for i, message in enumerate(
            [
                # optional fields null, absent or of the wrong type; an integer cost; unknown keys
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "textSignature": None}],
                    "timestamp": 1,
                },
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "textSignature": 3}],
                    "timestamp": 1,
                },
                {"role": "user", "content": [{"type": "text", "text": "x", "surprise": 1}], "timestamp": 1},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "tool_call_id": 1}],
                    "timestamp": 1,
                },
                {"role": "user", "content": "x", "timestamp": 1.0},
                {"role": "user", "content": "x", "timestamp": True},
                {"role": "user", "content": "x"},
                {"role": "user", "content": None, "timestamp": 1},
                {"role": "system", "content": "x", "timestamp": 1},
                {"role": "assistant", "content": [], "usage": _USAGE_INT_COST, "timestamp": 1},
                {"role": "assistant", "content": [], "usage": {"input": True}, "timestamp": 1},
                {"role": "assistant", "content": [], "usage": {"input": 1.5}, "timestamp": 1},
                {"role": "assistant", "content": [], "usage": None, "timestamp": 1},
                {"role": "assistant", "content": [], "stopReason": "bogus", "timestamp": 1},
                {"role": "assistant", "content": [], "stopReason": None, "timestamp": 1},
                {"role": "assistant", "content": [], "api": None, "timestamp": 1},
                {"role": "assistant", "content": [], "errorMessage": None, "responseId": "r", "timestamp": 1},
                {"role": "assistant", "content": [{"type": "image", "data": "x"}], "timestamp": 1},
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "t", "redacted": 1}],
                    "timestamp": 1,
                },
                _call({"p": {"deep": [1, {"x": None}]}}),
                _call(None),
                _call([]),
                _call({"p": 1}, thoughtSignature=None),
                {
                    "role": "toolResult",
                    "toolCallId": "t1",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "out"}],
                    "details": {"diff": [1, 2.5, None, {"a": "b"}]},
                    "isError": False,
                    "timestamp": 1,
                },
                {
                    "role": "toolResult",
                    "toolCallId": "t1",
                    "toolName": "read",
                    "content": [],
                    "isError": None,
                    "timestamp": 1,
                },
                {"role": "toolResult", "toolCallId": 1, "toolName": "read", "content": [], "timestamp": 1},
            ]
        )
    ),
    # entries that are not messages
    b'{"type":"model_change","id":"s1","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}',
    b'{"type":"model_change","id":"s2","parentId":null,"provider":"p"}',
    b'{"type":"thinking_level_change","id":"s3","parentId":"s1","thinkingLevel":"high"}',
    b'{"type":"label","id":"s4","parentId":"s3","targetId":"s1","label":null}',
    b'{"type":"label","id":"s5","parentId":"s3","label":"no target"}',
    b'{"type":"session_info","id":"s6","parentId":"s3"}',
    b'{"type":"session_info","id":"s7","parentId":"s3","name":5}',
    b'{"type":"message","id":"s8","message":{"role":"user","content":"no parentId key","timestamp":1}}',
    b'{"type":"message","id":"s9","parentId":7,"message":{"role":"user","content":"x","timestamp":1}}',
    b'{"type":"message","id":null,"parentId":null,"message":{"role":"user","content":"x","timestamp":1}}',
    b'{"type":"message","id":"sa","parentId":null,"timestamp":5,"message":{"role":"user","content":"x","timestamp":1}}',
    b'{"type":"compaction","id":"sb","parentId":null,"summary":"s","firstKeptEntryId":"x","tokensBefore":1}',
    b'{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}',
    b'["an array"]',
    b'"a string"',
    b"",
    b"   ",
]


def _same(a: object, b: object) -> bool:
    """Equal values of the same types (``1 == 1.0`` and ``True == 1`` are not enough). The order of an
    entry's keys may differ (the structures write their fields in pi's order); what a request sends
    in the order of the line (tool-call arguments) is compared as bytes by `test_fast_context`."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_same, a, b))
    if type(a) is float:
        return repr(a) == repr(b)
    return a == b


def _json(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError as exc:
        return exc


@pytest.mark.parametrize("raw", EDGE_LINES, ids=range(len(EDGE_LINES)))
def test_a_line_is_decoded_as_json_reads_it_or_refused(raw: bytes) -> None:
    expected = _json(raw)
    try:
        value, entry_id, parent, stamp = decode_plain(raw)
    except ValueError:
        return  # refused: the usual reading reads it
    assert _same(value, expected)
    assert isinstance(expected, dict)
    assert (entry_id, parent) == (expected["id"], expected["parentId"])
    assert stamp == (expected["message"]["timestamp"] if expected["type"] == "message" else 0)


def test_the_plain_shapes_are_taken_and_the_others_refused() -> None:
    """What the structures take: the lines a big plain session is made of, and of the edge lines the
    plain ones (that none of them is one the plain checks refuse is the next tests' part)."""
    taken = []
    for raw in EDGE_LINES:
        try:
            decode_plain(raw)
        except ValueError:
            continue
        taken.append(json.loads(raw)["id"])
    assert taken == [
        "e1",
        "e5",
        "e9",
        "eb",
        "m0",
        "m9",
        "m16",
        "m19",
        "m22",
        "m23",
        "s1",
        "s3",
        "s4",
        "s6",
    ]
    for line in big_session_lines(2_000, Path("/w"))[1:]:
        assert _same(decode_plain(line.encode())[0], json.loads(line))


def _read(path: Path, typed: bool) -> PlainPath | None:
    with open(path, "rb") as handle:
        return read_plain_path(handle, line_decoder(fast=True), typed=typed)


def _assert_same_reading(path: Path) -> None:
    fast, usual = _read(path, typed=True), _read(path, typed=False)
    if usual is None:
        assert fast is None, path.name
        return
    assert fast is not None, path.name
    for item in fields(PlainPath):
        assert _same_plain(getattr(fast, item.name), getattr(usual, item.name)), (path.name, item.name)


def _same_plain(a: object, b: object) -> bool:
    if type(a) is list and a and not isinstance(a[0], dict | list | str | int | float):
        return a == b  # report items (dataclasses)
    return a == b if not isinstance(a, dict | list) else _same(a, b)


def test_reading_with_the_typed_decoder_finds_what_the_usual_reading_finds(tmp_path: Path) -> None:
    for path in _sources(tmp_path):
        _assert_same_reading(path)


def test_a_session_of_edge_lines_is_read_as_the_usual_reading_reads_it(tmp_path: Path) -> None:
    """Every edge line in a plain session of its own, where the usual reading takes it or refuses the
    file: both readings agree on each (the plain prefix keeps the file big enough to matter)."""
    base = [line.encode() + b"\n" for line in big_session_lines(300, tmp_path)]
    agreed = 0
    for at, raw in enumerate(EDGE_LINES):
        path = tmp_path / f"edge-{at}.jsonl"
        path.write_bytes(b"".join(base[:150]) + raw + b"\n" + b"".join(base[150:]))
        _assert_same_reading(path)
        agreed += _read(path, typed=False) is not None
    assert agreed > 10  # many of them keep the file plain, so the comparison looked at whole readings
