from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.ai.types import AssistantMessage
from pi_tui.testing import FakeLLM, Fault, Reply, text

from .helpers import ANTHROPIC, GEMINI, OPENAI_CHAT, Events, open_session, write_settings

RESPONSES = "fake-responses/gpt-fake-r"


def last_answer(messages: list[object]) -> AssistantMessage:
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    return answers[-1]


@pytest.mark.parametrize("model", [ANTHROPIC, OPENAI_CHAT, RESPONSES, GEMINI])
async def test_a_refused_request_is_sent_again_by_the_provider_layer(
    fake: FakeLLM, project: Path, agent_dir: Path, model: str
) -> None:
    write_settings(agent_dir, {"retry": {"enabled": False, "provider": {"maxRetries": 2}}})
    fake.script(
        [Fault("rate_limit", retry_after_ms=0), Fault("overloaded", retry_after_ms=0), Reply([text("hi")])]
    )
    async with open_session(["--model", model], project) as session:
        events = Events(session)
        await session.prompt("go")
        answer = last_answer(session.messages)
        assert (answer.stop_reason, answer.text()) == ("stop", "hi")
        assert events.of("auto_retry_start") == []  # no agent-level retry: the provider layer did it
    assert len(fake.requests) == 3
    assert fake.requests[0].body == fake.requests[2].body
    fake.assert_script_consumed()


async def test_without_provider_retries_the_refusal_is_the_answer(
    fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    write_settings(agent_dir, {"retry": {"enabled": False}})
    fake.script([Fault("rate_limit", retry_after_ms=0)])
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("go")
        assert last_answer(session.messages).stop_reason == "error"
    assert len(fake.requests) == 1


async def test_a_wait_longer_than_allowed_fails_at_once(
    fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    write_settings(
        agent_dir, {"retry": {"enabled": False, "provider": {"maxRetries": 3, "maxRetryDelayMs": 5000}}}
    )
    fake.script([Fault("rate_limit", retry_after_ms=120_000)])
    async with open_session(["--model", OPENAI_CHAT], project) as session:
        await session.prompt("go")
        answer = last_answer(session.messages)
        assert answer.stop_reason == "error"
        assert "Server requested 120s retry delay (max: 5s)" in (answer.error_message or "")
    assert len(fake.requests) == 1


async def test_provider_timeout_setting_replaces_the_idle_timeout(
    project: Path, agent_dir: Path, fake: FakeLLM
) -> None:
    write_settings(agent_dir, {"httpIdleTimeoutMs": 90_000, "retry": {"provider": {"timeoutMs": 1234}}})
    async with open_session(["--model", ANTHROPIC], project) as session:
        assert session.agent.stream_options.timeout == pytest.approx(1.234)
    write_settings(agent_dir, {"httpIdleTimeoutMs": 90_000})
    async with open_session(["--model", ANTHROPIC], project) as session:
        assert session.agent.stream_options.timeout == pytest.approx(90.0)
        assert session.agent.stream_options.max_retries == 0
