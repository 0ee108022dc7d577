from __future__ import annotations

from pi_tui.ai.types import AssistantMessage, TextContent, Usage
from pi_tui.compaction import (
    CompactionResult,
    append_compaction,
    context_tokens,
    should_compact,
    usage_tokens,
)
from pi_tui.resources.settings_schema import CompactionSettings

from .helpers import answer, session_with, user


def test_threshold_is_window_minus_reserve_and_respects_enabled() -> None:
    on = CompactionSettings(enabled=True, reserve_tokens=1000, keep_recent_tokens=10)
    assert not should_compact(9000, 10_000, on)
    assert should_compact(9001, 10_000, on)
    off = CompactionSettings(enabled=False, reserve_tokens=1000, keep_recent_tokens=10)
    assert not should_compact(99_999, 10_000, off)


def test_usage_is_total_tokens_or_the_sum_of_its_parts() -> None:
    assert usage_tokens(Usage(total_tokens=50, input=1)) == 50
    assert usage_tokens(Usage(input=10, output=5, cache_read=100, cache_write=7)) == 122


def test_context_size_is_the_last_usage_plus_estimates_of_later_messages() -> None:
    session = session_with(user("x" * 400), answer("y" * 40, total_tokens=5000), user("z" * 400))
    assert context_tokens(session.get_branch()) == 5000 + 100


def test_an_error_answer_falls_back_to_the_previous_usage() -> None:
    failed = AssistantMessage(
        content=[TextContent(text="e" * 400)], stop_reason="error", usage=Usage(total_tokens=99_999)
    )
    session = session_with(user("x" * 400), answer("y" * 40, total_tokens=5000), user("z" * 400), failed)
    assert context_tokens(session.get_branch()) == 5000 + 100 + 100


def test_usage_from_before_the_newest_compaction_is_stale() -> None:
    session = session_with(
        user("x" * 400),
        answer("y" * 400, total_tokens=90_000),
        user("z" * 400),
        answer("w" * 400, total_tokens=95_000),
    )
    kept = session.get_branch()[2].id
    append_compaction(session, CompactionResult("s" * 400, kept, 95_000))
    # summary 100 + kept user 100 + kept answer 100, all estimated: the kept answer's usage is stale
    assert context_tokens(session.get_branch()) == 300
    assert context_tokens(session.get_branch(), overhead_tokens=50) == 350
    session.append_message(user("q" * 400))
    session.append_message(answer("r" * 40, total_tokens=700))
    assert context_tokens(session.get_branch()) == 700
