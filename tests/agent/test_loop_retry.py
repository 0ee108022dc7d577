from __future__ import annotations

from typing import Any

import pytest

from pi_tui.agent import RetryConfig
from pi_tui.agent.loop import retry_delay_ms
from pi_tui.ai.providers.faux import FauxScript, faux_error, faux_reply
from pi_tui.ai.types import AssistantMessage, CompactionSummaryMessage, UserMessage, message_text

from .helpers import make_agent, pairing_violations

FAST = RetryConfig(base_delay_ms=1, max_delay_ms=60_000)
OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


async def test_two_retries_then_success_emit_retry_events_and_hide_the_errors_from_the_next_request():
    script = FauxScript(
        faux_error("529 overloaded_error: Overloaded"),
        faux_error("503 Service Unavailable"),
        faux_reply("finally"),
    )
    agent, log = make_agent(script, retry=FAST)
    await agent.prompt("hi")

    starts = log.of("auto_retry_start")
    assert [(s.attempt, s.max_attempts, s.delay_ms) for s in starts] == [(1, 3, 1), (2, 3, 2)]
    assert [s.error_message for s in starts] == [
        "529 overloaded_error: Overloaded",
        "503 Service Unavailable",
    ]
    [end] = log.of("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (True, 2, None)

    third = script.requests[2].messages
    assert [message_text(m) for m in third] == ["hi"]
    assert pairing_violations(third) == []
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert agent.messages[-1].text() == "finally"
    # Every attempt was still finalized (and so persisted by message_end listeners).
    assistant_ends = [e.message for e in log.of("message_end") if e.message.role == "assistant"]
    assert [m.stop_reason for m in assistant_ends] == ["error", "error", "stop"]
    [agent_end] = log.of("agent_end")
    assert [m.role for m in agent_end.messages] == ["user", "assistant"]


async def test_retry_events_come_after_the_failed_turn_ends():
    script = FauxScript(faux_error("overloaded_error"), faux_reply("ok"))
    agent, log = make_agent(script, retry=FAST)
    await agent.prompt("hi")
    compact = log.compact()
    first_retry = compact.index("auto_retry_start")
    assert compact[first_retry - 2 : first_retry + 2] == [
        "message_end:assistant",
        "turn_end",
        "auto_retry_start",
        "turn_start",
    ]
    assert compact.index("auto_retry_end") == compact.index("message_end:assistant", first_retry) + 1


async def test_exhausted_retry_budget_ends_with_the_final_error():
    script = FauxScript(*(faux_error("429 rate_limit_error: Too Many Requests") for _ in range(3)))
    agent, log = make_agent(script, retry=RetryConfig(max_retries=2, base_delay_ms=1))
    await agent.prompt("hi")

    assert script.call_count == 3
    assert [s.attempt for s in log.of("auto_retry_start")] == [1, 2]
    [end] = log.of("auto_retry_end")
    assert (end.success, end.attempt) == (False, 2)
    assert end.final_error == "429 rate_limit_error: Too Many Requests"
    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert [m.role for m in agent.messages] == ["user", "assistant"]


async def test_non_retryable_error_is_not_retried():
    script = FauxScript(faux_error("401 authentication_error: invalid x-api-key"))
    agent, log = make_agent(script, retry=FAST)
    await agent.prompt("hi")
    assert script.call_count == 1
    assert log.of("auto_retry_start") == [] and log.of("auto_retry_end") == []


async def test_retry_disabled_leaves_transient_errors_alone():
    script = FauxScript(faux_error("overloaded_error"))
    agent, log = make_agent(script, retry=RetryConfig(enabled=False))
    await agent.prompt("hi")
    assert script.call_count == 1 and log.of("auto_retry_start") == []


async def test_provider_retry_hint_sets_the_delay():
    script = FauxScript(faux_error("429 rate limited", retry_after_ms=3), faux_reply("ok"))
    agent, log = make_agent(script, retry=FAST)
    await agent.prompt("hi")
    assert [s.delay_ms for s in log.of("auto_retry_start")] == [3]


async def test_provider_asking_to_wait_longer_than_the_cap_gets_the_usual_backoff_instead():
    """As pi 0.87.1: a requested wait over ``retry.provider.maxRetryDelayMs`` is not honoured, and the
    turn is retried on the agent's own schedule (base·2^(n-1), capped by ``retry.maxAgentDelayMs``)."""
    script = FauxScript(
        faux_error("429 rate limited (retry after 120000 ms)"),
        faux_error("429 rate limited", retry_after_ms=90_000),
        faux_reply("answered"),
    )
    agent, log = make_agent(script, retry=FAST)
    await agent.prompt("hi")
    assert script.call_count == 3
    assert [s.delay_ms for s in log.of("auto_retry_start")] == [1, 2]
    assert "retry after 120000 ms" in log.of("auto_retry_start")[0].error_message  # the user sees why
    assert agent.messages[-1].text() == "answered"


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [(1, 2000), (2, 4000), (3, 8000), (5, 10_000)],
)
def test_a_refused_long_wait_backs_off_capped_by_the_agent_cap(attempt: int, expected: int):
    config = RetryConfig(max_delay_ms=60_000, max_agent_delay_ms=10_000)
    error = AssistantMessage(stop_reason="error", error_message="429 (retry after 120000 ms)")
    assert retry_delay_ms(config, attempt, error) == expected


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [(1, 2000), (2, 4000), (3, 8000), (7, 60_000)],
)
def test_backoff_doubles_from_the_base_and_is_capped(attempt: int, expected: int):
    error = AssistantMessage(stop_reason="error", error_message="overloaded")
    assert retry_delay_ms(RetryConfig(), attempt, error) == expected


async def test_context_overflow_is_not_retried_without_a_hook():
    script = FauxScript(faux_error(OVERFLOW), faux_reply("never"))
    agent, log = make_agent(script, retry=FAST)
    await agent.prompt("hi")
    assert script.call_count == 1
    assert log.of("auto_retry_start") == []
    assert agent.messages[-1].error_message == OVERFLOW


async def test_context_overflow_hook_fixes_the_history_and_the_request_is_retried_once():
    seen: list[list[str]] = []
    agent_ref: list[Any] = []

    async def compact(error: AssistantMessage) -> bool:
        agent = agent_ref[0]
        seen.append([m.role for m in agent.messages])
        agent.messages[:] = [CompactionSummaryMessage(summary="earlier work"), agent.messages[-1]]
        return True

    old = [UserMessage(content="old question"), AssistantMessage(content=[])]
    script = FauxScript(faux_error(OVERFLOW), faux_reply("fits now"))
    agent, log = make_agent(script, retry=FAST, messages=old, on_context_overflow=compact)
    agent_ref.append(agent)
    await agent.prompt("new question")

    assert seen == [["user", "assistant", "user"]]  # the overflow error was already taken out
    retried = script.requests[1].messages
    assert message_text(retried[-1]) == "new question"
    assert "earlier work" in message_text(retried[0])
    assert pairing_violations(retried) == []
    assert agent.messages[-1].text() == "fits now"
    assert log.of("auto_retry_start") == []


async def test_second_overflow_in_a_row_is_reported_not_retried_again():
    calls: list[str] = []

    async def compact(error: AssistantMessage) -> bool:
        calls.append(error.error_message or "")
        return True

    script = FauxScript(faux_error(OVERFLOW), faux_error(OVERFLOW), faux_reply("never"))
    agent, _ = make_agent(script, retry=FAST, on_context_overflow=compact)
    await agent.prompt("hi")
    assert calls == [OVERFLOW]
    assert script.call_count == 2
    assert agent.messages[-1].stop_reason == "error"


async def test_overflow_hook_that_cannot_fix_keeps_the_error_in_history():
    async def give_up(error: AssistantMessage) -> bool:
        return False

    script = FauxScript(faux_error(OVERFLOW))
    agent, _ = make_agent(script, retry=FAST, on_context_overflow=give_up)
    await agent.prompt("hi")
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert agent.messages[-1].error_message == OVERFLOW
