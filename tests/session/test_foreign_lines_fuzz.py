"""Fuzz: foreign lines (unknown entry types, roles, fields, usage kinds, message shapes) inserted into
real session files never crash loading or replay, and the next append loses no line.

Each case is one seed of a deterministic generator, so a failure names a reproducible file.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from pi_tui.context.engine import replay_entries
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.context.request import to_llm_request
from pi_tui.session import RawEntry, SessionManager
from pi_tui.session.entries import is_assistant_entry

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi087"
SOURCES = ["plain.jsonl", "rich.jsonl", "retain-none.jsonl"]

_ODD_VALUES: list[Any] = [
    None,
    0,
    -1,
    3.5,
    True,
    "",
    "x" * 40,
    "\u2028line\u2029sep",
    "\U0001f600",
    [],
    [1, "two", None],
    {},
    {"nested": {"deep": [{"a": 1}]}},
]
_ROLES = [
    "system",
    "developer",
    "tool",
    "function",
    "assistant ",
    "",
    "bashExecution",
    "custom",
    "future_role",
]
_TYPES = ["usage", "context_edit", "future_entry", "message", "compaction", "branch_summary", "label", "x"]


def _odd(rng: random.Random) -> Any:
    return copy.deepcopy(rng.choice(_ODD_VALUES))


def _foreign_entry(rng: random.Random, ids: list[str], n: int) -> dict[str, Any]:
    """A new line of a known or unknown type in a shape pi-tui may not model."""
    kind = rng.choice(_TYPES)
    entry: dict[str, Any] = {
        "type": kind,
        "id": f"fz{n:06x}",
        "parentId": rng.choice([*ids, None, "missing0"]),
        "timestamp": rng.choice(["2026-11-24T17:00:00.000Z", "not a time", 5]),
    }
    if kind == "usage":
        entry.update(
            kind=rng.choice(["cache_warm", "future_kind", "", 7]),
            provider="p",
            model="m",
            usage=rng.choice(
                [{"input": 1, "output": 2, "cost": {"total": 0.1}}, {"tokens": "many"}, _odd(rng)]
            ),
        )
    elif kind == "context_edit":
        entry.update(
            targetId=rng.choice([*ids, "missing0", _odd(rng)]),
            replacement=rng.choice(
                [
                    None,
                    {"content": "short"},
                    {"content": [{"type": "text", "text": "t"}]},
                    {"content": 5},
                    _odd(rng),
                ]
            ),
        )
    elif kind == "message":
        message: dict[str, Any] = {"role": rng.choice(_ROLES), "timestamp": 1}
        message["content"] = rng.choice(
            ["text", [{"type": "future_block", "data": 1}], [{"type": "text", "text": "t"}], _odd(rng)]
        )
        if message["role"] == "system":
            message["sections"] = rng.choice([{"preamble": "p"}, {"x": None}, {"bad": 3}, _odd(rng)])
            message["toolsAdded"] = rng.choice(
                [
                    [{"name": "t", "description": "d", "parameters": {"type": "object"}}],
                    [{"name": 1}],
                    _odd(rng),
                ]
            )
        entry["message"] = message
    elif kind == "compaction":
        entry.update(
            summary=rng.choice(["s", _odd(rng)]),
            firstKeptEntryId=rng.choice([*ids, entry["id"], None, "missing0"]),
            tokensBefore=rng.choice([10, "many"]),
            systemMessage=rng.choice([{"role": "system", "content": "", "sections": {"a": "b"}}, _odd(rng)]),
        )
    else:
        for _ in range(rng.randint(0, 4)):
            entry[f"field{rng.randint(0, 99)}"] = _odd(rng)
    return entry


def _mutate_existing(rng: random.Random, data: dict[str, Any]) -> dict[str, Any]:
    """An existing line with unknown fields, an unknown role or an unmodelled message shape."""
    data = copy.deepcopy(data)
    choice = rng.randrange(5)
    message = data.get("message")
    if choice == 0 or not isinstance(message, dict):
        data[f"future{rng.randint(0, 9)}"] = _odd(rng)
    elif choice == 1:
        message["role"] = rng.choice(_ROLES)
    elif choice == 2:
        message[f"newField{rng.randint(0, 9)}"] = _odd(rng)
    elif choice == 3:
        message["content"] = rng.choice([[{"type": "future_block"}], _odd(rng)])
    else:
        usage = message.get("usage")
        if isinstance(usage, dict):
            usage["kind"] = "future"
            usage[rng.choice(["reasoning", "cacheWrite1h", "cost"])] = _odd(rng)
        else:
            message["usage"] = _odd(rng)
    return data


def _fuzzed_lines(source: Path, seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = source.read_text(encoding="utf-8").split("\n")[:-1]
    header, body = lines[0], lines[1:]
    ids = [json.loads(line).get("id") for line in body]
    out: list[str] = []
    for n, line in enumerate(body):
        if rng.random() < 0.3:
            out.append(json.dumps(_mutate_existing(rng, json.loads(line)), ensure_ascii=False))
        else:
            out.append(line)
        if rng.random() < 0.4:
            out.append(json.dumps(_foreign_entry(rng, [i for i in ids if isinstance(i, str)], n)))
    return [header, *out]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("seed", range(30))
def test_foreign_lines_never_crash_loading_and_survive_an_append(
    source: str, seed: int, tmp_path: Path
) -> None:
    path = tmp_path / source
    lines = _fuzzed_lines(FIXTURES / source, seed)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with SessionManager.open(path) as manager:
        summary = manager.load_report.summary()
        assert "\n" not in summary  # one line for the user
        context = manager.build_context()
        env = replay_entries(ContextEnvelope(), manager.get_branch())
        request = to_llm_request(env)
        assert len(request.messages) <= len(context.messages) + 1
        manager.append_session_info("after fuzz")

    after = path.read_text(encoding="utf-8").split("\n")[:-1]
    assert after[: len(lines)] == lines  # every line kept byte for byte
    assert len(after) == len(lines) + 1
    assert json.loads(after[-1])["type"] == "session_info"


def test_foreign_lines_on_the_path_keep_their_bytes_through_a_fork(tmp_path: Path) -> None:
    for seed in range(50):  # the first seed that puts a foreign line on an assistant's path
        path = tmp_path / f"rich-{seed}.jsonl"
        lines = _fuzzed_lines(FIXTURES / "rich.jsonl", seed)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with SessionManager.open(path) as manager:
            leaf = next(e.id for e in reversed(manager.get_entries()) if is_assistant_entry(e))
            raw = [e.line for e in manager.get_branch(leaf) if isinstance(e, RawEntry)]
            if not raw:
                continue
            fork = manager.create_branched_session(leaf)
            fork.append_session_info("fork")
            fork.close()
        assert fork.path is not None
        forked = fork.path.read_text(encoding="utf-8").split("\n")
        assert all(line in forked for line in raw)
        return
    pytest.fail("no seed put a foreign line on an assistant's path")
