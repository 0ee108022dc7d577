from __future__ import annotations

from typing import Any

from pi_tui.agent import ToolResult, text_result
from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import ToolResultMessage, UserMessage, message_text

from .helpers import make_agent, make_tool, pairing_violations


def _results(messages: list[Any]) -> list[tuple[str, str, bool]]:
    return [
        (m.tool_call_id, message_text(m), m.is_error) for m in messages if isinstance(m, ToolResultMessage)
    ]


async def test_steering_in_sequential_mode_runs_the_remaining_tools_then_is_delivered():
    agent_ref: list[Any] = []
    ran: list[str] = []

    async def first(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        ran.append(call_id)
        if call_id == "1":
            agent_ref[0].steer("stop, do something else")
        return text_result(f"{call_id} done")

    calls = [faux_tool_call("t", {"text": ""}, id=i) for i in ("1", "2", "3")]
    script = FauxScript(faux_reply(*calls), faux_reply("ok, changing course"))
    agent, log = make_agent(script, tools=[make_tool("t", first)], tool_execution="sequential")
    agent_ref.append(agent)
    await agent.prompt("go")

    # pi 0.87.1: a queued steer never skips the calls of the current message
    assert ran == ["1", "2", "3"]
    assert _results(agent.messages) == [
        ("1", "1 done", False),
        ("2", "2 done", False),
        ("3", "3 done", False),
    ]
    request = script.requests[1].messages
    assert isinstance(request[-1], UserMessage) and request[-1].content == "stop, do something else"
    assert [m.role for m in request[-4:]] == ["toolResult", "toolResult", "toolResult", "user"]
    assert pairing_violations(request) == []
    compact = log.compact()
    assert compact.index("message_start:user", compact.index("turn_end")) > compact.index("turn_end")


async def test_steering_during_parallel_preflight_runs_every_call_then_is_delivered():
    ran: list[str] = []
    agent_ref: list[Any] = []

    async def run(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        ran.append(call_id)
        return text_result("ran")

    async def before(context: Any) -> None:
        if context.tool_call.id == "1":
            agent_ref[0].steer("wait!")

    calls = [faux_tool_call("t", {"text": ""}, id=i) for i in ("1", "2")]
    script = FauxScript(faux_reply(*calls), faux_reply("ok"))
    agent, log = make_agent(script, tools=[make_tool("t", run)], before_tool_call=before)
    agent_ref.append(agent)
    await agent.prompt("go")

    assert sorted(ran) == ["1", "2"]
    assert _results(agent.messages) == [("1", "ran", False), ("2", "ran", False)]
    assert [(e.tool_call_id, e.is_error) for e in log.of("tool_execution_end")] == [
        ("1", False),
        ("2", False),
    ]
    request = script.requests[1].messages
    assert message_text(request[-1]) == "wait!"
    assert pairing_violations(request) == []


async def test_steering_queued_during_a_text_answer_starts_another_turn():
    script = FauxScript(faux_reply("first answer"), faux_reply("second answer"))
    agent, log = make_agent(script)

    def steer_once(event: Any) -> None:
        if event.type == "message_end" and event.message.role == "assistant" and len(script.requests) == 1:
            agent.steer("one more thing")

    agent.subscribe(steer_once)
    await agent.prompt("hi")
    assert [message_text(m) for m in agent.messages] == [
        "hi",
        "first answer",
        "one more thing",
        "second answer",
    ]
    # The steering message is the next turn's input, emitted before that turn starts.
    compact = log.compact()
    assert compact[compact.index("turn_end") + 1 : compact.index("turn_end") + 4] == [
        "message_start:user",
        "message_end:user",
        "turn_start",
    ]


async def test_follow_up_waits_until_the_agent_would_stop():
    script = FauxScript(
        faux_reply(faux_tool_call("echo", {"text": "x"}, id="c")),
        faux_reply("tools done"),
        faux_reply("follow-up answered"),
    )
    agent, log = make_agent(script, tools=[make_tool("echo")])

    def queue_follow_up(event: Any) -> None:
        if event.type == "tool_execution_start":
            agent.follow_up("and then summarize")

    agent.subscribe(queue_follow_up)
    await agent.prompt("go")

    assert len(script.requests) == 3
    assert all(message_text(m) != "and then summarize" for m in script.requests[1].messages)
    assert message_text(script.requests[2].messages[-1]) == "and then summarize"
    assert message_text(agent.messages[-1]) == "follow-up answered"
    assert len(log.of("agent_end")) == 1


async def test_one_at_a_time_delivers_queued_messages_in_separate_turns():
    script = FauxScript(faux_reply("a"), faux_reply("b"), faux_reply("c"))
    agent, _ = make_agent(script)

    def queue_two(event: Any) -> None:
        if event.type == "turn_start" and event.turn_index == 0:
            agent.follow_up("f1")
            agent.follow_up("f2")

    agent.subscribe(queue_two)
    await agent.prompt("start")
    assert message_text(script.requests[1].messages[-1]) == "f1"
    assert message_text(script.requests[2].messages[-1]) == "f2"


async def test_all_mode_delivers_every_queued_message_in_one_turn():
    script = FauxScript(faux_reply("a"), faux_reply("b"))
    agent, _ = make_agent(script, steering_mode="all")

    def queue_two(event: Any) -> None:
        if event.type == "turn_start" and event.turn_index == 0:
            agent.steer("s1")
            agent.steer("s2")

    agent.subscribe(queue_two)
    await agent.prompt("start")
    assert [message_text(m) for m in script.requests[1].messages[-2:]] == ["s1", "s2"]
    assert script.call_count == 2


async def test_clear_queues_returns_the_queued_messages():
    agent, _ = make_agent(FauxScript())
    agent.steer("s")
    agent.follow_up("f")
    steering, follow_up = agent.clear_queues()
    assert [m.content for m in steering] == ["s"] and [m.content for m in follow_up] == ["f"]
    assert agent.steering_queue == () and agent.follow_up_queue == ()
