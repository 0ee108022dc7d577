from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_tui.agent import (
    AgentBusyError,
    AgentStateError,
    ToolCallDecision,
    ToolError,
    ToolResult,
    ToolResultPatch,
    text_result,
)
from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call
from pi_tui.ai.stream import AbortSignal, LlmRequest
from pi_tui.ai.types import AssistantMessage, TextContent, ToolResultMessage, UserMessage

from .helpers import make_agent, make_tool, pairing_violations


def _result_texts(messages: list[Any]) -> dict[str, tuple[str, bool]]:
    return {
        m.tool_call_id: ("".join(c.text for c in m.content), m.is_error)
        for m in messages
        if isinstance(m, ToolResultMessage)
    }


async def test_text_turn_emits_pis_event_order():
    agent, log = make_agent(FauxScript(faux_reply("Hello!")))
    await agent.prompt("hi")
    assert log.compact() == [
        "agent_start",
        "message_start:user",
        "message_end:user",
        "turn_start",
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ]
    assert "message_update" in log.types()
    [end] = log.of("agent_end")
    assert [m.role for m in end.messages] == ["user", "assistant"]
    assert agent.messages == list(end.messages)
    assert not agent.is_streaming


async def test_tool_turn_emits_tool_events_then_results_then_a_second_turn():
    script = FauxScript(faux_reply(faux_tool_call("echo", {"text": "a"}, id="c1")), faux_reply("done"))
    agent, log = make_agent(script, tools=[make_tool("echo")])
    await agent.prompt("go")
    assert log.compact() == [
        "agent_start",
        "message_start:user",
        "message_end:user",
        "turn_start",
        "message_start:assistant",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ]
    assert [e.turn_index for e in log.of("turn_start")] == [0, 1]
    first_turn_end = log.of("turn_end")[0]
    assert [r.tool_call_id for r in first_turn_end.tool_results] == ["c1"]
    assert _result_texts(agent.messages) == {"c1": ("echo:a", False)}
    assert pairing_violations(script.requests[1].messages) == []


async def test_parallel_tools_overlap_and_results_keep_source_order():
    slow_started = asyncio.Event()
    fast_done = asyncio.Event()

    async def slow(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        slow_started.set()
        await asyncio.wait_for(fast_done.wait(), timeout=5)
        return text_result("slow finished")

    async def fast(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        await asyncio.wait_for(slow_started.wait(), timeout=5)
        fast_done.set()
        return text_result("fast finished")

    calls = [faux_tool_call("slow", {"text": ""}, id="s"), faux_tool_call("fast", {"text": ""}, id="f")]
    script = FauxScript(faux_reply(*calls), faux_reply("ok"))
    agent, log = make_agent(script, tools=[make_tool("slow", slow), make_tool("fast", fast)])
    await agent.prompt("both")

    assert [e.tool_call_id for e in log.of("tool_execution_end")] == ["f", "s"]
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert [(m.tool_call_id, m.is_error) for m in results] == [("s", False), ("f", False)]
    assert [e.message.tool_call_id for e in log.of("message_end") if e.message.role == "toolResult"] == [
        "s",
        "f",
    ]


async def test_preflight_runs_in_source_order_before_any_tool_executes():
    order: list[str] = []

    async def record(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        order.append(f"run {call_id}")
        return text_result("ok")

    async def before(context: Any) -> None:
        order.append(f"check {context.tool_call.id}")

    calls = [faux_tool_call("t", {"text": ""}, id=i) for i in ("1", "2", "3")]
    agent, _ = make_agent(FauxScript(faux_reply(*calls), faux_reply("ok")), tools=[make_tool("t", record)])
    agent.before_tool_call = before
    await agent.prompt("go")
    assert order[:3] == ["check 1", "check 2", "check 3"]
    assert sorted(order[3:]) == ["run 1", "run 2", "run 3"]


async def test_blocked_tool_gets_the_reason_as_error_and_does_not_run():
    ran: list[str] = []

    async def bash(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        ran.append(call_id)
        return text_result("ran")

    async def guard(context: Any) -> ToolCallDecision | None:
        if context.tool_call.id == "bad":
            return ToolCallDecision(block=True, reason="Not allowed in read-only mode")
        return None

    calls = [
        faux_tool_call("bash", {"text": "rm"}, id="bad"),
        faux_tool_call("bash", {"text": "ls"}, id="good"),
    ]
    agent, log = make_agent(FauxScript(faux_reply(*calls), faux_reply("ok")), tools=[make_tool("bash", bash)])
    agent.before_tool_call = guard
    await agent.prompt("go")
    assert ran == ["good"]
    assert _result_texts(agent.messages) == {
        "bad": ("Not allowed in read-only mode", True),
        "good": ("ran", False),
    }
    assert [e.is_error for e in log.of("tool_execution_end")] == [True, False]


async def test_block_without_reason_uses_the_default_text():
    async def guard(context: Any) -> ToolCallDecision:
        return ToolCallDecision(block=True)

    agent, _ = make_agent(
        FauxScript(faux_reply(faux_tool_call("echo", {"text": ""}, id="c")), faux_reply("ok")),
        tools=[make_tool("echo")],
        before_tool_call=guard,
    )
    await agent.prompt("go")
    assert _result_texts(agent.messages) == {"c": ("Tool execution was blocked", True)}


async def test_unknown_tool_gets_not_found_error():
    script = FauxScript(faux_reply(faux_tool_call("nope", {}, id="x")), faux_reply("sorry"))
    agent, _ = make_agent(script, tools=[make_tool("echo")])
    await agent.prompt("go")
    assert _result_texts(agent.messages) == {"x": ("Tool nope not found", True)}


async def test_arguments_are_coerced_before_the_tool_runs():
    seen: list[dict[str, Any]] = []

    async def count(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        seen.append(params)
        return text_result("ok")

    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}, "name": {"type": "string"}},
        "required": ["n"],
    }
    call = faux_tool_call("count", {"n": "5", "flag": "false", "name": 7}, id="c")
    agent, _ = make_agent(
        FauxScript(faux_reply(call), faux_reply("ok")), tools=[make_tool("count", count, schema)]
    )
    await agent.prompt("go")
    assert seen == [{"n": 5, "flag": False, "name": "7"}]


async def test_invalid_arguments_give_the_validation_message_and_the_tool_does_not_run():
    ran: list[str] = []

    async def count(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        ran.append(call_id)
        return text_result("ok")

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    call = faux_tool_call("count", {"n": "five"}, id="c")
    agent, _ = make_agent(
        FauxScript(faux_reply(call), faux_reply("ok")), tools=[make_tool("count", count, schema)]
    )
    await agent.prompt("go")
    assert ran == []
    assert _result_texts(agent.messages) == {
        "c": (
            'Validation failed for tool "count":\n  - n: must be integer\n\nReceived arguments:\n{\n  "n": "five"\n}',
            True,
        )
    }


async def test_prepare_arguments_runs_before_validation():
    def rename(args: dict[str, Any]) -> dict[str, Any]:
        if "file_path" in args:
            args["text"] = args.pop("file_path")
        return args

    tool = make_tool("echo")
    tool.prepare_arguments = rename
    script = FauxScript(faux_reply(faux_tool_call("echo", {"file_path": "x.py"}, id="c")), faux_reply("ok"))
    agent, _ = make_agent(script, tools=[tool])
    await agent.prompt("go")
    assert _result_texts(agent.messages) == {"c": ("echo:x.py", False)}


async def test_tool_exceptions_become_error_results_and_tool_error_keeps_details():
    async def failing(
        call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> ToolResult:
        if params["text"] == "tool-error":
            raise ToolError("Command exited with code 2", details={"exitCode": 2})
        raise RuntimeError("disk on fire")

    calls = [
        faux_tool_call("f", {"text": "tool-error"}, id="a"),
        faux_tool_call("f", {"text": "other"}, id="b"),
    ]
    agent, _ = make_agent(FauxScript(faux_reply(*calls), faux_reply("ok")), tools=[make_tool("f", failing)])
    await agent.prompt("go")
    results = {m.tool_call_id: m for m in agent.messages if isinstance(m, ToolResultMessage)}
    assert results["a"].is_error and results["a"].details == {"exitCode": 2}
    assert results["a"].content == [TextContent(text="Command exited with code 2")]
    assert results["b"].is_error and results["b"].content == [TextContent(text="disk on fire")]


async def test_after_tool_call_patch_replaces_content_and_error_flag():
    async def audit(context: Any) -> ToolResultPatch:
        text = context.result.content[0].text
        return ToolResultPatch(content=[TextContent(text=f"{text} [audited]")], is_error=True)

    script = FauxScript(faux_reply(faux_tool_call("echo", {"text": "a"}, id="c")), faux_reply("ok"))
    agent, log = make_agent(script, tools=[make_tool("echo")], after_tool_call=audit)
    await agent.prompt("go")
    assert _result_texts(agent.messages) == {"c": ("echo:a [audited]", True)}
    assert log.of("tool_execution_end")[0].is_error


async def test_tool_updates_are_emitted_before_the_end():
    async def streaming(
        call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> ToolResult:
        on_update(text_result("line 1"))
        on_update(text_result("line 1\nline 2"))
        return text_result("line 1\nline 2\nline 3")

    script = FauxScript(faux_reply(faux_tool_call("s", {"text": ""}, id="c")), faux_reply("ok"))
    agent, log = make_agent(script, tools=[make_tool("s", streaming)])
    await agent.prompt("go")
    tool_events = [e for e in log.events if e.type.startswith("tool_execution")]
    assert [e.type for e in tool_events] == [
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_update",
        "tool_execution_end",
    ]
    assert tool_events[2].partial_result.content[0].text == "line 1\nline 2"


async def test_message_end_hook_replaces_messages_before_history_and_listeners():
    async def redact(message: Any) -> Any:
        if isinstance(message, ToolResultMessage):
            return message.model_copy(update={"content": [TextContent(text="[redacted]")]})
        return None

    script = FauxScript(faux_reply(faux_tool_call("echo", {"text": "secret"}, id="c")), faux_reply("ok"))
    agent, log = make_agent(script, tools=[make_tool("echo")], message_end_hook=redact)
    await agent.prompt("go")
    assert _result_texts(agent.messages) == {"c": ("[redacted]", False)}
    ends = [e.message for e in log.of("message_end") if e.message.role == "toolResult"]
    assert ends[0].content == [TextContent(text="[redacted]")]
    assert _result_texts(script.requests[1].messages) == {"c": ("[redacted]", False)}


async def test_failing_message_hook_is_reported_and_the_original_kept():
    reported: list[str] = []

    async def broken(message: Any) -> Any:
        raise ValueError("hook bug")

    agent, _ = make_agent(
        FauxScript(faux_reply("fine")),
        message_end_hook=broken,
        on_error=lambda where, exc: reported.append(str(exc)),
    )
    await agent.prompt("hi")
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert agent.messages[1].text() == "fine"
    assert reported == ["hook bug", "hook bug"]


async def test_async_listeners_are_awaited_one_event_at_a_time():
    trace: list[str] = []

    async def slow_listener(event: Any) -> None:
        trace.append(f"begin {event.type}")
        for _ in range(3):
            await asyncio.sleep(0)
        trace.append(f"end {event.type}")

    async def streaming(
        call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> ToolResult:
        on_update(text_result("partial"))
        return text_result("done")

    calls = [faux_tool_call("s", {"text": ""}, id=str(i)) for i in range(3)]
    agent, _ = make_agent(FauxScript(faux_reply(*calls), faux_reply("ok")), tools=[make_tool("s", streaming)])
    agent.subscribe(slow_listener)
    await agent.prompt("go")
    for begin, end in zip(trace[::2], trace[1::2], strict=True):
        assert begin.startswith("begin ") and end == "end " + begin.removeprefix("begin ")


async def test_a_raising_listener_does_not_stop_the_run():
    agent, log = make_agent(FauxScript(faux_reply("ok")), on_error=lambda where, exc: None)

    def boom(event: Any) -> None:
        raise RuntimeError("listener bug")

    agent.subscribe(boom)
    await agent.prompt("hi")
    assert log.types()[-1] == "agent_end"


async def test_a_listener_leaking_a_cancellation_does_not_end_the_run():
    """A listener that awaited something cancelled (not this run) lets CancelledError out: that is a
    listener bug, reported like any other, and the queued follow-up is still sent."""
    errors: list[tuple[str, BaseException]] = []
    script = FauxScript(faux_reply("first"), faux_reply("second"))
    agent, log = make_agent(script, on_error=lambda where, exc: errors.append((where, exc)))

    async def leaky(event: Any) -> None:
        if event.type == "message_end" and isinstance(event.message, AssistantMessage) and not errors:
            agent.follow_up("later")
            never_started = asyncio.ensure_future(asyncio.sleep(1))
            never_started.cancel()
            await never_started  # raises CancelledError; nobody cancelled the run's task

    agent.subscribe(leaky)
    await agent.prompt("go")
    assert len(script.requests) == 2
    assert log.types()[-1] == "agent_end"
    assert [type(exc).__name__ for _, exc in errors] == ["CancelledError"]


async def test_aborting_by_cancelling_the_run_still_works_through_a_listener():
    script = FauxScript(faux_reply("first"), faux_reply("second"))
    agent, _ = make_agent(script)
    entered = asyncio.Event()

    async def slow(event: Any) -> None:
        if event.type == "message_end" and isinstance(event.message, AssistantMessage):
            entered.set()
            await asyncio.sleep(30)

    agent.subscribe(slow)
    agent.follow_up("later")
    run = asyncio.ensure_future(agent.prompt("go"))
    await entered.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert len(script.requests) == 1
    assert not agent.is_streaming


async def test_unsubscribe_stops_delivery():
    agent, _ = make_agent(FauxScript(faux_reply("a"), faux_reply("b")))
    seen: list[str] = []
    unsubscribe = agent.subscribe(lambda e: seen.append(e.type))
    await agent.prompt("one")
    count = len(seen)
    unsubscribe()
    await agent.prompt("two")
    assert len(seen) == count


async def test_prompt_while_running_raises_busy():
    gate = asyncio.Event()

    async def wait(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        await gate.wait()
        return text_result("ok")

    script = FauxScript(faux_reply(faux_tool_call("w", {"text": ""}, id="c")), faux_reply("ok"))
    agent, log = make_agent(script, tools=[make_tool("w", wait)])
    started = asyncio.Event()
    agent.subscribe(lambda e: started.set() if e.type == "tool_execution_start" else None)
    task = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    assert agent.is_streaming
    with pytest.raises(AgentBusyError):
        await agent.prompt("again")
    gate.set()
    await agent.wait_for_idle()
    await task
    assert not agent.is_streaming
    assert log.types()[-1] == "agent_end"


async def test_continue_after_a_completed_answer_is_refused():
    agent, _ = make_agent(FauxScript(faux_reply("ok")))
    await agent.prompt("hi")
    with pytest.raises(AgentStateError):
        await agent.continue_()


async def test_continue_from_a_user_message_runs_a_turn_without_new_input():
    script = FauxScript(faux_reply("answer"))
    agent, log = make_agent(script, messages=[UserMessage(content="pending question")])
    await agent.continue_()
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert log.compact()[:2] == ["agent_start", "turn_start"]


async def test_transform_context_shapes_the_request_but_not_the_history():
    async def only_last(messages: list[Any], signal: AbortSignal) -> list[Any]:
        return messages[-1:]

    script = FauxScript(faux_reply("a"), faux_reply("b"))
    agent, _ = make_agent(script, transform_context=only_last, system_prompt="be brief")
    await agent.prompt("first")
    await agent.prompt("second")
    assert [m.content for m in script.requests[1].messages] == ["second"]
    assert script.requests[1].system_prompt == "be brief"
    assert len(agent.messages) == 4


async def test_build_request_replaces_request_assembly():
    async def build(messages: list[Any], signal: AbortSignal) -> LlmRequest:
        return LlmRequest(system_prompt="engine", messages=[UserMessage(content=f"{len(messages)} messages")])

    script = FauxScript(faux_reply("ok"))
    agent, _ = make_agent(script, build_request=build, tools=[make_tool("echo")])
    await agent.prompt("hi")
    request = script.requests[0]
    assert request.system_prompt == "engine" and request.tools == []
    assert request.messages[0].content == "1 messages"


async def test_default_request_carries_tool_definitions_and_thinking():
    script = FauxScript(faux_reply("ok"))
    agent, _ = make_agent(script, tools=[make_tool("echo")], thinking="high")
    await agent.prompt("hi")
    assert [t.name for t in script.requests[0].tools] == ["echo"]
    assert script.options[0].thinking == "high"
    assert script.options[0].signal is not None


async def test_failing_transform_context_ends_the_run_with_an_error_message():
    async def broken(messages: list[Any], signal: AbortSignal) -> list[Any]:
        raise RuntimeError("context hook exploded")

    script = FauxScript(faux_reply("never"))
    agent, log = make_agent(script, transform_context=broken)
    await agent.prompt("hi")
    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "context hook exploded" in (last.error_message or "")
    assert script.call_count == 0
    assert log.types()[-1] == "agent_end"


async def test_length_stop_fails_its_tool_calls_without_running_them():
    ran: list[str] = []

    async def write(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        ran.append(call_id)
        return text_result("ok")

    call = faux_tool_call("write", {"text": "half a fi"}, id="w")
    script = FauxScript(faux_reply(call, stop_reason="length"), faux_reply("retrying"))
    agent, _ = make_agent(script, tools=[make_tool("write", write)])
    await agent.prompt("go")
    assert ran == []
    text, is_error = _result_texts(agent.messages)["w"]
    assert is_error and "hit the output token limit" in text
