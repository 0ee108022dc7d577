from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pi_tui.ai.types import AssistantMessage, ToolResultMessage, UserMessage
from pi_tui.compaction import (
    CompactionResult,
    append_compaction,
    compaction_mark,
    find_cut_point,
    prepare_compaction,
)
from pi_tui.compaction.prepare import find_valid_cut_points
from pi_tui.compaction.tokens import context_tokens
from pi_tui.context.engine import replay_entries
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.resources.settings_schema import CompactionSettings
from pi_tui.session import SessionManager

from .helpers import FIXTURES, answer, call, result, session_with, user


def settings(keep: int, reserve: int = 16384) -> CompactionSettings:
    return CompactionSettings(enabled=True, reserve_tokens=reserve, keep_recent_tokens=keep)


def five_turns() -> SessionManager:
    messages = []
    for n in range(1, 6):
        messages += [user(f"u{n}" + "x" * 398), answer(f"a{n}" + "y" * 398)]
    return session_with(*messages)


def texts(messages: list) -> list[str]:
    out = []
    for m in messages:
        content = (
            m.content if isinstance(m.content, str) else "".join(getattr(c, "text", "") for c in m.content)
        )
        out.append(content[:2])
    return out


def test_cut_at_a_user_message_keeps_whole_turns() -> None:
    session = five_turns()
    prep = prepare_compaction(session.get_branch(), settings(keep=200))
    assert prep is not None
    assert not prep.is_split_turn
    assert texts(prep.messages_to_summarize) == ["u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"]
    assert prep.turn_prefix_messages == []
    assert session.get_entry(prep.first_kept_entry_id).message.content.startswith("u5")


def test_cut_inside_a_turn_summarises_its_start_separately() -> None:
    session = five_turns()
    prep = prepare_compaction(session.get_branch(), settings(keep=250))
    assert prep is not None
    assert prep.is_split_turn
    assert texts(prep.messages_to_summarize) == ["u1", "a1", "u2", "a2", "u3", "a3"]
    assert texts(prep.turn_prefix_messages) == ["u4"]
    assert texts(prep.kept_messages) == ["a4", "u5", "a5"]


def test_a_tool_result_is_never_where_the_kept_context_starts() -> None:
    session = session_with(
        user("u" * 400),
        call("c1", "read", {"path": "a.txt"}),
        result("c1", "read", "r" * 4000),
        call("c2", "read", {"path": "b.txt"}),
        result("c2", "read", "s" * 4000),
        answer("done" * 25),
    )
    path = session.get_branch()
    assert all(
        not isinstance(path[i].message, ToolResultMessage) for i in find_valid_cut_points(path, 0, len(path))
    )
    # the budget is reached inside the first tool result: the cut moves forward to the next call
    cut = find_cut_point(path, 0, len(path), 1500)
    assert isinstance(path[cut.first_kept_index].message, AssistantMessage)
    assert path[cut.first_kept_index].message.tool_calls()[0].id == "c2"
    prep = prepare_compaction(path, settings(keep=1500))
    assert prep is not None and prep.is_split_turn
    assert [m.role for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert [m.role for m in prep.kept_messages] == ["assistant", "toolResult", "assistant"]


def test_the_cut_moves_back_over_settings_changes_without_splitting_a_turn() -> None:
    session = session_with(user("u1" + "x" * 398), answer("a1" + "y" * 398))
    thinking = session.append_thinking_level_change("high")
    session.append_model_change("p", "m2")
    session.append_message(user("u2" + "x" * 398))
    session.append_message(answer("a2" + "y" * 398))
    prep = prepare_compaction(session.get_branch(), settings(keep=150))
    assert prep is not None
    assert prep.first_kept_entry_id == thinking.id
    assert not prep.is_split_turn
    assert texts(prep.messages_to_summarize) == ["u1", "a1"]

    append_compaction(session, CompactionResult("S", prep.first_kept_entry_id, prep.tokens_before))
    env = replay_entries(ContextEnvelope(), session.get_branch())
    assert [m.role for m in env.cached] == ["compactionSummary", "user", "assistant"]
    assert env.cached[1].content.startswith("u2")


def test_nothing_to_compact_in_a_small_session_and_nothing_right_after_a_compaction() -> None:
    session = five_turns()
    assert prepare_compaction(session.get_branch(), settings(keep=20_000)) is None
    prep = prepare_compaction(session.get_branch(), settings(keep=200))
    assert prep is not None
    append_compaction(session, CompactionResult("S", prep.first_kept_entry_id, prep.tokens_before))
    path = session.get_branch()
    assert compaction_mark(path[-1]) is not None
    assert prepare_compaction(path, settings(keep=200)) is None


def test_a_second_compaction_updates_the_first_and_summarises_what_it_had_kept() -> None:
    session = session_with(
        *[m for n in range(1, 4) for m in (user(f"u{n}" + "x" * 398), answer(f"a{n}" + "y" * 398))]
    )
    first = prepare_compaction(session.get_branch(), settings(keep=200))
    assert first is not None
    summary = "S1\n\n<read-files>\na.py\n</read-files>"
    append_compaction(session, CompactionResult(summary, first.first_kept_entry_id, first.tokens_before))
    for n in (4, 5):
        session.append_message(user(f"u{n}" + "x" * 398))
        session.append_message(answer(f"a{n}" + "y" * 398))

    prep = prepare_compaction(session.get_branch(), settings(keep=200))
    assert prep is not None
    assert prep.previous_summary == "S1"
    assert texts(prep.messages_to_summarize) == ["u3", "a3", "u4", "a4"]
    assert texts(prep.kept_messages) == ["u5", "a5"]
    # the summary message and the six messages in context, at chars/4
    assert prep.tokens_before == -(-len(summary) // 4) + 6 * 100


def test_file_lists_are_cumulative_over_compactions_and_ignore_extension_details() -> None:
    session = session_with(user("u" * 400), answer("a" * 400))
    session.append_context_transform(
        "compaction",
        [
            {
                "op": "compaction_apply",
                "scope": "cached",
                "summary": "S1",
                "firstKeptEntryId": session.get_branch()[0].id,
                "tokensBefore": 10,
                "details": {"readFiles": ["a.py", "old.py"], "modifiedFiles": ["b.py"]},
                "invalidateCacheReason": "compaction",
            }
        ],
    )
    for message in (
        user("go" * 200),
        call("c1", "read", {"path": "c.py"}),
        result("c1", "read", "x" * 100),
        call("c2", "write", {"path": "a.py", "content": "1"}),
        result("c2", "write", "ok"),
        call("c3", "edit", {"path": "d.py", "edits": []}),
        result("c3", "edit", "ok"),
        answer("z" * 400),
        user("next" * 100),
        answer("w" * 400),
    ):
        session.append_message(message)
    prep = prepare_compaction(session.get_branch(), settings(keep=150))
    assert prep is not None
    from pi_tui.compaction import compute_file_lists

    assert compute_file_lists(prep.file_ops) == (["c.py", "old.py"], ["a.py", "b.py", "d.py"])

    hooked = session_with(user("u" * 400), answer("a" * 400))
    append_compaction(
        hooked,
        CompactionResult("S", hooked.get_branch()[0].id, 1, {"readFiles": ["secret.py"]}, from_hook=True),
    )
    for message in (user("u" * 400), answer("a" * 400), user("v" * 400), answer("b" * 400)):
        hooked.append_message(message)
    prep = prepare_compaction(hooked.get_branch(), settings(keep=150))
    assert prep is not None and "secret.py" not in prep.file_ops.read


def _assert_pairs_within(messages: list) -> None:
    seen: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            seen.update(c.id for c in message.tool_calls())
        elif isinstance(message, ToolResultMessage):
            assert message.tool_call_id in seen, f"tool result {message.tool_call_id} without its call"


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
@pytest.mark.parametrize("keep", [500, 2_000, 20_000, 60_000])
def test_cuts_in_real_pi_sessions_never_separate_a_tool_call_from_its_result(
    name: str, keep: int, tmp_path: Path
) -> None:
    copy = tmp_path / name
    shutil.copy(FIXTURES / name, copy)
    session = SessionManager.open(copy, read_only=True)
    path = session.get_branch()
    prep = prepare_compaction(path, settings(keep=keep))
    assert prep is not None
    kept_entry = session.get_entry(prep.first_kept_entry_id)
    assert not isinstance(getattr(kept_entry, "message", None), ToolResultMessage)
    for part in (prep.messages_to_summarize, prep.turn_prefix_messages, prep.kept_messages):
        _assert_pairs_within(part)
    if prep.is_split_turn:
        assert isinstance(prep.turn_prefix_messages[0], UserMessage) or prep.turn_prefix_messages[0].role in (
            "bashExecution",
            "custom",
            "branchSummary",
        )

    append_compaction(
        session_copy := SessionManager.open(copy), CompactionResult("S", prep.first_kept_entry_id, 1)
    )
    env = replay_entries(ContextEnvelope(), session_copy.get_branch())
    assert env.cached[0].role == "compactionSummary"
    assert env.cached[1].role != "toolResult"
    _assert_pairs_within(list(env.cached[1:]))
    session_copy.close()


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_every_cut_point_of_a_real_session_is_a_message_that_starts_a_valid_context(name: str) -> None:
    session = SessionManager.open(FIXTURES / name, read_only=True)
    path = session.get_branch()
    points = find_valid_cut_points(path, 0, len(path))
    assert points
    for index in points:
        message = getattr(path[index], "message", None)
        assert not isinstance(message, ToolResultMessage)


def test_the_legacy_compactions_of_a_pi_session_still_replay(tmp_path: Path) -> None:
    copy = tmp_path / "before-compaction.jsonl"
    shutil.copy(FIXTURES / "before-compaction.jsonl", copy)
    session = SessionManager.open(copy, read_only=True)
    path = session.get_branch()
    env = replay_entries(ContextEnvelope(), path)
    legacy = session.build_context()
    assert env.cached[0].role == "compactionSummary"
    assert env.cached[0].summary == legacy.compaction.summary
    assert [m.role for m in env.cached] == [m.role for m in legacy.messages]
    prep = prepare_compaction(path, settings(keep=20_000))
    assert prep is not None and prep.previous_summary is not None
    assert prep.previous_summary.startswith("# Context Checkpoint")
    # the stale usage of messages from before the legacy compaction is not what the size is taken from
    assert context_tokens(path) < legacy.compaction.tokens_before
