from __future__ import annotations

from pi_tui.ai.registry import stream
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Reply, text

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+ip1sAAAAASUVORK5CYII="


async def test_copilot_requests_carry_the_initiator_intent_and_vision_headers() -> None:
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    with fake.serve() as server:
        model = Model(
            id="gpt-5.4", api="openai-completions", provider="github-copilot", base_url=server.openai_base_url
        )
        call = ToolCall(id="call_1", name="read", arguments={"path": "a"})
        histories = [
            [UserMessage(content="hi")],
            [
                UserMessage(content="hi"),
                AssistantMessage(
                    content=[call],
                    stop_reason="toolUse",
                    api=model.api,
                    provider=model.provider,
                    model=model.id,
                ),
                ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="x")]),
            ],
            [UserMessage(content=[TextContent(text="look"), ImageContent(data=PNG, mime_type="image/png")])],
        ]
        for history in histories:
            async for _ in stream(model, LlmRequest("sys", history, []), StreamOptions(api_key="k")):
                pass
    sent = [r.headers for r in fake.requests]
    assert [h["x-initiator"] for h in sent] == ["user", "agent", "user"]
    assert {h["openai-intent"] for h in sent} == {"conversation-edits"}
    assert ["copilot-vision-request" in h for h in sent] == [False, False, True]


async def test_other_providers_get_no_copilot_headers() -> None:
    fake = FakeLLM()
    fake.script([Reply([text("one")])])
    with fake.serve() as server:
        model = Model(
            id="gpt-5", api="openai-completions", provider="openai", base_url=server.openai_base_url
        )
        async for _ in stream(
            model, LlmRequest("sys", [UserMessage(content="hi")], []), StreamOptions(api_key="k")
        ):
            pass
    assert "x-initiator" not in fake.requests[-1].headers


async def test_the_callers_options_are_left_as_they_were() -> None:
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([text("two")])])
    options = StreamOptions(api_key="k", headers={"X-Mine": "1"})
    with fake.serve() as server:
        model = Model(
            id="gpt-5.4", api="openai-completions", provider="github-copilot", base_url=server.openai_base_url
        )
        call = ToolCall(id="call_1", name="read", arguments={"path": "a"})
        first = [UserMessage(content="hi")]
        second = [
            *first,
            AssistantMessage(
                content=[call], stop_reason="toolUse", api=model.api, provider=model.provider, model=model.id
            ),
            ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="x")]),
        ]
        for history in (first, second):
            async for _ in stream(model, LlmRequest("sys", history, []), options):
                pass
    assert options.headers == {"X-Mine": "1"}
    assert [r.headers["x-initiator"] for r in fake.requests] == ["user", "agent"]
    assert {r.headers["x-mine"] for r in fake.requests} == {"1"}
