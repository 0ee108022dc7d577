from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.ai.types import BranchSummaryMessage, UserMessage
from pi_tui.session import EntryNotFoundError, LabelEntry, MessageEntry, SessionManager

from .helpers import assistant, read_lines, user


def _texts(manager: SessionManager) -> list[str]:
    out = []
    for m in manager.build_context().messages:
        if isinstance(m, BranchSummaryMessage):
            out.append(f"summary:{m.summary}")
        else:
            out.append(m.content if isinstance(m.content, str) else m.content[0].text)
    return out


def test_branching_keeps_both_branches_in_the_file_and_only_the_active_one_in_context(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    q1 = manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    manager.append_message(user("q2"))
    manager.append_message(assistant("a2"))
    manager.branch(a1.id)
    q2b = manager.append_message(user("q2b"))
    a2b = manager.append_message(assistant("a2b"))
    assert q2b.parent_id == a1.id
    assert _texts(manager) == ["q1", "a1", "q2b", "a2b"]
    manager.close()

    assert manager.path is not None
    lines = read_lines(manager.path)
    texts = [d["message"]["content"][0]["text"] for d in lines[1:]]
    assert texts == ["q1", "a1", "q2", "a2", "q2b", "a2b"]
    reopened = SessionManager.open(manager.path, read_only=True)
    assert reopened.get_leaf_id() == a2b.id  # the last entry of the file
    assert _texts(reopened) == ["q1", "a1", "q2b", "a2b"]
    children = reopened.get_children(a1.id)
    assert [c.message.content[0].text for c in children] == ["q2", "q2b"]  # oldest first
    roots = reopened.get_tree()
    assert len(roots) == 1 and roots[0].entry.id == q1.id
    assert [len(n.children) for n in (roots[0], roots[0].children[0])] == [1, 2]


def test_context_can_be_built_for_any_leaf(tmp_path: Path) -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    manager.append_message(user("q2"))
    assert [m.role for m in manager.build_context(a1.id).messages] == ["user", "assistant"]
    assert manager.build_context(None).messages == []
    assert len(manager.build_context("unknown1").messages) == 3  # an unknown leaf: the last entry


def test_reset_leaf_starts_a_new_root(tmp_path: Path) -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("q1"))
    manager.reset_leaf()
    assert manager.build_context().messages == []
    second = manager.append_message(user("fresh"))
    assert second.parent_id is None
    assert len(manager.get_tree()) == 2
    assert _texts(manager) == ["fresh"]


def test_branch_with_summary_attaches_at_the_target_and_enters_the_context() -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    manager.append_message(user("q2 explored"))
    summary = manager.branch_with_summary(a1.id, "we explored q2", details={"readFiles": []})
    assert summary.parent_id == a1.id and summary.from_id == a1.id
    assert manager.get_leaf_id() == summary.id
    assert _texts(manager) == ["q1", "a1", "summary:we explored q2"]
    root_summary = manager.branch_with_summary(None, "from the top")
    assert root_summary.parent_id is None and root_summary.from_id == "root"
    with pytest.raises(EntryNotFoundError, match="Entry nope0000 not found"):
        manager.branch_with_summary("nope0000", "x")


def test_branch_to_an_unknown_entry_raises() -> None:
    manager = SessionManager.in_memory("/p")
    with pytest.raises(EntryNotFoundError, match="Entry deadbeef not found in this session"):
        manager.branch("deadbeef")


def test_labels_last_wins_empty_clears_and_unknown_target_raises() -> None:
    manager = SessionManager.in_memory("/p")
    q1 = manager.append_message(user("q1"))
    manager.append_label(q1.id, "first")
    manager.append_label(q1.id, "second")
    assert manager.get_label(q1.id) == "second"
    tree = manager.get_tree()
    assert tree[0].label == "second"
    cleared = manager.append_label(q1.id, "")
    assert cleared.label is None
    assert manager.get_label(q1.id) is None
    with pytest.raises(EntryNotFoundError):
        manager.append_label("00000000", "x")
    # labels never reach the model
    assert [m.role for m in manager.build_context().messages] == ["user"]


def test_session_name_is_the_latest_non_empty_name() -> None:
    manager = SessionManager.in_memory("/p")
    assert manager.name is None
    manager.append_session_info("one")
    manager.append_session_info("two")
    assert manager.name == "two"
    with pytest.raises(ValueError, match="cannot be empty"):
        manager.append_session_info("   ")
    assert manager.name == "two"


def test_every_append_type_chains_to_the_leaf() -> None:
    manager = SessionManager.in_memory("/p")
    made = [
        manager.append_message(user("u")),
        manager.append_thinking_level_change("low"),
        manager.append_model_change("openai", "gpt"),
        manager.append_custom("ext"),
        manager.append_custom_message("ext", "hello"),
        manager.append_session_info("n"),
        manager.append_context_transform("t", []),
        manager.append_ephemeral([]),
        manager.append_compaction("s", "x", 1),
        manager.append_branch_summary("root", "b"),
    ]
    made.append(manager.append_label(made[0].id, "l"))
    assert [e.parent_id for e in made] == [None] + [e.id for e in made[:-1]]
    assert manager.get_branch() == made
    assert manager.get_leaf_entry() is made[-1]


def test_create_branched_session_links_to_its_parent_and_copies_the_path(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    q1 = manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    manager.append_label(q1.id, "start")
    q2 = manager.append_message(user("q2"))
    manager.append_label(q2.id, "off-path")
    manager.append_message(assistant("a2"))

    forked = manager.create_branched_session(a1.id)
    assert forked.path is not None and forked.path != manager.path
    assert forked.path.exists()  # the path holds an assistant message: written at once
    lines = read_lines(forked.path)
    assert lines[0]["parentSession"] == str(manager.path)
    assert lines[0]["id"] == forked.id != manager.id
    assert [d["id"] for d in lines[1:3]] == [q1.id, a1.id]
    label = lines[3]
    assert label["type"] == "label" and label["targetId"] == q1.id and label["label"] == "start"
    assert label["parentId"] == a1.id
    assert len(lines) == 4  # the off-path label and later entries are not copied
    assert forked.get_label(q1.id) == "start"
    assert _texts(forked) == ["q1", "a1"]
    # the original is untouched and still usable
    assert manager.get_leaf_id() != forked.get_leaf_id()
    manager.append_message(user("still here"))
    forked.close()
    manager.close()


def test_branched_session_without_assistant_is_written_lazily(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    q1 = manager.append_message(user("q1"))
    manager.append_message(assistant("a1"))
    forked = manager.create_branched_session(q1.id)
    assert forked.path is not None and not forked.path.exists()
    forked.append_message(assistant("again"))
    assert [d["type"] for d in read_lines(forked.path)] == ["session", "message", "message"]
    empty = manager.create_branched_session(None)
    assert empty.get_entries() == [] and empty.parent_session == str(manager.path)
    for m in (forked, empty, manager):
        m.close()


def test_in_memory_fork_stays_in_memory() -> None:
    manager = SessionManager.in_memory("/p")
    q1 = manager.append_message(user("q1"))
    forked = manager.create_branched_session(q1.id)
    assert forked.path is None and forked.parent_session is None
    assert [type(e) for e in forked.get_entries()] == [MessageEntry]
    assert forked.get_entries()[0] is not q1  # a copy, not shared


def test_user_messages_for_forking_lists_every_user_message() -> None:
    manager = SessionManager.in_memory("/p")
    q1 = manager.append_message(user("q1"))
    manager.append_message(assistant("a1"))
    q2 = manager.append_message(UserMessage(content="q2 as string"))
    assert manager.get_user_messages_for_forking() == [(q1.id, "q1"), (q2.id, "q2 as string")]
    assert all(not isinstance(e, LabelEntry) for e in manager.get_entries())
