from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.types import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from pi_tui.session import (
    ContextTransformEntry,
    EphemeralEntry,
    MessageEntry,
    RawEntry,
    SessionManager,
)
from pi_tui.session.entries import entry_to_line

from .helpers import assistant, read_lines, tool_result, user

CWD = "/home/me/proj"


def _full_session(tmp_path: Path) -> SessionManager:
    manager = SessionManager.create(CWD, session_dir=tmp_path)
    manager.append_thinking_level_change("high")
    manager.append_model_change("anthropic", "claude-test")
    manager.append_message(user("read the file ünïcödé ✓"))
    call = ToolCall(id="toolu_1", name="read", arguments={"path": "a.py", "limit": None})
    first = assistant("", calls=[call])
    first.content.insert(0, ThinkingContent(thinking="let me look", thinking_signature="sig"))
    manager.append_message(first)
    manager.append_message(tool_result("toolu_1", "print('hi')\n"))
    manager.append_message(assistant("done"))
    manager.append_message(BashExecutionMessage(command="ls", output="a.py", exit_code=0))
    manager.append_custom("my-ext", {"state": [1, 2, None]})
    manager.append_custom_message(
        "note",
        [TextContent(text="remember"), ImageContent(data="aGk=", mime_type="image/png")],
        display=False,
    )
    manager.append_compaction("summary text", manager.get_entries()[2].id, 12345, {"readFiles": ["a.py"]})
    manager.append_branch_summary("root", "a branch summary")
    manager.append_label(manager.get_entries()[2].id, "start")
    manager.append_session_info("  my session  ")
    manager.append_context_transform(
        "redact",
        [
            {
                "op": "messages_cached_replace",
                "scope": "cached",
                "messages": [],
                "invalidateCacheReason": "secrets",
            }
        ],
        display={"title": "Redaction", "summary": "Removed secrets"},
    )
    manager.append_ephemeral([UserMessage(content="[ephemeral]", timestamp=0)])
    return manager


def test_a_session_written_by_pi_tui_round_trips(tmp_path: Path) -> None:
    manager = _full_session(tmp_path)
    manager.close()
    assert manager.path is not None
    reopened = SessionManager.open(manager.path, read_only=True)
    assert not reopened.load_report.has_problems
    assert reopened.load_report.summary() == ""
    assert reopened.header == manager.header
    assert reopened.get_entries() == manager.get_entries()
    assert reopened.get_leaf_id() == manager.get_leaf_id()
    assert reopened.name == "my session"
    assert reopened.get_label(manager.get_entries()[2].id) == "start"
    # every line re-serialises to exactly what is on disk
    disk = manager.path.read_text(encoding="utf-8").splitlines()
    assert [entry_to_line(e) for e in reopened.get_entries()] == disk[1:]


def test_lines_use_pi_key_order_and_keep_null_parent(tmp_path: Path) -> None:
    manager = _full_session(tmp_path)
    assert manager.path is not None
    lines = read_lines(manager.path)
    assert list(lines[0]) == ["type", "version", "id", "timestamp", "cwd"]
    assert lines[0]["version"] == 3 and lines[0]["cwd"] == CWD
    assert list(lines[1])[:4] == ["type", "id", "parentId", "timestamp"]
    assert lines[1]["parentId"] is None
    assert all(lines[i]["parentId"] == lines[i - 1]["id"] for i in range(2, len(lines)))
    assert "ünïcödé ✓" in manager.path.read_text(encoding="utf-8")  # not \u-escaped, as pi writes
    assert lines[4]["message"]["content"][1]["arguments"] == {"path": "a.py", "limit": None}
    assert lines[8]["data"] == {"state": [1, 2, None]}
    transform = lines[-2]
    assert transform["type"] == "context_transform"
    assert transform["schemaVersion"] == 1 and transform["transformerName"] == "redact"
    assert transform["patch"][0]["invalidateCacheReason"] == "secrets"
    assert lines[-1] == {
        "type": "ephemeral",
        "id": lines[-1]["id"],
        "parentId": transform["id"],
        "timestamp": lines[-1]["timestamp"],
        "messages": [{"role": "user", "content": "[ephemeral]", "timestamp": 0}],
    }


def test_pi_tui_entry_types_parse_as_models(tmp_path: Path) -> None:
    manager = _full_session(tmp_path)
    manager.close()
    assert manager.path is not None
    entries = SessionManager.open(manager.path, read_only=True).get_entries()
    assert isinstance(entries[-2], ContextTransformEntry)
    assert entries[-2].display == {"title": "Redaction", "summary": "Removed secrets"}
    assert isinstance(entries[-1], EphemeralEntry)
    assert isinstance(entries[-1].messages[0], UserMessage)


def test_unknown_entries_survive_byte_for_byte(tmp_path: Path) -> None:
    manager = _full_session(tmp_path)
    manager.close()
    assert manager.path is not None
    leaf = manager.get_leaf_id()
    odd = (
        '{"type":"future_thing", "id":"f00dcafe","parentId":"'
        + str(leaf)
        + '","timestamp":"2030-01-01T00:00:00.000Z",'
        '"payload":{"b":1,"a":[1.50,"\\u00e9"]}}'
    )
    invalid = (
        '{"type":"message","id":"badc0ffe","parentId":"f00dcafe","timestamp":"x","message":{"role":"robot"}}'
    )
    with manager.path.open("a", encoding="utf-8") as handle:
        handle.write(odd + "\n" + invalid + "\n")

    with SessionManager.open(manager.path) as reopened:
        report = reopened.load_report
        assert [(r.type, r.problem) for r in report.raw] == [
            ("future_thing", None),
            ("message", report.raw[1].problem),
        ]
        assert report.raw[1].problem is not None and "robot" in report.raw[1].problem
        raws = [e for e in reopened.get_entries() if isinstance(e, RawEntry)]
        assert [r.line for r in raws] == [odd, invalid]
        # unknown entries are tree nodes: the leaf is the last one, and appending continues from it
        assert reopened.get_leaf_id() == "badc0ffe"
        entry = reopened.append_message(user("after"))
        assert entry.parent_id == "badc0ffe"
        # and they do not disturb the context
        assert [m.role for m in reopened.build_context().messages][-1] == "user"
    text = manager.path.read_text(encoding="utf-8")
    assert odd + "\n" + invalid + "\n" in text

    forked = SessionManager.open(manager.path, read_only=True).create_branched_session("badc0ffe")
    forked.close()
    assert forked.path is not None
    assert odd in forked.path.read_text(encoding="utf-8").splitlines()


def test_nothing_is_written_before_the_first_assistant_message(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, session_dir=tmp_path / "sessions")
    manager.append_thinking_level_change("off")
    manager.append_message(user("hello"))
    assert manager.path is not None and not manager.path.exists()
    assert not (tmp_path / "sessions").exists()
    manager.append_message(assistant("hi"))
    assert [d["type"] for d in read_lines(manager.path)] == [
        "session",
        "thinking_level_change",
        "message",
        "message",
    ]
    manager.append_message(user("more"))
    assert len(read_lines(manager.path)) == 5
    manager.close()


def test_session_file_is_named_and_placed_like_pi(tmp_path: Path) -> None:
    manager = SessionManager.create("/Users/x/my:proj", session_id="0b5c1c3e-1111-4222-8333-944445555666")
    assert manager.path is not None
    assert manager.path.parent.name == "--Users-x-my-proj--"
    assert manager.path.parent.parent.name == "sessions"
    stamp = manager.header.timestamp.replace(":", "-").replace(".", "-")
    assert manager.path.name == f"{stamp}_0b5c1c3e-1111-4222-8333-944445555666.jsonl"


def test_message_dicts_are_accepted_and_summary_messages_refused(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(CWD)
    entry = manager.append_message({"role": "user", "content": "hi", "timestamp": 5})
    assert isinstance(entry, MessageEntry) and entry.message.content == "hi"
    custom = manager.append_message(CustomMessage(custom_type="x", content="y"))
    assert custom.message.role == "custom"
    with pytest.raises(ValueError, match="append_branch_summary"):
        manager.append_message(BranchSummaryMessage(summary="s"))


def test_entry_ids_are_8_hex_and_unique(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(CWD)
    ids = [manager.append_custom("t").id for _ in range(300)]
    assert len(set(ids)) == 300
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids)


def test_in_memory_session_never_touches_disk(tmp_path: Path, agent_dir: Path) -> None:
    manager = SessionManager.in_memory(CWD)
    manager.append_message(user("x"))
    manager.append_message(assistant("y"))
    assert manager.path is None
    assert not (agent_dir / "sessions").exists()
    assert json.dumps([m.role for m in manager.build_context().messages]) == '["user", "assistant"]'
