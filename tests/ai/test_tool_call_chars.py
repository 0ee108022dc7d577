"""A tool call's arguments are measured as pi measures them: the characters (UTF-16 code units, as
JavaScript counts them) of their compact JSON with non-ASCII text kept. The fast encoder (orjson) is used
only where its text is as long as the stdlib's: these tests compare every measure with the stdlib's text
on values where the two could differ."""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest

from pi_tui.ai.tokens import count_message_tokens, js_length, message_chars
from pi_tui.ai.types import AssistantMessage, ToolCall


def _stdlib_chars(arguments: Any) -> int:
    return js_length(json.dumps(arguments or {}, separators=(",", ":"), ensure_ascii=False))


def _measured(arguments: Any) -> int:
    call = ToolCall(id="c1", name="edit", arguments=arguments)
    return message_chars(AssistantMessage(content=[call])) - len("edit")


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


ODD = [
    {},
    {"path": "a.py"},
    {"text": "é ü ñ — “quotes” 日本語 🙂 e\u0301 \u2028 \u2029 \x7f"},  # several bytes per character in UTF-8
    {"text": 'tab\tnew\nline\r "quoted" back\\slash \x00 \x01 \x1f \b \f'},  # escaped by both encoders
    {"a": {"b": [1, [2, [3, {"c": [None, True, False]}]]]}},
    {"deep": json.loads("[" * 200 + "]" * 200)},
    {"deeper": json.loads("[" * 300 + "]" * 300)},  # beyond orjson's nesting limit
    {"content": "x" * 1_000_000},
    {"content": "é" * 300_000 + "🙂" * 100_000},
    {"floats": [0.1, 1.0, -0.0, 100.0, 1e15, 1e16, 1e22, 1.5e300, 5e-324, 123456789.123]},
    {"small": [1e-4, 9.99e-5, 1e-5, 1.5e-5, 1e-7, 1e-10, 1.234e-20, 1e-300]},
    {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")},
    {"ints": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1]},
    {"big": [2**64, -(2**63) - 1, 10**40]},
    {"surrogate": "\ud800 lone"},
    {"nulls": [None, "null", "nullable"], "text": "1e-5 and 0.00001 as text"},
    {"tuple": (1, "two", (3,))},
    {"enum": Colour.RED},
    {Name("key"): Name("value")},
]


@pytest.mark.parametrize("arguments", ODD, ids=range(len(ODD)))
def test_arguments_measure_as_the_stdlib_writes_them(arguments: Any) -> None:
    assert _measured(arguments) == _stdlib_chars(arguments)


KEY_TAILS = ["", "é", "🙂", '"']


def _random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-(2**70), 2**70) if rng.random() < 0.1 else rng.randint(-1000, 10**12)
    if kind == 2:
        return rng.random() * 10 ** rng.randint(-30, 30) * rng.choice([1, -1])
    if kind in (3, 4, 5):
        alphabet = 'abc xyz-_/."\\\n\t\x00\x1f\x7fé日🙂\u2028e01null'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
    if kind in (6, 7):
        return {
            f"k{i}" + rng.choice(KEY_TAILS): _random_value(rng, depth + 1) for i in range(rng.randrange(5))
        }
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def test_random_nested_arguments_measure_as_the_stdlib_writes_them() -> None:
    rng = random.Random(26)
    for _ in range(3000):
        arguments = {"value": _random_value(rng, 0)}
        assert _measured(arguments) == _stdlib_chars(arguments), arguments


def test_a_message_with_several_tool_calls_counts_each() -> None:
    calls = [ToolCall(id=f"c{i}", name=f"tool{i}", arguments=args) for i, args in enumerate(ODD[:6])]
    message = AssistantMessage(content=calls)
    chars = sum(len(f"tool{i}") + _stdlib_chars(args) for i, args in enumerate(ODD[:6]))
    assert message_chars(message) == chars
    assert count_message_tokens(message) == -(-chars // 4)


def test_arguments_the_stdlib_cannot_write_still_fail_as_before() -> None:
    with pytest.raises(TypeError):
        _measured({"when": object()})
