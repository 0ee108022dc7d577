"""A compaction of a long session estimates each message's tokens once (counted with the process's own
tally of estimates, `message_estimates`), reuses the counts the session already holds, and measures
``tokensBefore`` as pi 0.87.1 does (the newest usage plus the messages after it)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.big_sessions import write_big_session
from pi_tui.ai.tokens import count_message_tokens, message_estimates
from pi_tui.ai.types import UserMessage
from pi_tui.compaction import CompactionResult, append_compaction, compaction_mark, prepare_compaction
from pi_tui.context.report import MessageTokenCache, message_tokens
from pi_tui.resources.settings_schema import CompactionSettings
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text
from tests.runtime.helpers import open_session

from .helpers import ANTHROPIC, SUMMARY, answer, session_with, user, write_settings

ENTRIES = 600


@asynccontextmanager
async def _resumed_big_session(
    serve: Callable[..., FakeLLM], project: Path, *, model_window: int | None = None
) -> AsyncIterator[tuple[FakeLLM, AgentSession]]:
    """A generated session of ``ENTRIES`` entries resumed on the fake Anthropic model (a 2M window, or
    ``model_window`` as models.json tells it), whose every answer is a summary."""
    fake = serve(context_window=2_000_000, model_window=model_window)
    fake.responder = lambda _request: Reply([text(SUMMARY)])
    big = write_big_session(project / "big.jsonl", ENTRIES, project)
    async with open_session(["--session", str(big), "--model", ANTHROPIC], project) as session:
        yield fake, session


def _sent(fake: FakeLLM) -> int:
    return sum(1 for r in fake.requests if r.api == "anthropic")


def _messages_on_path(session: Any) -> int:
    return sum(1 for e in session.session_manager.get_branch() if e.type == "message")


async def test_a_manual_compaction_estimates_each_message_once(
    serve: Callable[..., FakeLLM], project: Path
) -> None:
    async with _resumed_big_session(serve, project) as (fake, session):
        messages = _messages_on_path(session)
        before = message_estimates()
        await session.compact()
        spent = message_estimates() - before
    assert fake.violations == []
    # the preparation, tokensBefore and the request's size share one count per message; each request
    # adds its instruction, which is not in the session (a split turn sends two); the summary message
    # is counted once for the result's estimatedTokensAfter
    assert spent == messages + _sent(fake) + 1


async def test_a_compaction_after_the_counts_were_made_estimates_no_message_again(
    serve: Callable[..., FakeLLM], project: Path
) -> None:
    async with _resumed_big_session(serve, project) as (fake, session):
        assert session.count_context_tokens() == _messages_on_path(session)  # as /context (or its work ahead)
        before = message_estimates()
        await session.compact()
        spent = message_estimates() - before
    assert spent == _sent(fake) + 1  # the instructions, and the new summary for estimatedTokensAfter


async def test_an_automatic_compaction_prepares_once_and_estimates_only_what_it_decides_on(
    serve: Callable[..., FakeLLM], agent_dir: Path, project: Path
) -> None:
    # the generated session's last usage is ~1,800 tokens: over the threshold of a 2,000-token window
    write_settings(agent_dir, {"compaction": {"reserveTokens": 1_000, "keepRecentTokens": 400}})
    async with _resumed_big_session(serve, project, model_window=2_000) as (_, session):
        messages = _messages_on_path(session)
        before = message_estimates()
        assert await session.compaction.preflight(0)
        spent = message_estimates() - before
        compactions = [e for e in session.session_manager.get_entries() if compaction_mark(e) is not None]
    assert len(compactions) == 1
    # the prefix form cannot fit this window: its size is counted only until that is clear, and the
    # standalone form's conversation is made of the newest messages that fit (each counted once)
    assert spent < messages // 2


def test_tokens_before_is_the_newest_usage_plus_the_messages_after_it() -> None:
    filler = "x" * 396
    session = session_with(
        user("u1" + filler),
        answer("a1" + filler),
        user("u2" + filler),
        answer("a2" + filler, total_tokens=5_000),
        user("u3" + filler),
        answer("a3" + filler),
    )
    settings = CompactionSettings(enabled=True, reserve_tokens=16384, keep_recent_tokens=150)
    prep = prepare_compaction(session.get_branch(), settings)
    assert prep is not None
    # pi 0.87.1: the usage of a2 measured everything up to it; u3 and a3 are estimated (100 each)
    assert prep.tokens_before == 5_000 + 2 * 100


def test_tokens_before_ignores_a_usage_from_before_the_previous_compaction() -> None:
    filler = "x" * 396
    session = session_with(user("u1" + filler), answer("a1" + filler, total_tokens=9_000))
    settings = CompactionSettings(enabled=True, reserve_tokens=16384, keep_recent_tokens=150)
    first = prepare_compaction(session.get_branch(), settings)
    assert first is None  # one turn: nothing before it to summarise
    session.append_message(user("u2" + filler))
    session.append_message(answer("a2" + filler))
    first = prepare_compaction(session.get_branch(), settings)
    assert first is not None and first.tokens_before == 9_000 + 2 * 100
    append_compaction(session, CompactionResult("S", first.first_kept_entry_id, first.tokens_before))
    session.append_message(user("u3" + filler))
    session.append_message(answer("a3" + filler))
    prep = prepare_compaction(session.get_branch(), settings)
    assert prep is not None
    # the summary ("S", 1 token) and u2, a2, u3, a3 estimated: the 9,000 measured a context now replaced
    assert prep.tokens_before == 1 + 4 * 100


def test_the_token_cache_gives_pi_s_estimate_and_the_billed_size_from_one_count() -> None:
    manager = SessionManager.in_memory("/tmp/project")
    messages = [user("hello " * 30), answer("done " * 40, total_tokens=10)]
    for message in messages:
        manager.append_message(message)
    cache = MessageTokenCache()
    before = message_estimates()
    assert [cache.estimate(m) for m in messages] == [count_message_tokens(m) for m in messages]
    assert [cache.tokens(m) for m in messages] == [message_tokens(m) for m in messages]
    assert cache.counted == 2
    # the counts above (2 fresh ones, each measured once) plus the plain functions' 4
    assert message_estimates() - before == 2 + 4


async def test_a_branch_summary_after_the_counts_were_made_estimates_no_message_again(
    serve: Callable[..., FakeLLM], project: Path
) -> None:
    async with _resumed_big_session(serve, project) as (fake, session):
        branch = session.session_manager.get_branch()
        target = branch[len(branch) // 2].id  # leave the newer half of the session
        session.count_context_tokens()
        before = message_estimates()
        await session.navigate_with_summary(target, True)
        spent = message_estimates() - before
        assert session.session_manager.get_leaf_id() != branch[-1].id
    assert _sent(fake) == 1
    assert spent == _sent(fake)  # the summary request's own message; the branch's were counted before


def test_the_standalone_conversation_made_from_the_newest_messages_is_the_whole_one_cut_to_fit() -> None:
    from bench.big_sessions import big_session_lines
    from pi_tui.agent.convert import convert_to_llm
    from pi_tui.agent.serialize import serialize_parts
    from pi_tui.ai.types import load_message
    from pi_tui.compaction.summarize import fit_conversation, fit_messages

    lines = [json.loads(line) for line in big_session_lines(300, Path("/tmp/project"))[1:]]
    history = [load_message(e["message"]) for e in lines if e["type"] == "message"]
    history.insert(5, UserMessage(content=[]))  # a message with no text makes no part
    llm = convert_to_llm(history)
    parts = serialize_parts(llm)
    for budget in (0, 1, 10, 57, 300, 1_000, 4_321, 10_000, 10**9):
        assert fit_messages(llm, budget) == fit_conversation(parts, budget), budget
    assert fit_messages([], 100) == fit_conversation([], 100) == ""


async def test_the_size_check_after_a_compaction_extends_the_engine_s_replay(
    serve: Callable[..., FakeLLM], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.compaction import path as path_module
    from pi_tui.compaction.tokens import context_tokens

    async with _resumed_big_session(serve, project) as (_, session):
        await session.compact()
        branch = session.session_manager.get_branch()
        expected = context_tokens(branch)  # no usage since the compaction: the path replayed here
        replays: list[int] = []
        real = path_module.replay_entries

        def counting(base: Any, entries: Any) -> Any:
            replays.append(len(entries))
            return real(base, entries)

        monkeypatch.setattr(path_module, "replay_entries", counting)
        # what the check before the next request measures, from the engine's own (extended) replay
        assert session.compaction.context_tokens() == expected
        assert await session.compaction.preflight(0) is False
    assert replays == []
