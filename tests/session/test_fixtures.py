from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import AssistantMessage, CompactionSummaryMessage, ToolResultMessage
from pi_tui.session import MessageEntry, SessionManager, build_session_context
from pi_tui.session.context import ModelRef

from .helpers import BEFORE_COMPACTION, LARGE, read_lines

pytestmark = pytest.mark.skipif(not LARGE.exists(), reason="the real pi session fixtures are not available")


def _raw(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _last_model(raw: list[dict[str, Any]]) -> ModelRef | None:
    model = None
    for d in raw:
        if d["type"] == "model_change":
            model = ModelRef(d["provider"], d["modelId"])
        elif d["type"] == "message" and d["message"]["role"] == "assistant":
            model = ModelRef(d["message"]["provider"], d["message"]["model"])
    return model


def _pairing_problems(messages: list[Any]) -> tuple[list[str], set[str]]:
    """Orphan tool results and unanswered tool calls, after dropping errored/aborted assistant turns
    as the provider layer does."""
    orphans: list[str] = []
    unanswered: set[str] = set()
    pending: set[str] = set()
    for m in messages:
        if isinstance(m, AssistantMessage):
            unanswered |= pending
            pending = set()
            if m.stop_reason in ("error", "aborted"):
                continue
            pending = {c.id for c in m.tool_calls()}
        elif isinstance(m, ToolResultMessage):
            if m.tool_call_id in pending:
                pending.discard(m.tool_call_id)
            else:
                orphans.append(m.tool_call_id)
        else:
            unanswered |= pending
            pending = set()
    return orphans, unanswered | pending


def test_large_session_loads_migrates_and_carries_all_914_messages() -> None:
    raw = _raw(LARGE)
    manager = SessionManager.open(LARGE, read_only=True)
    assert manager.load_report.migrated_from == 1
    assert not manager.load_report.has_problems
    entries = manager.get_entries()
    assert len(entries) == len(raw) - 1 == 1018
    assert manager.id == raw[0]["id"]
    assert manager.header.version == 3
    # v1 → v2 gives a linear chain: each entry's parent is the previous one
    assert entries[0].parent_id is None
    assert all(entries[i].parent_id == entries[i - 1].id for i in range(1, len(entries)))
    assert all(len(e.id) == 8 for e in entries)

    ctx = manager.build_context()
    assert len(ctx.messages) == 914
    assert ctx.messages == [e.message for e in entries if isinstance(e, MessageEntry)]
    assert ctx.thinking_level == [d["thinkingLevel"] for d in raw if d["type"] == "thinking_level_change"][-1]
    assert ctx.model == _last_model(raw)
    assert _pairing_problems(ctx.messages) == ([], set())


def test_before_compaction_uses_only_the_latest_compaction_and_its_kept_entries() -> None:
    raw = _raw(BEFORE_COMPACTION)
    manager = SessionManager.open(BEFORE_COMPACTION, read_only=True)
    entries = manager.get_entries()
    compactions = [i for i, d in enumerate(raw) if d["type"] == "compaction"]
    assert compactions == [359, 628]
    latest = raw[628]
    # firstKeptEntryIndex counts the header line as index 0, so it is a file line index
    assert latest["firstKeptEntryIndex"] == 551
    assert entries[627].type == "compaction"
    assert entries[627].first_kept_entry_id == entries[550].id
    assert entries[358].first_kept_entry_id == entries[292].id

    ctx = manager.build_context()
    expected = [
        d["message"] for i, d in enumerate(raw) if d["type"] == "message" and (551 <= i < 628 or i > 628)
    ]
    assert isinstance(ctx.messages[0], CompactionSummaryMessage)
    assert ctx.messages[0].summary == latest["summary"]
    assert ctx.messages[0].tokens_before == 185014
    assert [m.timestamp for m in ctx.messages[1:]] == [m["timestamp"] for m in expected]
    assert len(ctx.messages) == 1 + len(expected) == 446
    assert ctx.message_entry_ids[0] == entries[627].id
    assert ctx.model == _last_model(raw)
    assert ctx.thinking_level == "off"
    orphans, unanswered = _pairing_problems(ctx.messages)
    assert orphans == []
    # pi left exactly one call unanswered (line 628, right before the compaction); the provider layer
    # answers it with a synthetic "No result provided" result
    assert unanswered == {"toolu_01571BXn2nSXvrR7sxVHAXXE"}


def test_bash_executions_survive_migration() -> None:
    manager = SessionManager.open(BEFORE_COMPACTION, read_only=True)
    bash = [
        e for e in manager.get_entries() if isinstance(e, MessageEntry) and e.message.role == "bashExecution"
    ]
    assert len(bash) == 3
    assert all(b.message.command for b in bash)


def test_loading_large_session_is_fast() -> None:
    SessionManager.open(LARGE, read_only=True)  # warm imports and pydantic
    best = float("inf")
    for _ in range(3):
        # CPU time, not wall: on a busy machine the wall clock counts other processes' turns (0.55 s of
        # wall for a ~25 ms load with 15 processes running on 2 cores)
        start = time.process_time()
        manager = SessionManager.open(LARGE, read_only=True)
        build_session_context(manager.get_entries(), manager.get_leaf_id())
        best = min(best, time.process_time() - start)
    # typically ~25 ms here; the bound leaves room for a slow CI machine
    assert best < 0.5


def test_appending_to_a_migrated_v1_file_rewrites_it_as_v3_with_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl"
    shutil.copy(LARGE, path)
    original = LARGE.read_bytes()
    with SessionManager.open(path) as manager:
        ids_before = [e.id for e in manager.get_entries()]
        manager.append_session_info("migrated")
        assert "rewrote the file as format v3; the original is kept as" in manager.load_report.summary()
    backup = path.with_name(path.name + ".v1.bak")
    assert backup.read_bytes() == original
    lines = read_lines(path)
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    assert all("id" in d and "parentId" in d for d in lines[1:])
    assert [d["id"] for d in lines[1:-1]] == ids_before
    assert lines[-1]["type"] == "session_info" and lines[-1]["parentId"] == ids_before[-1]
    # the v1 header fields pi no longer reads are carried over rather than dropped
    assert lines[0]["modelId"] == "claude-sonnet-4-5"

    reopened = SessionManager.open(path, read_only=True)
    assert reopened.load_report.migrated_from is None
    assert not reopened.load_report.has_problems
    assert reopened.name == "migrated"
    assert len(reopened.build_context().messages) == 914
