from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

import pytest

from pi_tui.util import json_safe
from pi_tui.util.json_safe import MAX_DEPTH, JsonTooDeepError

HOSTILE = "[" * 100_000 + "]" * 100_000


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _depth(value: Any) -> int:
    todo = [(value, 0)]
    deepest = 0
    while todo:
        item, level = todo.pop()
        if isinstance(item, list | dict):
            level += 1
            todo.extend((child, level) for child in (item.values() if isinstance(item, dict) else item))
        deepest = max(deepest, level)
    return deepest


def test_a_hundred_thousand_levels_is_a_decode_error_naming_the_limit_and_the_place() -> None:
    with pytest.raises(JsonTooDeepError) as caught:
        json_safe.loads(HOSTILE)
    assert isinstance(caught.value, json.JSONDecodeError)  # every `except ValueError` already handles it
    assert caught.value.msg == f"JSON nested deeper than {MAX_DEPTH} levels"
    assert caught.value.pos == MAX_DEPTH  # the bracket one level too deep
    with pytest.raises(JsonTooDeepError):
        json_safe.loads(HOSTILE.encode())


def test_the_limit_itself_is_accepted_and_one_more_level_is_not() -> None:
    assert _depth(json_safe.loads(_nested(MAX_DEPTH))) == MAX_DEPTH
    with pytest.raises(JsonTooDeepError):
        json_safe.loads(_nested(MAX_DEPTH + 1))
    objects = '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)
    with pytest.raises(JsonTooDeepError):
        json_safe.loads(objects)
    assert json_safe.loads(objects, limit=MAX_DEPTH + 1)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"code": "{[" * 5000, "quoted": ['he said "[[[["', "\\[\\"], "n": [[1]]})
    assert json_safe.loads(text)["n"] == [[1]]
    many = json.dumps([{"k[": 'v{\\"' * 3, "d": [[{}]]} for _ in range(400)])  # many small strings
    assert len(json_safe.loads(many)) == 400


def test_the_scan_agrees_with_the_real_depth_on_random_values() -> None:
    rng = random.Random(7)
    leaves: list[Any] = [1, -2.5e3, True, None, "x", 'q"[{', "\\]}", "{}" * 40, "é[ü{", "\ud800[", "", "\\"]

    def wrap(value: Any) -> Any:
        kind = rng.randrange(4)
        if kind == 0:
            return [value, rng.choice(leaves)]
        if kind == 1:
            return {"k{": value, "s": rng.choice(leaves)}
        if kind == 2:
            return [[], value, [[1], {}]]
        return {"a": [value]}

    for _ in range(300):
        value: Any = rng.choice(leaves)
        for _ in range(rng.choice([3, 120, MAX_DEPTH - 2, MAX_DEPTH, MAX_DEPTH + 3])):
            value = wrap(value)
        text = json.dumps(value, indent=rng.choice([None, 1]), ensure_ascii=rng.choice([True, False]))
        if _depth(value) <= MAX_DEPTH:
            assert json_safe.loads(text) == value
        else:
            with pytest.raises(JsonTooDeepError):
                json_safe.loads(text)


def test_strings_next_to_each_other_and_unicode_keep_their_brackets_inside() -> None:
    # Values one after another (as a stream of them is checked once), strings whose brackets sit at
    # their ends, empty strings between them, non-ASCII text and a lone surrogate around the brackets.
    deep = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    text = ' "a[" "[b" "" "é{{" "\ud800[[" ' + deep + ' "]]" "" "}"'
    json_safe.check_depth(text)
    inside = json.dumps(["[" * 400, "", "{" * 400, "é" + "[" * 400], ensure_ascii=False)
    assert len(json_safe.loads(inside)) == 4
    with pytest.raises(JsonTooDeepError):
        json_safe.check_depth(' "a[" "" "]" ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_raw_decode_checks_from_its_start() -> None:
    assert json_safe.raw_decode('xx {"a": [1]} ', 3) == ({"a": [1]}, 13)
    with pytest.raises(JsonTooDeepError):
        json_safe.raw_decode("xx " + HOSTILE, 3)


def test_a_deep_stack_still_gets_a_decode_error_not_a_recursion_error() -> None:
    allowed = _nested(MAX_DEPTH)

    def at_depth(levels: int) -> Any:
        if levels:
            return at_depth(levels - 1)
        return json_safe.loads(allowed)

    with pytest.raises(JsonTooDeepError):
        at_depth(sys.getrecursionlimit() - MAX_DEPTH // 2)


def _best_time(function: Any, text: str) -> float:
    # CPU time, not wall time: on a loaded machine the wall clock also counts the time other processes
    # had the core, and a decode interrupted that way looked slower than the check or faster than it.
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        function(text)
        best = min(best, time.process_time() - start)
    return best


def test_the_check_costs_little_beside_decoding() -> None:
    # a big tool result quoting source code (many brackets inside one string) and a wide array of objects
    source = "def f(x):\n    return {'a': [x[0], {'b': x}]}\n" * 2000
    line = json.dumps({"type": "message", "message": {"content": [{"type": "text", "text": source}]}})
    wide = json.dumps([{"a": [1, 2, {"b": "c"}]} for _ in range(5000)])
    for text in (line, wide):
        plain = _best_time(json.loads, text)
        checked = _best_time(json_safe.check_depth, text)
        assert checked < plain * 4, (checked, plain)
    start = time.process_time()
    with pytest.raises(JsonTooDeepError):
        json_safe.loads(HOSTILE)
    assert time.process_time() - start < 1.0
