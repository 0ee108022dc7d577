from __future__ import annotations

from pi_tui.ai.types import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    TextContent,
    UserMessage,
)
from pi_tui.session import ContextTransformEntry, SessionManager, build_session_context
from pi_tui.session.context import ModelRef, iso_to_ms

from .helpers import assistant, user


def test_empty_and_null_leaf_give_an_empty_context() -> None:
    ctx = build_session_context([], None)
    assert (ctx.messages, ctx.thinking_level, ctx.model) == ([], "off", None)
    assert build_session_context([]).messages == []
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("x"))
    assert build_session_context(manager.get_entries(), None).messages == []


def test_thinking_level_and_model_come_from_the_path_only() -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_thinking_level_change("high")
    root = manager.append_model_change("openai", "gpt-5")
    manager.append_thinking_level_change("low")
    manager.append_message(assistant("a"))  # anthropic/claude-test
    ctx = manager.build_context()
    assert ctx.thinking_level == "low"
    assert ctx.model == ModelRef("anthropic", "claude-test")
    manager.branch(root.id)
    manager.append_message(user("other branch"))
    ctx = manager.build_context()
    assert ctx.thinking_level == "high"
    assert ctx.model == ModelRef("openai", "gpt-5")


def test_custom_messages_and_branch_summaries_become_messages() -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("q"))
    custom = manager.append_custom_message(
        "ext", [TextContent(text="injected")], display=False, details={"k": 1}
    )
    manager.append_custom("ext-state", {"x": 1})
    summary = manager.append_branch_summary("root", "what happened")
    manager.append_branch_summary("root", "")  # an empty summary is not emitted
    ctx = manager.build_context()
    assert [type(m) for m in ctx.messages] == [UserMessage, CustomMessage, BranchSummaryMessage]
    msg = ctx.messages[1]
    assert (msg.custom_type, msg.display, msg.details) == ("ext", False, {"k": 1})
    assert msg.timestamp == iso_to_ms(custom.timestamp) > 0
    assert ctx.messages[2].summary == "what happened" and ctx.messages[2].from_id == "root"
    assert ctx.message_entry_ids[1:] == [custom.id, summary.id]


def test_only_the_latest_compaction_counts() -> None:
    manager = SessionManager.in_memory("/p")
    e = [manager.append_message(user("m0"))]
    e.append(manager.append_message(assistant("m1")))
    e.append(manager.append_message(user("m2")))
    manager.append_compaction("first summary", e[1].id, 100)
    e.append(manager.append_message(assistant("m3")))
    e.append(manager.append_message(user("m4")))
    second = manager.append_compaction("second summary", e[3].id, 200)
    manager.append_message(assistant("m5"))
    ctx = manager.build_context()
    assert isinstance(ctx.messages[0], CompactionSummaryMessage)
    assert (ctx.messages[0].summary, ctx.messages[0].tokens_before) == ("second summary", 200)
    texts = [m.content[0].text for m in ctx.messages[1:]]
    assert texts == ["m3", "m4", "m5"]
    assert ctx.compaction is second
    assert ctx.message_entry_ids[0] == second.id


def test_compaction_keeping_everything_and_a_missing_first_kept_entry() -> None:
    manager = SessionManager.in_memory("/p")
    first = manager.append_message(user("m0"))
    manager.append_message(assistant("m1"))
    manager.append_compaction("s", first.id, 10)
    assert [m.role for m in manager.build_context().messages] == ["compactionSummary", "user", "assistant"]
    manager.append_compaction("s2", "gone0000", 10)
    assert [m.role for m in manager.build_context().messages] == ["compactionSummary"]


def test_compaction_on_another_branch_does_not_apply() -> None:
    manager = SessionManager.in_memory("/p")
    q = manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    manager.append_compaction("s", q.id, 10)
    manager.branch(q.id)
    manager.append_message(assistant("b"))
    assert [m.role for m in manager.build_context().messages] == ["user", "assistant"]


def test_context_transforms_on_the_path_are_returned_in_order_uninterpreted() -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("q"))
    t1 = manager.append_context_transform("a", [{"op": "x"}])
    off = manager.append_context_transform("off-path", [])
    manager.branch(t1.id)
    manager.append_message(assistant("r"))
    t2 = manager.append_context_transform("b", [{"op": "y"}])
    manager.append_ephemeral([UserMessage(content="request only")])
    ctx = manager.build_context()
    assert ctx.context_transforms == [t1, t2]
    assert off not in ctx.context_transforms
    assert all(isinstance(t, ContextTransformEntry) for t in ctx.context_transforms)
    # ephemeral messages are never part of a rebuilt context
    assert [m.role for m in ctx.messages] == ["user", "assistant"]
    # a replay can place each transform relative to the messages through the path
    assert ctx.path_index(t1.id) < ctx.path_index(ctx.message_entry_ids[1]) < ctx.path_index(t2.id)


def test_cycles_in_parent_ids_do_not_hang() -> None:
    manager = SessionManager.in_memory("/p")
    a = manager.append_message(user("a"))
    b = manager.append_message(assistant("b"))
    a.parent_id = b.id  # corrupt in memory on purpose
    ctx = build_session_context(manager.get_entries(), b.id)
    assert len(ctx.messages) == 2
