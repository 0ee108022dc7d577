"""`SessionManager.restore_state` gives what `build_context` gives for the model, the thinking level and
whether there are messages, at every leaf of a session with every kind of entry that matters to them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pi_tui.session import SessionManager
from pi_tui.session.context import ModelRef, RestoreState

STAMP = "2025-01-01T00:00:00.000Z"


def _assistant(provider: str, model: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "stopReason": "stop",
        "timestamp": 1,
    }


USER = {"role": "user", "content": "q", "timestamp": 1}

# (id, parent, the rest of the entry): a main line with a side branch off "m2"
ENTRIES: list[tuple[str, str | None, dict[str, Any]]] = [
    ("t1", None, {"type": "thinking_level_change", "thinkingLevel": "high"}),
    ("b0", "t1", {"type": "branch_summary", "fromId": "root", "summary": ""}),  # empty: no message
    ("u1", "b0", {"type": "message", "message": USER}),
    ("e1", "u1", {"type": "context_edit", "targetId": "u1", "replacement": None}),  # u1 omitted ...
    ("m1", "e1", {"type": "model_change", "provider": "openai", "modelId": "gpt-5"}),
    ("a1", "m1", {"type": "message", "message": _assistant("anthropic", "claude")}),
    ("e2", "a1", {"type": "context_edit", "targetId": "a1", "replacement": None}),
    ("m2", "e2", {"type": "model_change", "provider": "google", "modelId": "gemini"}),
    ("e3", "m2", {"type": "context_edit", "targetId": "u1", "replacement": {"content": "x"}}),  # ... back
    ("t2", "e3", {"type": "thinking_level_change", "thinkingLevel": "low"}),
    ("c1", "t2", {"type": "compaction", "summary": "s", "firstKeptEntryId": "t2", "tokensBefore": 5}),
    ("a2", "c1", {"type": "message", "message": _assistant("mistral", "large")}),
    # a side branch: an omitted custom message, then a non-empty branch summary
    ("x1", "m2", {"type": "custom_message", "customType": "ext", "content": "c", "display": True}),
    ("x2", "x1", {"type": "context_edit", "targetId": "x1", "replacement": None}),
    ("x3", "x2", {"type": "custom_message", "customType": "ext", "content": "d", "display": True}),
    ("y1", "m2", {"type": "branch_summary", "fromId": "a1", "summary": "left"}),
]


def test_restore_state_matches_the_built_context_at_every_leaf(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": STAMP, "cwd": str(tmp_path)}
    lines = [json.dumps(header)]
    for entry_id, parent, rest in ENTRIES:
        lines.append(
            json.dumps({"type": rest["type"], "id": entry_id, "parentId": parent, "timestamp": STAMP, **rest})
        )
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path, read_only=True)

    seen = set()
    for entry_id, _parent, _rest in ENTRIES:
        manager.branch(entry_id)
        ctx = manager.build_context()
        state = manager.restore_state()
        assert (state.model, state.thinking_level, state.has_messages) == (
            ctx.model,
            ctx.thinking_level,
            bool(ctx.messages),
        ), entry_id
        seen.add((state.model, state.thinking_level, state.has_messages))
    assert len(seen) >= 6  # the leaves really differ in what they restore


def test_restore_state_follows_appends_and_moves_of_the_leaf() -> None:
    manager = SessionManager.in_memory("/p")
    first = manager.append_model_change("openai", "gpt-5")
    assert manager.restore_state().model == ModelRef("openai", "gpt-5")
    manager.append_model_change("google", "gemini")
    assert manager.restore_state().model == ModelRef("google", "gemini")
    manager.append_thinking_level_change("high")
    assert manager.restore_state().thinking_level == "high"
    manager.branch(first.id)
    assert manager.restore_state() == RestoreState(ModelRef("openai", "gpt-5"), "off", False)


@pytest.mark.parametrize("seed", range(8))
def test_restore_state_matches_the_built_context_on_random_paths(tmp_path: Path, seed: int) -> None:
    # restore_state reads the path from its end and stops early: any mix and order must agree
    rng = random.Random(seed)
    templates = [rest for _id, _parent, rest in ENTRIES if rest["type"] != "context_edit"]
    header = {"type": "session", "version": 3, "id": "s", "timestamp": STAMP, "cwd": str(tmp_path)}
    lines, ids = [json.dumps(header)], []
    for n in range(40):
        if ids and rng.random() < 0.15:
            replacement = None if rng.random() < 0.7 else {"content": "x"}
            rest: dict[str, Any] = {
                "type": "context_edit",
                "targetId": rng.choice(ids),
                "replacement": replacement,
            }
        else:
            rest = rng.choice(templates)
        entry_id = f"n{n}"
        parent = ids[-1] if ids else None
        lines.append(
            json.dumps({"type": rest["type"], "id": entry_id, "parentId": parent, "timestamp": STAMP, **rest})
        )
        ids.append(entry_id)
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path, read_only=True)
    for entry_id in ids:
        manager.branch(entry_id)
        ctx = manager.build_context()
        state = manager.restore_state()
        assert (state.model, state.thinking_level, state.has_messages) == (
            ctx.model,
            ctx.thinking_level,
            bool(ctx.messages),
        ), (seed, entry_id)
