from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import AssistantMessage
from pi_tui.compaction import (
    OVERFLOW_RECOVERY_FAILED,
    AlreadyCompacted,
    CompactionCancelled,
    CompactionError,
    NothingToCompact,
    compaction_mark,
    summarize,
)
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.session.entries import MessageEntry
from pi_tui.testing import FakeLLM, Fault
from tests.runtime.helpers import Events, open_session

from .helpers import (
    ANTHROPIC,
    OPENAI_CHAT,
    SUMMARY,
    Reader,
    first_user_text,
    requests_after_summaries,
    summary_requests,
    work_requests,
    write_data_files,
    write_settings,
)

COMPACTED = "The conversation history before this point was compacted into the following summary"
READ_FOUR = "Read four files."


def _settings(agent_dir: Path, reserve: int, keep: int) -> None:
    write_settings(
        agent_dir,
        {"compaction": {"reserveTokens": reserve, "keepRecentTokens": keep}, "retry": {"baseDelayMs": 10}},
    )


def _compaction_entries(session: Any) -> list[Any]:
    return [e for e in session.session_manager.get_entries() if compaction_mark(e) is not None]


AfterReading = Callable[..., AbstractAsyncContextManager[tuple[FakeLLM, AgentSession]]]


@pytest.fixture
def after_reading(serve: Callable[..., FakeLLM], agent_dir: Path, project: Path) -> AfterReading:
    """``after_reading(reader, files=N, prompt=...)``: a session on the fake Anthropic model (compaction
    keeps the last 1,500 tokens) over N data files, entered after a first ``prompt`` that ``reader``
    answers by reading them; it yields the fake server and the session."""

    @asynccontextmanager
    async def start(
        reader: Reader, *, files: int, prompt: str
    ) -> AsyncIterator[tuple[FakeLLM, AgentSession]]:
        _settings(agent_dir, 16_384, 1_500)
        write_data_files(project, files)
        fake = serve(responder=reader)
        async with open_session(["--model", ANTHROPIC], project) as session:
            await session.prompt(prompt)
            yield fake, session

    return start


@pytest.mark.parametrize("model", [ANTHROPIC, OPENAI_CHAT])
async def test_threshold_compaction_between_turns_lets_the_run_go_on_from_the_summary(
    model: str, serve: Any, agent_dir: Path, project: Path
) -> None:
    window, reserve = 12_000, 3_000
    _settings(agent_dir, reserve, 2_500)
    write_data_files(project, 16)
    reader = Reader(per_prompt=16)
    fake = serve(context_window=window, responder=reader)
    async with open_session(["--model", model], project) as session:
        events = Events(session)
        await session.prompt("Read all files in data/ one by one.")
        last = session.last_assistant_message()
        entries = _compaction_entries(session)

    assert last is not None and last.text() == "Read 16 files."
    assert fake.violations == []
    starts, ends = events.of("auto_compaction_start"), events.of("auto_compaction_end")
    assert len(starts) == len(ends) == len(entries) >= 2
    assert {e.data["reason"] for e in starts} == {"threshold"}
    assert all(e.data["willRetry"] is False and e.data["aborted"] is False for e in ends)
    # every file was read exactly once: nothing was retried or repeated after a compaction
    assert len(work_requests(fake.requests)) == 17
    # the request after each compaction starts from the summary and is below the threshold
    after = requests_after_summaries(fake.requests)
    assert len(after) == len(entries)
    for request in after:
        assert first_user_text(request).startswith(COMPACTED)
        assert "## Goal\nRead every file in data/" in first_user_text(request)
        assert request.prompt_tokens < window - reserve
    op = entries[-1].patch[0]
    assert entries[-1].transformer_name == "compaction" and len(entries[-1].patch) == 1
    assert op["op"] == "compaction_apply" and op["invalidateCacheReason"] == "compaction"
    assert op["details"]["readFiles"] == [
        f"data/f{n:02d}.txt" for n in range(len(op["details"]["readFiles"]))
    ]
    assert "<read-files>\ndata/f00.txt\n" in op["summary"]


async def test_a_failed_automatic_compaction_is_reported_once_per_turn_and_the_run_goes_on(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    _settings(agent_dir, 3_000, 2_500)
    write_data_files(project, 9)
    reader = Reader(per_prompt=9)
    reader.fail_summaries = True
    fake = serve(context_window=12_000, responder=reader)
    async with open_session(["--model", ANTHROPIC], project) as session:
        events = Events(session)
        await session.prompt("Read all files in data/ one by one.")
        last = session.last_assistant_message()
        entries = _compaction_entries(session)

    assert last is not None and last.text() == "Read 9 files."
    assert entries == []
    ends = events.of("auto_compaction_end")
    assert ends and all(e.data["errorMessage"].startswith("Summarization failed: ") for e in ends)
    kinds = ["summary" if r in summary_requests(fake.requests) else "work" for r in fake.requests]
    assert kinds.count("summary") == len(ends) == len(events.of("auto_compaction_start"))
    # the preflight does not try again for the request right after a failure
    assert "summary,summary" not in ",".join(kinds)
    assert kinds.count("work") == 10


def _count_serializations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages each conversation text made for a standalone summary request held."""
    made: list[int] = []
    real = summarize.fit_messages

    def counting(messages: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(len(messages))
        return real(messages, *args, **kwargs)

    monkeypatch.setattr(summarize, "fit_messages", counting)
    return made


async def test_the_second_summary_updates_the_first(
    serve: Any, agent_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settings(agent_dir, 16_384, 150)
    fake = serve(responder=Reader(per_prompt=0))
    serialized = _count_serializations(monkeypatch)
    async with open_session(["--model", ANTHROPIC], project) as session:
        for n in range(3):
            await session.prompt(f"Question {n}: " + "please think about this " * 16)
        first = await session.compact()
        for n in range(3, 5):
            await session.prompt(f"Question {n}: " + "please think about this " * 16)
        await session.compact("mention the question count")

    one, two = summary_requests(fake.requests)
    assert "<previous-summary>" not in one.last_user_text()
    assert "Write a structured checkpoint of the conversation above" in one.last_user_text()
    update = two.last_user_text()
    assert f"<previous-summary>\n{first.summary}\n</previous-summary>" in update
    assert "KEEP everything from the previous checkpoint" in update
    assert update.endswith("Additional focus: mention the question count")
    # the summary request is the session's own request plus the instruction
    assert one.system == fake.requests[summary_index(fake.requests, one) - 1].system
    assert fake.violations == []
    assert serialized == []  # the standalone form's conversation text is made only when it is sent


def summary_index(requests: list[Any], request: Any) -> int:
    return next(i for i, r in enumerate(requests) if r is request)


async def test_overflow_compacts_and_retries_exactly_once(after_reading: AfterReading) -> None:
    reader = Reader(per_prompt=3)
    async with after_reading(reader, files=6, prompt="Read three files.") as (fake, session):
        before = len(fake.requests)
        events = Events(session)
        reader.overflow_next = 1
        await session.prompt("Read three more.")
        last = session.last_assistant_message()
        failed = [
            e.message
            for e in session.session_manager.get_entries()
            if isinstance(e, MessageEntry)
            and isinstance(e.message, AssistantMessage)
            and e.message.stop_reason == "error"
        ]

    assert last is not None and last.text() == "Read 6 files."
    [start] = events.of("auto_compaction_start")
    [end] = events.of("auto_compaction_end")
    assert start.data == {"reason": "overflow"}
    assert end.data["willRetry"] is True and SUMMARY in end.data["result"]["summary"]
    later = fake.requests[before:]
    kinds = ["summary" if r in summary_requests(later) else "work" for r in later]
    # the overflowing request, the summary, then the same turn again (once) and the rest of the run
    assert kinds[:3] == ["work", "summary", "work"]
    assert kinds.count("summary") == 1
    assert [r.response.kind for r in later].count("fault") == 1
    assert first_user_text(later[2]).startswith(COMPACTED)
    assert len(failed) == 1 and "prompt is too long" in (failed[0].error_message or "")


async def test_a_second_overflow_after_compacting_ends_with_a_clear_error(
    after_reading: AfterReading,
) -> None:
    reader = Reader(per_prompt=3)
    async with after_reading(reader, files=6, prompt="Read three files.") as (fake, session):
        before = len(fake.requests)
        events = Events(session)
        reader.overflow_next = 2
        await session.prompt("Read three more.")
        last = session.last_assistant_message()

    assert last is not None and last.stop_reason == "error"
    ends = events.of("auto_compaction_end")
    assert [e.data.get("willRetry") for e in ends] == [True, False]
    assert ends[-1].data["errorMessage"] == OVERFLOW_RECOVERY_FAILED
    assert OVERFLOW_RECOVERY_FAILED.startswith(
        "Context overflow recovery failed after one compact-and-retry attempt"
    )
    later = fake.requests[before:]
    assert len(later) == 3  # overflow, summary, the one retry — and nothing after it
    assert len(summary_requests(later)) == 1


async def test_a_real_overflow_falls_back_to_the_standalone_summary_and_the_run_finishes(
    serve: Any, agent_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serialized = _count_serializations(monkeypatch)
    # pi-tui believes the window is large, so only the provider's refusal tells it the context is full
    _settings(agent_dir, 4_000, 2_000)
    write_data_files(project, 14)
    reader = Reader(per_prompt=14)
    fake = serve(context_window=9_000, model_window=200_000, responder=reader)
    async with open_session(["--model", ANTHROPIC], project) as session:
        events = Events(session)
        await session.prompt("Read all files in data/ one by one.")
        last = session.last_assistant_message()

    assert last is not None and last.text() == "Read 14 files."
    overflowed = [r for r in fake.requests if r.violations]
    assert overflowed and all(v.rule == "anthropic.context_window" for r in overflowed for v in r.violations)
    standalone = [
        r for r in summary_requests(fake.requests) if r.last_user_text().startswith("<conversation>")
    ]
    assert standalone and all(not r.violations for r in standalone)
    assert all(r.tool_names == [] for r in standalone)
    assert "[Tool result]: 0000:000" in standalone[0].last_user_text()
    assert len(serialized) == len(standalone) and all(serialized)
    assert {e.data["reason"] for e in events.of("auto_compaction_start")} == {"overflow"}
    assert all(e.data["willRetry"] for e in events.of("auto_compaction_end"))


async def test_an_extension_supplies_the_summary_and_no_model_call_is_made(
    after_reading: AfterReading,
) -> None:
    seen: list[Any] = []
    async with after_reading(Reader(per_prompt=4), files=4, prompt=READ_FOUR) as (fake, session):

        async def before_compact(prep: Any, entries: list[Any], instructions: str | None, signal: Any) -> Any:
            seen.append(
                (len(prep.messages_to_summarize) + len(prep.turn_prefix_messages), len(entries), instructions)
            )
            return {
                "compaction": {
                    "summary": "EXTENSION SUMMARY",
                    "firstKeptEntryId": prep.first_kept_entry_id,
                    "tokensBefore": 123,
                    "details": {"mine": 1},
                }
            }

        async def on_compact(entry: Any, from_extension: bool) -> None:
            seen.append((entry.type, from_extension))

        session.compaction.before_compact = before_compact
        session.compaction.on_compact = on_compact
        requests_before = len(fake.requests)
        result = await session.compact("focus")
        assert len(fake.requests) == requests_before
        [entry] = _compaction_entries(session)
        await session.prompt("Anything else?")

    assert result.summary == "EXTENSION SUMMARY" and result.from_hook
    op = entry.patch[0]
    assert op["fromHook"] is True and op["details"] == {"mine": 1} and op["tokensBefore"] == 123
    assert seen[0][0] > 0 and seen[0][2] == "focus"
    assert seen[1] == ("context_transform", True)
    assert "<summary>\nEXTENSION SUMMARY\n</summary>" in first_user_text(fake.requests[-1])


async def test_an_extension_may_only_observe_and_the_default_summary_is_used(
    after_reading: AfterReading,
) -> None:
    observed: list[int] = []
    async with after_reading(Reader(per_prompt=4), files=4, prompt=READ_FOUR) as (fake, session):

        async def before_compact(prep: Any, _entries: list[Any], _instructions: Any, _signal: Any) -> None:
            observed.append(
                len(prep.to_json()["turnPrefixMessages"]) + len(prep.to_json()["messagesToSummarize"])
            )

        session.compaction.before_compact = before_compact
        result = await session.compact()

    assert observed and observed[0] > 0
    assert SUMMARY in result.summary and not result.from_hook
    assert summary_requests(fake.requests)


async def test_cancelled_compactions_leave_the_session_unchanged(after_reading: AfterReading) -> None:
    async with after_reading(Reader(per_prompt=4), files=4, prompt=READ_FOUR) as (fake, session):
        entries_before = len(session.session_manager.get_entries())

        async def cancel(*_args: Any) -> Any:
            return {"cancel": True}

        session.compaction.before_compact = cancel
        with pytest.raises(CompactionCancelled, match="^Compaction cancelled$"):
            await session.compact()
        assert summary_requests(fake.requests) == []

        session.compaction.before_compact = None

        async def reject(_summary: str) -> str:
            return ""

        session.compaction.review_summary = reject
        with pytest.raises(CompactionCancelled):
            await session.compact()

        async def abort_while_observing(*_args: Any) -> None:
            session.abort()

        session.compaction.review_summary = None
        session.compaction.before_compact = abort_while_observing
        with pytest.raises(CompactionCancelled):
            await session.compact()
        assert len(session.session_manager.get_entries()) == entries_before


async def test_the_user_can_edit_the_summary_before_it_is_applied(after_reading: AfterReading) -> None:
    shown: list[str] = []
    async with after_reading(Reader(per_prompt=4), files=4, prompt=READ_FOUR) as (fake, session):

        async def review(summary: str) -> str:
            shown.append(summary)
            return summary.replace("Read the next file", "Report the count; keep answers short")

        session.compaction.review_summary = review
        result = await session.compact()
        await session.prompt("Done?")

    assert shown and SUMMARY in shown[0]
    assert "Report the count; keep answers short" in result.summary
    assert "Report the count; keep answers short" in first_user_text(fake.requests[-1])


async def test_manual_compaction_explains_why_it_cannot_run(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    _settings(agent_dir, 16_384, 20_000)
    write_data_files(project, 2)
    serve(responder=Reader(per_prompt=2))
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("Read two files.")
        with pytest.raises(NothingToCompact, match=r"^Nothing to compact \(session too small\)$"):
            await session.compact()
    _settings(agent_dir, 16_384, 100)
    async with open_session(["--model", ANTHROPIC, "-c"], project) as session:
        await session.compact()
        with pytest.raises(AlreadyCompacted, match="^Already compacted$"):
            await session.compact()


async def test_a_failed_summary_request_is_reported_and_nothing_is_written(
    after_reading: AfterReading,
) -> None:
    async with after_reading(Reader(per_prompt=4), files=4, prompt=READ_FOUR) as (fake, session):
        fake.script([Fault("api_error")])
        with pytest.raises(CompactionError, match="^Summarization failed: "):
            await session.compact()
        assert _compaction_entries(session) == []


async def test_a_resumed_session_over_the_threshold_is_compacted_before_the_request(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    _settings(agent_dir, 3_000, 2_000)
    write_data_files(project, 8)
    reader = Reader(per_prompt=8)
    fake = serve(context_window=200_000, responder=reader)
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("Read eight files.")
        assert _compaction_entries(session) == []
    # the same model, now known to have a 12k window: the next request would be over the threshold
    models = json.loads((agent_dir / "models.json").read_text())
    for provider in models["providers"].values():
        provider["models"][0]["contextWindow"] = 12_000
    (agent_dir / "models.json").write_text(json.dumps(models))
    before = len(fake.requests)
    async with open_session(["--model", ANTHROPIC, "-c"], project) as session:
        events = Events(session)
        await session.prompt("How many?")
        assert len(_compaction_entries(session)) == 1

    later = fake.requests[before:]
    assert [("summary" if r in summary_requests(later) else "work") for r in later][-1] == "work"
    assert summary_requests(later) and later.index(summary_requests(later)[0]) < len(later) - 1
    assert later[-1].prompt_tokens < 12_000 - 3_000
    assert first_user_text(later[-1]).startswith(COMPACTED)
    assert [e.data["reason"] for e in events.of("auto_compaction_start")] == ["threshold"]


async def test_an_overflow_with_nothing_to_compact_is_told_once_without_a_compaction(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    _settings(agent_dir, 16_384, 20_000)
    fake = serve()
    fake.script([Fault("context_overflow", tokens=250_000)])
    async with open_session(["--model", ANTHROPIC], project) as session:
        events = Events(session)
        await session.prompt("A first question that is somehow too long.")
        last = session.last_assistant_message()

    # as pi: nothing is old enough to summarise, so no compaction starts, fails or is retried; the
    # provider's refusal is the one thing said
    assert (
        last is not None
        and last.stop_reason == "error"
        and "prompt is too long" in (last.error_message or "")
    )
    assert events.of("auto_compaction_start") == [] and events.of("auto_compaction_end") == []
    assert len(fake.requests) == 1
