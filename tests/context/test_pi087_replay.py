"""pi 0.86/0.87 entries replayed into the envelope and the session context: system messages and their
patches in order, compaction checkpoints, retain-none compactions, context edits (latest per target on
the active branch), usage entries (totals only), UUIDv7 session ids."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from pi_tui.context.engine import replay_entries
from pi_tui.context.envelope import ContextEnvelope, SystemPart
from pi_tui.session import SessionManager
from pi_tui.session.entries import ContextEditEntry, entry_to_line, parse_entry
from pi_tui.session.paths import new_session_id
from pi_tui.session.usage import UsageTotals, add_usage, extra_usages

HEADER = {"type": "session", "version": 3, "id": "01a20e93-08fe-7462-b35c-5d9653c94e60", "cwd": "/p"}
TOOL_A = {"name": "a", "description": "tool a", "parameters": {"type": "object", "properties": {}}}
TOOL_B = {"name": "b", "description": "tool b", "parameters": {"type": "object", "properties": {}}}


class _Chain:
    """Builds a session file: each entry's parent is the previous one unless given."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [HEADER]
        self.last: str | None = None

    def add(self, entry_type: str, entry_id: str, parent: str | None | bool = True, **fields: Any) -> str:
        parent_id = self.last if parent is True else parent
        self.lines.append(
            {
                "type": entry_type,
                "id": entry_id,
                "parentId": parent_id,
                "timestamp": "2026-11-24T17:00:00.000Z",
                **fields,
            }
        )
        self.last = entry_id
        return entry_id

    def system(self, entry_id: str, **message: Any) -> str:
        return self.add(
            "message", entry_id, message={"role": "system", "content": "", "timestamp": 1, **message}
        )

    def user(self, entry_id: str, text: str, parent: str | None | bool = True) -> str:
        return self.add(
            "message", entry_id, parent, message={"role": "user", "content": text, "timestamp": 1}
        )

    def assistant(self, entry_id: str, text: str) -> str:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "anthropic-messages",
            "provider": "p",
            "model": "m",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 1,
        }
        return self.add("message", entry_id, message=message)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def _texts(messages: Any) -> list[str]:
    out = []
    for m in messages:
        content = getattr(m, "content", None)
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(getattr(b, "text", "") for b in content))
        else:
            out.append(getattr(m, "summary", ""))
    return out


def _replay(path: Path) -> tuple[ContextEnvelope, Any]:
    with SessionManager.open(path, read_only=True) as manager:
        base = ContextEnvelope(system_parts=(SystemPart("ours", "pi-tui prompt"),))
        return replay_entries(base, manager.get_branch()), manager.build_context()


def test_system_patches_replay_in_order(tmp_path: Path) -> None:
    chain = _Chain()
    chain.system(
        "s1",
        sections={"preamble": "P", "tools": "<tools>T</tools>", "cwd": "<cwd>/p</cwd>"},
        toolsAdded=[TOOL_A],
    )
    chain.user("u1", "hi")
    chain.assistant("a1", "hello")
    chain.system(
        "s2",
        sections={"tools": "<tools>T2</tools>", "cwd": None, "extra": "<extra>E</extra>"},
        toolsAdded=[TOOL_B],
    )
    chain.system("s3", toolsRemoved=[{"name": "a"}])
    env, context = _replay(chain.write(tmp_path / "s.jsonl"))
    assert env.system_compiled == "P\n\n<tools>T2</tools>\n\n<extra>E</extra>"
    assert [t.name for t in env.tools] == ["b"]
    assert _texts(env.cached) == ["hi", "hello"]  # system messages are never conversation messages
    assert context.system.prompt == env.system_compiled


def test_a_forced_prompt_is_content_and_later_content_is_appended(tmp_path: Path) -> None:
    chain = _Chain()
    chain.system("s1", content="Forced prompt.")
    chain.user("u1", "hi")
    chain.system("s2", content=[{"type": "text", "text": "More."}])
    env, _ = _replay(chain.write(tmp_path / "s.jsonl"))
    assert env.system_compiled == "Forced prompt.\n\nMore."
    assert env.tools == ()  # the session declared none


def test_without_system_messages_the_base_prompt_is_kept(tmp_path: Path) -> None:
    chain = _Chain()
    chain.user("u1", "hi")
    env, _ = _replay(chain.write(tmp_path / "s.jsonl"))
    assert env.system_compiled == "pi-tui prompt"


def test_compaction_checkpoint_replaces_earlier_system_messages_and_later_patches_apply(
    tmp_path: Path,
) -> None:
    chain = _Chain()
    chain.system("s1", sections={"preamble": "OLD"}, toolsAdded=[TOOL_A])
    chain.user("u1", "first")
    chain.assistant("a1", "one")
    chain.user("u2", "second")
    chain.system("s2", sections={"preamble": "KEPT RANGE PATCH"})
    chain.assistant("a2", "two")
    checkpoint = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "CHECKPOINT"},
        "toolsAdded": [TOOL_B],
        "timestamp": 2,
    }
    chain.add(
        "compaction", "c1", summary="S", firstKeptEntryId="u2", tokensBefore=10, systemMessage=checkpoint
    )
    chain.system("s3", sections={"rules": "<rules>R</rules>"})
    chain.user("u3", "third")
    env, context = _replay(chain.write(tmp_path / "s.jsonl"))
    assert env.system_compiled == "CHECKPOINT\n\n<rules>R</rules>"
    assert [t.name for t in env.tools] == ["b"]
    assert _texts(env.cached)[1:] == ["second", "two", "third"]
    assert context.system.prompt == env.system_compiled
    assert _texts(context.messages)[1:] == ["second", "two", "third"]


def test_retain_none_compaction_keeps_only_its_summary(tmp_path: Path) -> None:
    chain = _Chain()
    chain.user("u1", "first")
    chain.assistant("a1", "one")
    chain.add("compaction", "c1", summary="everything so far", firstKeptEntryId="c1", tokensBefore=10)
    chain.user("u2", "next")
    env, context = _replay(chain.write(tmp_path / "s.jsonl"))
    assert _texts(env.cached) == ["everything so far", "next"]
    assert _texts(context.messages) == ["everything so far", "next"]


def test_latest_context_edit_per_target_on_the_active_branch_wins(tmp_path: Path) -> None:
    chain = _Chain()
    chain.user("u1", "secret: 1234")
    chain.assistant("a1", "noted")
    chain.add("context_edit", "e1", targetId="u1", replacement={"content": "secret: [redacted]"})
    chain.add("context_edit", "e2", targetId="a1", replacement=None)
    fork_point = chain.add("context_edit", "e3", targetId="u1", replacement={"content": "secret: [gone]"})
    chain.user("u2", "go on")
    # an edit on another branch does not count
    chain.add("context_edit", "x1", parent=fork_point, targetId="u2", replacement=None)
    chain.user("u3", "other branch")
    path = chain.write(tmp_path / "s.jsonl")
    with SessionManager.open(path, read_only=True) as manager:
        manager.branch("u2")
        env = replay_entries(ContextEnvelope(), manager.get_branch())
        context = manager.build_context("u2")
    assert _texts(env.cached) == ["secret: [gone]", "go on"]
    assert _texts(context.messages) == ["secret: [gone]", "go on"]
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    assert raw[1]["message"]["content"] == "secret: 1234"  # the file keeps the original


def test_context_edit_replacing_an_assistant_with_a_string_makes_one_text_block(tmp_path: Path) -> None:
    chain = _Chain()
    chain.user("u1", "hi")
    chain.assistant("a1", "long answer")
    chain.add("context_edit", "e1", targetId="a1", replacement={"content": "short"})
    env, _ = _replay(chain.write(tmp_path / "s.jsonl"))
    (assistant,) = [m for m in env.cached if m.role == "assistant"]
    assert [(b.type, b.text) for b in assistant.content] == [("text", "short")]


def test_context_edit_null_replacement_is_written_back() -> None:
    chain = _Chain()
    chain.user("u1", "hi")
    chain.add("context_edit", "e1", targetId="u1", replacement=None)
    data = chain.lines[-1]
    entry = parse_entry(data, json.dumps(data))
    assert isinstance(entry, ContextEditEntry)
    rebuilt = json.loads(entry_to_line(entry))  # what a rewrite (migration, fork) writes
    assert "replacement" in rebuilt and rebuilt["replacement"] is None


def test_usage_entries_count_in_totals_and_never_in_context(tmp_path: Path) -> None:
    chain = _Chain()
    chain.user("u1", "hi")
    chain.assistant("a1", "hello")
    usage = {"input": 0, "output": 1, "cacheRead": 900, "cacheWrite": 0, "cost": {"total": 0.5}}
    chain.add("usage", "w1", kind="cache_warm", provider="p", model="m", usage=usage)
    chain.add("usage", "w2", kind="some_future_kind", provider="p", model="m", usage={"odd": True})
    chain.add(
        "compaction",
        "c1",
        summary="S",
        firstKeptEntryId="u1",
        tokensBefore=5,
        usage={"input": 10, "output": 5},
    )
    path = chain.write(tmp_path / "s.jsonl")
    env, context = _replay(path)
    assert _texts(env.cached) == ["S", "hi", "hello"]
    with SessionManager.open(path, read_only=True) as manager:
        assert not manager.load_report.has_problems
        totals = UsageTotals()
        for record in extra_usages(manager.get_entries()):
            add_usage(totals, record)
    assert (totals.input, totals.output, totals.cache_read, totals.cost) == (10, 6, 900, 0.5)


def test_new_session_ids_are_uuid_v7_and_sort_by_time() -> None:
    first, second = new_session_id(1_000), new_session_id(2_000)
    assert uuid.UUID(first).version == 7 and uuid.UUID(second).version == 7
    assert first < second


def test_a_persisted_context_patch_applies_on_top_of_pi_s_prompt(tmp_path: Path) -> None:
    chain = _Chain()
    chain.system("s1", sections={"preamble": "P"}, toolsAdded=[TOOL_A])
    chain.user("u1", "hi")
    patch = [{"op": "system_part_set", "scope": "cached", "partName": "memo", "text": "\n\nMEMO"}]
    chain.add("context_transform", "t1", schemaVersion=1, transformerName="memo", patch=patch)
    env, _ = _replay(chain.write(tmp_path / "s.jsonl"))
    assert env.system_compiled == "P\n\nMEMO"


def test_a_run_level_prompt_override_still_wins_over_pi_s_prompt(tmp_path: Path) -> None:
    chain = _Chain()
    chain.system("s1", sections={"preamble": "P"}, toolsAdded=[TOOL_A])
    chain.user("u1", "hi")
    with SessionManager.open(chain.write(tmp_path / "s.jsonl"), read_only=True) as manager:
        forced = ContextEnvelope(system_parts=(SystemPart("system", "FORCED"),))
        extended = ContextEnvelope(
            system_parts=(SystemPart("base", "ours"), SystemPart("before_agent_start", "+X"))
        )
        assert replay_entries(forced, manager.get_branch()).system_compiled == "FORCED"
        assert replay_entries(extended, manager.get_branch()).system_compiled == "P+X"


def test_a_compaction_without_a_checkpoint_brings_back_pi_tui_s_own_prompt(tmp_path: Path) -> None:
    chain = _Chain()
    chain.system("s1", sections={"preamble": "P"}, toolsAdded=[TOOL_A])
    chain.user("u1", "hi")
    chain.add("compaction", "c1", summary="S", firstKeptEntryId="u1", tokensBefore=5)
    env, context = _replay(chain.write(tmp_path / "s.jsonl"))
    assert env.system_compiled == "pi-tui prompt"
    assert env.tools == ()
    assert not context.system.seen
