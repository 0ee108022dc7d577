"""Incremental replay and fingerprints give exactly what a full replay gives (the determinism contract).

Each request replays the previous request's path plus the entries appended since; `ReplayCache` folds
only those new entries. For every prefix of real sessions (pi's own files, with compactions, branch
summaries, context edits and system messages), extending the cached fold must equal `replay_entries`
on the same prefix, and the fingerprints computed with cached digests must equal fresh ones.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.convert import convert_to_llm, transform_messages
from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
    dump_message,
)
from pi_tui.context import request as request_module
from pi_tui.context.engine import ReplayCache, replay_entries
from pi_tui.context.envelope import ContextEnvelope, SystemPart
from pi_tui.context.request import fingerprint, to_llm_request
from pi_tui.session import SessionManager

from ..session.helpers import BEFORE_COMPACTION, LARGE

PI087 = Path(__file__).resolve().parent.parent / "fixtures" / "pi087"
FILES = [PI087 / "rich.jsonl", PI087 / "retain-none.jsonl", PI087 / "plain.jsonl", BEFORE_COMPACTION, LARGE]
BASE = ContextEnvelope(
    system_parts=(SystemPart("system", "You are terse."),),
    tools=(ToolDefinition(name="read", description="Read", parameters={"type": "object"}),),
)


def _path(file: Path) -> list[Any]:
    if not file.exists():
        pytest.skip(f"{file} is not available")
    with SessionManager.open(file, read_only=True) as manager:
        return list(manager.get_branch())


def _fresh_fingerprint(env: ContextEnvelope) -> list[Any]:
    """Fingerprints with every cache of the module emptied first."""
    request_module._CANONICAL.clear()
    request_module._SYSTEM.clear()
    request_module._Last.blocks = []
    request_module._Last.messages = []
    request_module._HistoryMemo.split = 0
    request_module._HistoryMemo.sources = []
    request_module._HistoryMemo.head = []
    return fingerprint(to_llm_request(env))


@pytest.mark.parametrize("file", FILES, ids=lambda f: f.name)
def test_extending_the_fold_entry_by_entry_equals_a_full_replay(file: Path) -> None:
    path = _path(file)
    cache = ReplayCache()
    step = max(1, len(path) // 60)  # every prefix of small files, ~60 prefixes of the large one
    for end in [*range(0, len(path), step), len(path)]:
        incremental = cache.replay(BASE, path[:end])
        assert incremental == replay_entries(BASE, path[:end]), f"{file.name}: prefix of {end} entries"


@pytest.mark.parametrize("file", FILES, ids=lambda f: f.name)
def test_cached_fingerprints_equal_fresh_ones(file: Path) -> None:
    path = _path(file)
    cache = ReplayCache()
    step = max(1, len(path) // 30)
    for end in [*range(1, len(path), step), len(path)]:
        env = cache.replay(BASE, path[:end])
        cached = fingerprint(to_llm_request(env))
        assert cached == _fresh_fingerprint(env), f"{file.name}: prefix of {end} entries"


def test_another_branch_or_base_folds_again() -> None:
    path = _path(PI087 / "rich.jsonl")
    cache = ReplayCache()
    cache.replay(BASE, path)
    shorter = path[: len(path) // 2]  # e.g. /tree navigated back: not an extension of the last path
    assert cache.replay(BASE, shorter) == replay_entries(BASE, shorter)
    other_base = replace(BASE, system_parts=(SystemPart("system", "Another prompt."),))
    assert cache.replay(other_base, path) == replay_entries(other_base, path)
    assert cache.replay(other_base, path).system_compiled != cache.replay(BASE, path).system_compiled


def test_the_same_blocks_after_a_changed_prefix_get_new_digests() -> None:
    path = _path(PI087 / "rich.jsonl")
    env = replay_entries(BASE, path)
    first = fingerprint(to_llm_request(env))
    changed = replace(env, system_parts=(SystemPart("system", "Changed."),))
    second = fingerprint(to_llm_request(changed))
    messages = [b for b in second if b.kind == "message"]
    assert messages and all(b.digest not in {o.digest for o in first} for b in messages)
    assert fingerprint(to_llm_request(env)) == first  # and back again


def _random_history(rng: random.Random, size: int) -> list[Any]:
    history: list[Any] = []
    calls: list[str] = []
    for n in range(size):
        roll = rng.random()
        if roll < 0.15:
            history.append(UserMessage(content=f"u{n}"))
        elif roll < 0.2:
            history.append(CustomMessage(custom_type="note", content=f"c{n}", display=True))
        elif roll < 0.25:
            history.append(
                BashExecutionMessage(
                    command="ls", output="x", exit_code=0, exclude_from_context=rng.random() < 0.5
                )
            )
        elif roll < 0.55:
            new_calls = [
                ToolCall(id=f"t{n}_{k}", name="read", arguments={}) for k in range(rng.randint(0, 2))
            ]
            history.append(
                AssistantMessage(
                    content=[TextContent(text=f"a{n}"), *new_calls],
                    stop_reason=rng.choice(["toolUse", "toolUse", "stop", "error", "aborted"]),
                )
            )
            calls = [c.id for c in new_calls]
        else:
            call_id = rng.choice([*calls, "orphan"]) if calls else "orphan"
            history.append(
                ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text=f"r{n}")])
            )
    return history


@pytest.mark.parametrize("seed", range(10))
def test_the_history_part_of_a_request_is_reused_exactly(seed: int) -> None:
    rng = random.Random(seed)
    history = _random_history(rng, 80)
    size = 0
    while size < len(history):
        size = min(len(history), size + rng.randint(1, 4))
        if rng.random() < 0.15:
            size = max(0, size - rng.randint(1, 8))  # another branch
        part = tuple(history[:size])
        expected = transform_messages(convert_to_llm(list(part)))
        got = request_module._history_messages(part)
        assert [id(m) for m in got if not isinstance(m, UserMessage | ToolResultMessage)] == [
            id(m) for m in expected if not isinstance(m, UserMessage | ToolResultMessage)
        ]
        # Synthetic "No result provided" results are made anew each time: compare all but their clock.
        assert [_untimed(m) for m in got] == [_untimed(m) for m in expected], (seed, size)


def _untimed(message: Any) -> dict[str, Any]:
    data = dump_message(message)
    data.pop("timestamp", None)
    return data


@pytest.mark.parametrize("seed", range(5))
def test_a_history_converted_in_pieces_equals_one_converted_in_one_go(seed: int) -> None:
    """`convert_in_pieces` (pause points between pieces, for a thread beside the UI) cuts before user and
    assistant messages: the tool-pairing repair must come out as it does over the whole history."""
    history = _random_history(random.Random(seed), 200)
    expected = transform_messages(convert_to_llm(list(history)))
    for piece in (1, 3, 7, 512):
        got = request_module.convert_in_pieces(history, piece)
        assert [_untimed(m) for m in got] == [_untimed(m) for m in expected], (seed, piece)
