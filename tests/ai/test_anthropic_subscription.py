from __future__ import annotations

from collections.abc import Iterator

import pytest

from pi_tui.ai.providers.anthropic import stream_anthropic
from pi_tui.ai.providers.anthropic_oauth import CLAUDE_CODE_IDENTITY
from pi_tui.ai.stream import Done, Error, LlmRequest, StreamEvent, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    Model,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Reply, text, tool_call

TOKEN = "sk-ant-oat01-test-subscription-token"
TOOLS = [
    ToolDefinition(name="read", description="Read a file", parameters={"type": "object", "properties": {}}),
    ToolDefinition(name="my_tool", description="Ours", parameters={"type": "object", "properties": {}}),
]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    llm = FakeLLM(api_key=TOKEN)
    with llm.serve():
        yield llm


def _model(fake: FakeLLM) -> Model:
    assert fake.server is not None
    return Model(
        id="claude-opus-4-1",
        api="anthropic-messages",
        provider="anthropic",
        base_url=fake.server.anthropic_base_url,
        max_tokens=32_000,
    )


async def _run(fake: FakeLLM, request: LlmRequest, key: str = TOKEN) -> AssistantMessage:
    events: list[StreamEvent] = [
        e async for e in stream_anthropic(_model(fake), request, StreamOptions(api_key=key))
    ]
    last = events[-1]
    assert isinstance(last, Done | Error)
    return last.message if isinstance(last, Done) else last.error


async def test_a_subscription_token_speaks_as_claude_code(fake: FakeLLM) -> None:
    fake.script([Reply([tool_call("Read", {"path": "a.py"})]), Reply([text("done")])])
    first = await _run(fake, LlmRequest("You are terse.", [UserMessage(content="hi")], TOOLS))
    assert first.stop_reason == "toolUse"
    call = next(part for part in first.content if isinstance(part, ToolCall))
    assert call.name == "read"  # Claude Code's "Read" mapped back to our tool

    sent = fake.requests[-1]
    assert "authorization" in sent.headers and "x-api-key" not in sent.headers
    assert sent.headers["user-agent"] == "claude-cli/2.1.280" and sent.headers["x-app"] == "cli"
    assert sent.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")
    assert sent.body is not None
    assert [block["text"] for block in sent.body["system"]] == [CLAUDE_CODE_IDENTITY, "You are terse."]
    assert [tool["name"] for tool in sent.body["tools"]] == ["Read", "my_tool"]

    history = [
        UserMessage(content="hi"),
        first,
        ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text="x = 1")]),
    ]
    second = await _run(fake, LlmRequest("You are terse.", history, TOOLS))
    assert second.stop_reason == "stop" and fake.violations == []
    body = fake.requests[-1].body
    assert body is not None
    used = [
        b
        for m in body["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    assert [b["name"] for b in used] == ["Read"]
    assert isinstance(history[1], AssistantMessage) and history[1].content[0] == call  # ours unchanged


async def test_an_api_key_request_is_unchanged() -> None:
    fake = FakeLLM(api_key="sk-ant-api03-plain")
    fake.script([Reply([text("ok")])])
    with fake.serve():
        await _run(
            fake, LlmRequest("You are terse.", [UserMessage(content="hi")], TOOLS), key="sk-ant-api03-plain"
        )
    sent = fake.requests[-1]
    assert "x-api-key" in sent.headers and "authorization" not in sent.headers and "x-app" not in sent.headers
    assert sent.body is not None
    assert [block["text"] for block in sent.body["system"]] == ["You are terse."]
    assert [tool["name"] for tool in sent.body["tools"]] == ["read", "my_tool"]
