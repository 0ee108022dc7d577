from __future__ import annotations

import json
from typing import Any

from pi_tui.agent import (
    Agent,
    AutoRetryEnd,
    AutoRetryStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
    text_result,
)
from pi_tui.ai.providers.faux import FAUX_MODEL, FauxScript, faux_reply, faux_tool_call
from pi_tui.ai.types import AssistantMessage, ToolResultMessage

from .helpers import make_agent, make_tool


def test_tool_and_retry_events_use_pis_camel_case_keys():
    result = text_result("out", details={"truncated": False})
    assert ToolExecutionStart("c1", "bash", {"command": "ls"}).to_json() == {
        "type": "tool_execution_start",
        "toolCallId": "c1",
        "toolName": "bash",
        "args": {"command": "ls"},
    }
    assert ToolExecutionUpdate("c1", "bash", {}, result).to_json()["partialResult"] == {
        "content": [{"type": "text", "text": "out"}],
        "details": {"truncated": False},
    }
    assert ToolExecutionEnd("c1", "bash", result, True).to_json()["isError"] is True
    assert AutoRetryStart(1, 3, 2000, "overloaded").to_json() == {
        "type": "auto_retry_start",
        "attempt": 1,
        "maxAttempts": 3,
        "delayMs": 2000,
        "errorMessage": "overloaded",
    }
    assert AutoRetryEnd(True, 2).to_json() == {"type": "auto_retry_end", "success": True, "attempt": 2}
    assert AutoRetryEnd(False, 1, "Retry cancelled").to_json()["finalError"] == "Retry cancelled"


def test_turn_events_carry_the_index_message_and_results():
    message = AssistantMessage(stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="c", tool_name="t")
    assert TurnStart(3).to_json()["turnIndex"] == 3
    out = TurnEnd(0, message, (result,)).to_json()
    assert out["message"]["stopReason"] == "toolUse"
    assert out["toolResults"][0]["toolCallId"] == "c"


async def test_every_event_of_a_real_run_serializes_to_json():
    lines: list[str] = []
    script = FauxScript(faux_reply(faux_tool_call("echo", {"text": "x"}, id="c")), faux_reply("done"))
    agent, _ = make_agent(script, tools=[make_tool("echo")])
    agent.subscribe(lambda e: lines.append(json.dumps(e.to_json())))
    await agent.prompt("go")
    parsed: list[dict[str, Any]] = [json.loads(line) for line in lines]
    update = next(p for p in parsed if p["type"] == "message_update")
    assert update["assistantMessageEvent"]["type"] in (
        "start",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
    )
    assert "partial" in update["assistantMessageEvent"]
    end = parsed[-1]
    assert end["type"] == "agent_end"
    assert [m["role"] for m in end["messages"]] == ["user", "assistant", "toolResult", "assistant"]


async def test_default_stream_function_is_the_registry_and_reaches_the_faux_provider():
    agent = Agent(model=FAUX_MODEL)
    await agent.prompt("hi")
    assert "faux provider" in agent.messages[-1].text()
