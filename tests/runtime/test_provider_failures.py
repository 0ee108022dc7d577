from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.ai.errors import is_context_overflow
from pi_tui.ai.types import AssistantMessage
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.session.entries import MessageEntry
from pi_tui.testing import FakeLLM, Fault, Reply, text, tool_call

from .helpers import (
    ANTHROPIC,
    AZURE,
    BEDROCK,
    CODEX,
    GEMINI,
    MISTRAL,
    MODELS,
    OPENAI_CHAT,
    Events,
    open_session,
    without_cache_control,
    write_settings,
)

FAST_RETRY = {"retry": {"baseDelayMs": 10}}

# Frames of a one-tool-call answer that carry the whole call but not the stop reason / finish chunk.
# Gemini sends a call whole in one chunk, with the stop reason when it is the last part: there the answer
# goes on with a text, and the cut falls after the call's chunk.
# Frames that carry the whole tool call (Responses: created, in_progress, item added, two argument deltas,
# arguments done, item done).
TOOL_CALL_FRAMES_BEFORE_STOP = {
    ANTHROPIC: 6,
    OPENAI_CHAT: 4,
    GEMINI: 1,
    BEDROCK: 5,
    MISTRAL: 2,
    AZURE: 7,
    CODEX: 7,
}


def _assistant_entries(session: AgentSession) -> list[AssistantMessage]:
    """Every assistant message in the session file, failed attempts included."""
    entries = session.session_manager.get_entries()
    return [e.message for e in entries if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)]


# Codex answers every 429 with the plan's usage limit, which is not retried (as in pi): tested below.
@pytest.mark.parametrize("model", [m for m in MODELS if m != CODEX])
async def test_rate_limit_is_retried_the_user_is_told_and_the_answer_arrives(
    model: str, fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_settings(agent_dir, FAST_RETRY)
    fake.script([Fault("rate_limit"), Reply([text("recovered")])])
    async with open_session(["--model", model], project) as session:
        events = Events(session)
        await session.prompt("hi")
        last = session.last_assistant_message()

        assert last is not None and last.stop_reason == "stop"
        assert [c.text for c in last.content if c.type == "text"] == ["recovered"]
        [start] = events.of("auto_retry_start")
        assert start.attempt == 1 and "429" in start.error_message
        [end] = events.of("auto_retry_end")
        assert end.success is True
        # the failed attempt stays in the file but not in the live history
        assert [m.role for m in session.messages] == ["user", "assistant"]
        assert [m.stop_reason for m in _assistant_entries(session)] == ["error", "stop"]

    fake.assert_script_consumed()
    assert len(fake.requests) == 2 and fake.violations == []
    first, retry = fake.requests
    assert without_cache_control(retry.messages) == without_cache_control(first.messages)


@pytest.mark.parametrize("model", MODELS)
async def test_overload_beyond_the_retry_budget_ends_with_a_clear_error(
    model: str, fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_settings(agent_dir, FAST_RETRY)
    async with open_session(["--model", model], project) as session:
        max_retries = session.agent.retry.max_retries
        assert max_retries == 3  # pi's default budget
        fake.script([Fault("overloaded")] * (max_retries + 1))
        events = Events(session)
        await session.prompt("hi")
        last = session.last_assistant_message()

    assert last is not None and last.stop_reason == "error"
    assert last.error_message is not None
    # Anthropic 529 "Overloaded"; Bedrock's ServiceUnavailableException (503) says "Service unavailable"
    assert any(word in last.error_message.lower() for word in ("overloaded", "529", "service unavailable"))
    assert [e.attempt for e in events.of("auto_retry_start")] == list(range(1, max_retries + 1))
    [end] = events.of("auto_retry_end")
    assert end.success is False and end.attempt == max_retries and end.final_error == last.error_message
    fake.assert_script_consumed()
    assert len(fake.requests) == max_retries + 1 and fake.violations == []


@pytest.mark.parametrize("model", MODELS)
async def test_context_overflow_is_recognised_and_not_retried(
    model: str, fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_settings(agent_dir, FAST_RETRY)
    fake.script([Fault("context_overflow")])
    async with open_session(["--model", model], project) as session:
        events = Events(session)
        await session.prompt("hi")
        last = session.last_assistant_message()

    assert last is not None and last.stop_reason == "error"
    assert is_context_overflow(last, session.model.context_window)
    assert events.of("auto_retry_start") == []
    fake.assert_script_consumed()
    assert len(fake.requests) == 1


async def test_a_chatgpt_usage_limit_is_not_retried_and_says_when_it_resets(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_settings(agent_dir, FAST_RETRY)
    fake.script([Fault("rate_limit"), Reply([text("never asked for")])])
    async with open_session(["--model", CODEX], project) as session:
        events = Events(session)
        await session.prompt("hi")
        last = session.last_assistant_message()

    assert last is not None and last.stop_reason == "error"
    assert last.error_message == "You have hit your ChatGPT usage limit (plus plan). Try again in ~30 min."
    assert events.of("auto_retry_start") == [] and len(fake.requests) == 1


@pytest.mark.parametrize("model", MODELS)
async def test_a_stream_cut_without_a_stop_reason_is_an_error_and_is_retried(
    model: str, fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_settings(agent_dir, FAST_RETRY)
    partial = "The first half of an answer that never"
    fake.script(
        [Fault("truncate", after_frames=4, reply=Reply([text(partial)])), Reply([text("whole answer")])]
    )
    async with open_session(["--model", model], project) as session:
        events = Events(session)
        await session.prompt("hi")
        last = session.last_assistant_message()
        cut, final = _assistant_entries(session)

    assert cut.stop_reason == "error" and cut.error_message
    [start] = events.of("auto_retry_start")
    assert start.error_message == cut.error_message
    assert last is not None and last.stop_reason == "stop"
    assert [c.text for c in last.content if c.type == "text"] == ["whole answer"]
    fake.assert_script_consumed()
    assert len(fake.requests) == 2 and fake.violations == []
    assert "never" not in str(fake.requests[1].body)  # the cut text is not replayed


@pytest.mark.parametrize("model", MODELS)
async def test_a_tool_call_cut_before_its_stop_reason_is_never_executed(
    model: str, fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_settings(agent_dir, {"retry": {"baseDelayMs": 10, "maxRetries": 1}})
    cut = Fault(
        "truncate",
        after_frames=TOOL_CALL_FRAMES_BEFORE_STOP[model],
        reply=Reply(
            [tool_call("bash", {"command": "touch marker"}), *([text("Done.")] if model == GEMINI else [])]
        ),
    )
    fake.script([cut, cut])
    async with open_session(["--model", model], project) as session:
        events = Events(session)
        await session.prompt("make a marker")
        last = session.last_assistant_message()

    assert last is not None and last.stop_reason == "error"
    # the whole call arrived, only the stop reason is missing
    assert [(c.name, c.arguments) for c in last.tool_calls()] == [("bash", {"command": "touch marker"})]
    assert not (project / "marker").exists()
    assert events.of("tool_execution_start") == []
    assert [e.success for e in events.of("auto_retry_end")] == [False]
    fake.assert_script_consumed()
    assert len(fake.requests) == 2 and fake.violations == []
