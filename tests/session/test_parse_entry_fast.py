"""`parse_entry` builds a plain message entry with the class's maker directly; the entry (or the kept
raw line and its problem) must be what `MessageEntry.model_validate` gives, for good and bad lines."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pi_tui.session.entries import MessageEntry, RawEntry, SessionEntry, SystemMessageEntry, parse_entry
from pi_tui.util.record import ValidationError

_GOOD: dict[str, Any] = {
    "type": "message",
    "id": "a1",
    "parentId": None,
    "timestamp": "2026-11-26T19:00:00.000Z",
    "message": {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hm", "thinkingSignature": "sig"},
            {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a.py"}},
        ],
        "api": "anthropic-messages",
        "provider": "p",
        "model": "m",
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 3,
            "cacheWrite": 4,
            "totalTokens": 10,
            "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
        },
        "stopReason": "toolUse",
        "timestamp": 1,
    },
}


def _variants() -> list[dict[str, Any]]:
    out = [copy.deepcopy(_GOOD)]

    def change(path: list[Any], value: Any) -> None:
        data = copy.deepcopy(_GOOD)
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        out.append(data)

    change(["message", "stopReason"], "nope")
    change(["message", "content", 0, "thinking"], 5)
    change(["message", "content", 1, "type"], "unknown")
    change(["message", "usage", "cost", "total"], "x")
    change(["message", "usage", "input"], 1.0)  # a float for an int: the check decides
    change(["message", "timestamp"], True)
    change(["message", "role"], "user")  # a user message with assistant fields as extras
    change(["message", "role"], "toolResult")
    change(["message", "role"], "system")
    change(["message", "role"], 7)
    change(["message"], "not an object")
    change(["message"], None)
    change(["id"], 5)
    change(["parentId"], ["x"])
    change(["extraKey"], {"kept": True})
    missing = copy.deepcopy(_GOOD)
    del missing["id"]
    out.append(missing)
    no_message = copy.deepcopy(_GOOD)
    del no_message["message"]
    out.append(no_message)
    return out


def _general(data: dict[str, Any], line: str) -> SessionEntry:
    message = data.get("message")
    system = isinstance(message, dict) and message.get("role") == "system"
    cls = SystemMessageEntry if system else MessageEntry
    try:
        return cls.model_validate(data, tag_checked="type")
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        problem = f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid"))
        return RawEntry(data, line, problem=problem)


def _shown(entry: SessionEntry) -> Any:
    if isinstance(entry, RawEntry):
        return ("raw", entry.problem, entry.data, entry.line)
    return (type(entry).__name__, entry.model_dump(mode="json"), sorted(entry.model_fields_set))


@pytest.mark.parametrize("data", _variants(), ids=lambda d: json.dumps(d)[:60])
def test_parse_entry_equals_the_general_validation(data: dict[str, Any]) -> None:
    line = json.dumps(data)
    assert _shown(parse_entry(copy.deepcopy(data), line)) == _shown(_general(copy.deepcopy(data), line))
