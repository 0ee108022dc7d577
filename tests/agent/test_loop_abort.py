from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.agent import Agent, RetryConfig, ToolError, ToolResult, text_result
from pi_tui.ai.providers.faux import FAUX_MODEL, FauxScript, faux_error, faux_reply, faux_tool_call
from pi_tui.ai.stream import AbortSignal, LlmRequest, StreamEvent, StreamOptions, StreamStart
from pi_tui.ai.types import AssistantMessage, Model, ToolResultMessage, message_text

from .helpers import EventLog, make_agent, make_tool, pairing_violations


def _results(messages: list[Any]) -> dict[str, tuple[str, bool]]:
    return {
        m.tool_call_id: (message_text(m), m.is_error) for m in messages if isinstance(m, ToolResultMessage)
    }


async def test_abort_during_streaming_records_an_aborted_message_and_the_next_request_is_valid():
    script = FauxScript(faux_reply("a long answer that will be cut", chunk_size=1), faux_reply("fresh"))
    agent, log = make_agent(script)

    def abort_on_third_delta(event: Any) -> None:
        if event.type == "message_update" and event.message.text() == "a l":
            agent.abort()

    agent.subscribe(abort_on_third_delta)
    await agent.prompt("hi")

    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.stop_reason == "aborted" and last.text() == "a l"
    assert log.compact()[-3:] == ["message_end:assistant", "turn_end", "agent_end"]
    assert not agent.is_streaming

    await agent.prompt("try again")
    request = script.requests[1].messages
    assert pairing_violations(request) == []
    assert [message_text(m) for m in request] == ["hi", "try again"]


async def test_abort_while_the_provider_is_silent_does_not_wait_for_it():
    never = asyncio.Event()

    async def stalled(
        model: Model, request: LlmRequest, options: StreamOptions
    ) -> AsyncIterator[StreamEvent]:
        partial = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield StreamStart(partial=partial)
        await never.wait()

    agent = Agent(model=FAUX_MODEL, stream_fn=stalled)
    log = EventLog(agent)
    started = asyncio.Event()
    agent.subscribe(
        lambda e: started.set() if e.type == "message_start" and e.message.role == "assistant" else None
    )
    run = asyncio.create_task(agent.prompt("hi"))
    await started.wait()
    agent.abort()
    await asyncio.wait_for(run, timeout=5)
    assert agent.messages[-1].stop_reason == "aborted"
    assert agent.messages[-1].error_message == "Operation aborted"
    assert log.types()[-1] == "agent_end"


async def test_abort_during_tools_gives_every_call_a_result():
    both_running = asyncio.Event()
    running: set[str] = set()

    def mark(call_id: str) -> None:
        running.add(call_id)
        if len(running) == 2:
            both_running.set()

    async def polite(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        mark(call_id)
        await signal.wait()
        raise ToolError("Command aborted")

    async def stubborn(
        call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> ToolResult:
        mark(call_id)
        await asyncio.Event().wait()  # ignores the signal; the loop must cancel it
        return text_result("unreachable")

    calls = [faux_tool_call("polite", {"text": ""}, id="p"), faux_tool_call("stubborn", {"text": ""}, id="s")]
    script = FauxScript(faux_reply(*calls), faux_reply("after abort"))
    agent, log = make_agent(
        script, tools=[make_tool("polite", polite), make_tool("stubborn", stubborn)], abort_grace_s=0.05
    )
    run = asyncio.create_task(agent.prompt("go"))
    await both_running.wait()
    agent.abort()
    await asyncio.wait_for(run, timeout=5)

    assert _results(agent.messages) == {"p": ("Command aborted", True), "s": ("Operation aborted", True)}
    assert script.call_count == 1  # no request after the abort
    assert log.compact()[-2:] == ["turn_end", "agent_end"]

    await agent.prompt("continue please")
    assert pairing_violations(script.requests[1].messages) == []


async def test_abort_during_preflight_answers_the_remaining_calls_as_aborted():
    agent_ref: list[Agent] = []

    async def confirm(context: Any) -> None:
        agent_ref[0].abort()  # the user pressed Esc while a confirmation was pending

    calls = [faux_tool_call("echo", {"text": ""}, id=i) for i in ("1", "2")]
    script = FauxScript(faux_reply(*calls), faux_reply("next"))
    agent, _ = make_agent(script, tools=[make_tool("echo")], before_tool_call=confirm)
    agent_ref.append(agent)
    await agent.prompt("go")
    assert _results(agent.messages) == {"1": ("Operation aborted", True), "2": ("Operation aborted", True)}
    await agent.prompt("again")
    assert pairing_violations(script.requests[1].messages) == []


async def test_abort_during_retry_sleep_cancels_the_retry_and_the_next_request_is_valid():
    script = FauxScript(faux_error("503 Service Unavailable"), faux_reply("later"))
    agent, log = make_agent(script, retry=RetryConfig(base_delay_ms=60_000))
    agent.subscribe(lambda e: agent.abort() if e.type == "auto_retry_start" else None)
    await asyncio.wait_for(agent.prompt("hi"), timeout=5)

    [start] = log.of("auto_retry_start")
    assert (start.attempt, start.max_attempts, start.delay_ms) == (1, 3, 60_000)
    [end] = log.of("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (False, 1, "Retry cancelled")
    assert script.call_count == 1
    assert [m.role for m in agent.messages] == ["user"]
    assert not agent.is_streaming

    await agent.prompt("hello again")
    assert pairing_violations(script.requests[1].messages) == []
    assert all(not isinstance(m, AssistantMessage) for m in script.requests[1].messages)


async def test_abort_when_idle_is_harmless():
    agent, _ = make_agent(FauxScript(faux_reply("ok")))
    agent.abort()
    await agent.prompt("hi")
    assert agent.messages[-1].stop_reason == "stop"


async def test_steering_taken_before_an_abort_stays_queued():
    agent_ref: list[Agent] = []

    async def tool(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        agent_ref[0].steer("do this next")
        agent_ref[0].abort()
        return text_result("ok")

    script = FauxScript(faux_reply(faux_tool_call("t", {"text": ""}, id="c")))
    agent, _ = make_agent(script, tools=[make_tool("t", tool)])
    agent_ref.append(agent)
    await agent.prompt("go")
    assert [m.content for m in agent.steering_queue] == ["do this next"]
