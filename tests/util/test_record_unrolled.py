"""The makers `Record` writes out for a class that makes many records must make exactly what the loop
over the field table makes, and raise exactly its errors, for every input (usual, odd and bad)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest

from pi_tui.ai.types import AssistantMessage, ToolResultMessage, Usage
from pi_tui.session.entries import MessageEntry
from pi_tui.util import record, record_unrolled
from pi_tui.util.record import Record, ValidationError, field


class Block(Record):
    camel_case = True
    type: Literal["block"] = "block"
    text: str
    weight: float = 1.0


class Sample(Record):
    """A field of every kind the written maker handles: required, plain default, factory, alias,
    nested record and list, optional, ``Any``."""

    camel_case = True
    kind: Literal["sample"] = "sample"
    sample_id: str
    count: int = 0
    ratio: float = 0.5
    tags: list[str] = field(default_factory=list)
    block: Block | None = None
    blocks: list[Block] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    note: str | None = None
    anything: Any = None
    named: str = field(default="", alias="NAMED")


BASE: dict[type[Record], dict[str, Any]] = {
    Sample: {
        "kind": "sample",
        "sampleId": "s1",
        "count": 3,
        "ratio": 0.25,
        "tags": ["a", "b"],
        "block": {"type": "block", "text": "t", "weight": 2.0},
        "blocks": [{"type": "block", "text": "u"}],
        "meta": {"k": 1},
        "note": None,
        "anything": [1, {"x": None}],
        "NAMED": "n",
    },
    AssistantMessage: {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hm", "thinkingSignature": "sig"},
            {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.py"}},
        ],
        "api": "anthropic-messages",
        "provider": "bench",
        "model": "m",
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 3,
            "cacheWrite": 4,
            "totalTokens": 10,
            "cost": {"input": 0.0, "output": 0.1, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.1},
        },
        "stopReason": "toolUse",
        "timestamp": 1748736004500,
    },
    ToolResultMessage: {
        "role": "toolResult",
        "toolCallId": "toolu_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "1: x"}],
        "isError": False,
        "timestamp": 1748736006000,
    },
    Usage: {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
}


def _variants(base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The usual dict, then each key dropped, retyped, renamed to its Python name, and an unknown key."""
    yield copy.deepcopy(base)
    yield {**copy.deepcopy(base), "unknownKey": {"kept": True}}
    yield dict(reversed(list(copy.deepcopy(base).items())))
    for key in base:
        dropped = copy.deepcopy(base)
        del dropped[key]
        yield dropped
        for odd in ("text", 7, 7.0, 2.5, True, None, [], {}, [{"type": "nope"}], {"type": "block"}):
            changed = copy.deepcopy(base)
            changed[key] = odd
            yield changed
        value = base[key]
        if isinstance(value, dict):  # a mapping that is not a dict, and a record already made
            yield {**copy.deepcopy(base), key: OrderedDict(copy.deepcopy(value))}
        if isinstance(value, list) and value and isinstance(value[0], dict):
            first = value[0]
            for item in ("x", {}, {k: v for k, v in first.items() if k != "type"}, OrderedDict(first), None):
                yield {**copy.deepcopy(base), key: [copy.deepcopy(item), *copy.deepcopy(value[1:])]}
            yield {**copy.deepcopy(base), key: tuple(copy.deepcopy(value))}
        snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
        if snake != key:
            renamed = {snake if k == key else k: v for k, v in copy.deepcopy(base).items()}
            yield renamed
            yield {**copy.deepcopy(base), snake: copy.deepcopy(base[key])}  # given twice


def _outcome(make: Callable[[dict[str, Any]], Record], data: dict[str, Any]) -> tuple[str, Any]:
    try:
        made = make(data)
    except ValidationError as exc:
        return "error", str(exc)
    state = dict(made.__dict__)
    dump = made.model_dump(by_alias=True)
    for name in made.__dict__.get("_defaulted", ()):  # a factory's value (a timestamp: now) is not compared
        state[name] = "made by its factory"
        dump[type(made).model_fields[name].alias or name] = "made by its factory"
    return "made", (state, dump, made.model_fields_set)


def _twin(cls: type[Record]) -> type[Record]:
    """A class with the same fields and its own makers (none written out yet)."""
    return type(cls.__name__, (cls,), {"__module__": cls.__module__})


@pytest.mark.parametrize("cls", list(BASE), ids=lambda c: c.__name__)
def test_a_written_maker_makes_what_the_loop_makes_for_every_input(
    cls: type[Record], monkeypatch: pytest.MonkeyPatch
) -> None:
    warm, cold = _twin(cls), _twin(cls)
    monkeypatch.setattr(record, "_UNROLL_AFTER", 4)
    monkeypatch.setattr(record, "_KEY_SAMPLE", 4)
    for _ in range(8):  # the usual key set, often enough to be written out
        warm.model_validate(copy.deepcopy(BASE[cls]))
    monkeypatch.setattr(record, "_UNROLL_AFTER", 10**9)  # the twin keeps to its loop
    checked = 0
    for data in _variants(BASE[cls]):
        assert _outcome(warm.model_validate, copy.deepcopy(data)) == _outcome(
            cold.model_validate, copy.deepcopy(data)
        ), data
        checked += 1
    assert checked > 50


def test_a_maker_is_written_only_for_a_class_that_makes_many_records(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    real = record_unrolled.unrolled_maker

    def counting(cls: type, *args: Any) -> Callable[..., Any]:
        written.append(cls.__name__)
        return real(cls, *args)

    monkeypatch.setattr(record_unrolled, "unrolled_maker", counting)
    few, many = _twin(Usage), _twin(MessageEntry)
    for _ in range(50):
        few.model_validate(dict(BASE[Usage]))
    assert written == []
    entry = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-06-01T00:00:00.000Z"}
    for _ in range(record._UNROLL_AFTER + record._KEY_SAMPLE):
        made = many.model_validate({**entry, "message": copy.deepcopy(BASE[ToolResultMessage])})
    assert written.count("MessageEntry") == 1
    # and what it then makes is what the loop made
    again = many.model_validate({**entry, "message": copy.deepcopy(BASE[ToolResultMessage])})
    assert again == made and again.__dict__.keys() == made.__dict__.keys()
