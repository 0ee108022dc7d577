from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.cost import calculate_cost
from pi_tui.ai.providers.anthropic import stream_anthropic
from pi_tui.ai.providers.openai_completions import stream_openai_completions
from pi_tui.ai.providers.openai_responses import stream_openai_responses
from pi_tui.ai.stream import Done, Error, LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    LlmMessage,
    Model,
    ModelCost,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

APIS = ["anthropic", "chat", "responses"]
_FNS = {
    "anthropic": stream_anthropic,
    "chat": stream_openai_completions,
    "responses": stream_openai_responses,
}
_API_NAMES = {
    "anthropic": "anthropic-messages",
    "chat": "openai-completions",
    "responses": "openai-responses",
}
# Long enough (about 2,000 fake tokens) to pass both APIs' minimum cacheable prefix.
SYSTEM = "You are a careful coding agent. Follow the repository conventions. " * 120
TOOLS = [
    ToolDefinition(
        name="read",
        description="Read a file",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )
]
PRICES = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    with fake.serve():
        yield fake


def model_for(fake: FakeLLM, api: str) -> Model:
    assert fake.server is not None
    return Model(
        id="claude-opus-4-1" if api == "anthropic" else "gpt-5",
        api=_API_NAMES[api],
        provider="anthropic" if api == "anthropic" else "openai",
        base_url=fake.server.anthropic_base_url if api == "anthropic" else fake.server.openai_base_url,
        reasoning=True,
        max_tokens=32_000,
        cost=PRICES,
    )


async def turn(api: str, model: Model, messages: list[LlmMessage], **options: Any) -> AssistantMessage:
    options.setdefault("api_key", "fake-key")
    request = LlmRequest(SYSTEM, list(messages), TOOLS)
    events = [e async for e in _FNS[api](model, request, StreamOptions(**options))]
    last = events[-1]
    assert isinstance(last, Done), last.error.error_message if isinstance(last, Error) else last
    return last.message


def answer_tools(message: AssistantMessage) -> list[ToolResultMessage]:
    return [
        ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=[TextContent(text=f"contents of {call.arguments['path']}: " + "data " * 40)],
        )
        for call in message.tool_calls()
    ]


def reported(fake: FakeLLM, index: int) -> dict[str, int]:
    generation = [r for r in fake.requests if r.api != "anthropic-count-tokens"]
    response = generation[index].response
    assert response is not None and response.usage is not None
    return response.usage


def prompt_total(usage: Usage | dict[str, int]) -> int:
    if isinstance(usage, Usage):
        return usage.input + usage.cache_read + usage.cache_write
    return usage["input"] + usage["cache_read"] + usage["cache_write"]


SCRIPT = [
    Reply(
        [
            thinking("I should read both files."),
            tool_call("read", {"path": "a.py"}),
            tool_call("read", {"path": "b.py"}),
        ]
    ),
    Reply([thinking("One more file."), text("Almost there."), tool_call("read", {"path": "c.py"})]),
    Reply([text("All three files look fine.")]),
    Reply([thinking("Easy."), text("You're welcome.")]),
]


@pytest.mark.parametrize("api", APIS)
async def test_multi_turn_tool_conversation_breaks_no_provider_rule(fake: FakeLLM, api: str) -> None:
    fake.script(SCRIPT)
    model = model_for(fake, api)
    messages: list[LlmMessage] = [UserMessage(content="Check a.py, b.py and c.py.")]
    answers = []
    for _ in range(3):
        answer = await turn(api, model, messages, thinking="medium", session_id="session-1")
        answers.append(answer)
        messages.append(answer)
        messages.extend(answer_tools(answer))
    messages.append(UserMessage(content="Thanks!"))
    answers.append(await turn(api, model, messages, thinking="medium", session_id="session-1"))

    assert fake.violations == []
    fake.assert_script_consumed()
    assert [a.stop_reason for a in answers] == ["toolUse", "toolUse", "stop", "stop"]
    assert answers[-1].text() == "You're welcome."
    # Every request's usage is exactly what the fake counted and reported.
    for i, answer in enumerate(answers):
        usage = answer.usage
        mine = {
            "input": usage.input,
            "output": usage.output,
            "cache_read": usage.cache_read,
            "cache_write": usage.cache_write,
        }
        assert mine == reported(fake, i)
    assert answers[-1].usage.cache_read > 0


async def test_anthropic_replays_signed_thinking_first_and_merges_tool_results(fake: FakeLLM) -> None:
    fake.script(SCRIPT[:2])
    model = model_for(fake, "anthropic")
    messages: list[LlmMessage] = [UserMessage(content="Check the files.")]
    first = await turn("anthropic", model, messages, thinking="low")
    messages += [first, *answer_tools(first)]
    await turn("anthropic", model, messages, thinking="low")
    body = fake.last_request.body
    assistant, results = body["messages"][1], body["messages"][2]
    assert assistant["content"][0]["type"] == "thinking"
    assert assistant["content"][0]["signature"] == first.content[0].thinking_signature  # type: ignore[union-attr]
    assert [b["type"] for b in results["content"]] == ["tool_result", "tool_result"]
    assert fake.violations == []


async def test_anthropic_redacted_thinking_is_replayed_verbatim(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply([thinking("opaque-bytes-123", redacted=True), tool_call("read", {"path": "a.py"})]),
            Reply([text("ok")]),
        ]
    )
    model = model_for(fake, "anthropic")
    messages: list[LlmMessage] = [UserMessage(content="go")]
    first = await turn("anthropic", model, messages, thinking="low")
    block = first.content[0]
    assert getattr(block, "redacted", None) is True
    messages += [first, *answer_tools(first)]
    await turn("anthropic", model, messages, thinking="low")
    assert fake.last_request.body["messages"][1]["content"][0] == {
        "type": "redacted_thinking",
        "data": "opaque-bytes-123",
    }
    assert fake.violations == []


async def test_anthropic_each_request_reads_what_the_previous_one_wrote(fake: FakeLLM) -> None:
    fake.script(SCRIPT)
    model = model_for(fake, "anthropic")
    # Prompts as pi-tui and pi store them (a text block list): a plain string would be sent as a string
    # once it is no longer the marked last message, which is a different prefix (pi does the same).
    messages: list[LlmMessage] = [UserMessage(content=[TextContent(text="Check a.py, b.py and c.py.")])]
    usages = []
    for _ in range(3):
        answer = await turn("anthropic", model, messages)
        usages.append(answer.usage)
        messages += [answer, *answer_tools(answer)]
    messages.append(UserMessage(content=[TextContent(text="Thanks!")]))
    usages.append((await turn("anthropic", model, messages)).usage)

    assert usages[0].cache_read == 0 and usages[0].cache_write > 0
    for before, after in zip(usages, usages[1:], strict=False):
        assert after.cache_read == before.cache_read + before.cache_write
    # The only uncached input is the message overhead past the last breakpoint.
    assert all(u.input < 20 for u in usages)
    assert fake.cache_stats().hit_ratio > 0.5
    assert fake.violations == []


async def test_anthropic_retention_none_sends_no_markers_and_caches_nothing(fake: FakeLLM) -> None:
    fake.script(SCRIPT[2:3] * 2)
    model = model_for(fake, "anthropic")
    for _ in range(2):
        usage = (await turn("anthropic", model, [UserMessage(content="hi")], cache_retention="none")).usage
        assert (usage.cache_read, usage.cache_write) == (0, 0)
    assert "cache_control" not in str(fake.last_request.body)


async def test_anthropic_cost_prices_the_reported_usage_including_one_hour_writes(fake: FakeLLM) -> None:
    fake.script(SCRIPT[2:3] * 2)
    model = model_for(fake, "anthropic")

    def one_hour(body: dict[str, Any]) -> dict[str, Any]:
        # The fake is not api.anthropic.com, so "long" retention alone would not ask for a 1-hour TTL.
        for block in [*body["system"], *body.get("tools", [])]:
            if "cache_control" in block:
                block["cache_control"]["ttl"] = "1h"
        for message in body["messages"]:
            for block in message["content"]:
                if "cache_control" in block:
                    block["cache_control"]["ttl"] = "1h"
        return body

    first = await turn("anthropic", model, [UserMessage(content="hi")], on_payload=one_hour)
    assert first.usage.cache_write > 0
    expected_write = first.usage.cache_write * PRICES.input * 2 / 1e6
    assert first.usage.cost.cache_write == pytest.approx(expected_write)
    assert first.usage.cost.total == pytest.approx(
        first.usage.input * 3 / 1e6 + first.usage.output * 15 / 1e6 + expected_write
    )

    second = await turn("anthropic", model, [UserMessage(content="hi")])
    assert second.usage.cache_read == first.usage.cache_write
    assert second.usage.cost == calculate_cost(model, second.usage)
    assert second.usage.cost.cache_read == pytest.approx(second.usage.cache_read * 0.3 / 1e6)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_openai_prefix_cache_hits_are_reported_as_cache_reads(fake: FakeLLM, api: str) -> None:
    fake.script(SCRIPT[2:3] * 2)
    model = model_for(fake, api)
    first = await turn(api, model, [UserMessage(content="hi")], session_id="s-1")
    second = await turn(api, model, [UserMessage(content="hi")], session_id="s-1")
    assert first.usage.cache_read == 0
    assert second.usage.cache_read >= 1024
    assert second.usage.cache_read == reported(fake, 1)["cache_read"]
    assert prompt_total(second.usage) == prompt_total(reported(fake, 1))
    # pi sends the key on Chat Completions only to OpenAI's own host; this fake is on loopback.
    assert fake.last_request.body.get("prompt_cache_key") == (None if api == "chat" else "s-1")
    assert second.usage.cost.total == pytest.approx(
        (
            second.usage.input * 3
            + second.usage.output * 15
            + second.usage.cache_read * 0.3
            + second.usage.cache_write * 3.75
        )
        / 1e6
    )


@pytest.mark.parametrize("api", APIS)
async def test_history_from_another_provider_replays_without_violations(fake: FakeLLM, api: str) -> None:
    fake.script([Reply([text("Understood.")])])
    foreign = AssistantMessage(
        content=[
            TextContent(text="Let me check."),
            ToolCall(id="call_abc|fc_" + "x" * 200, name="read", arguments={"path": "a.py"}),
        ],
        api="other-api",
        provider="other",
        model="other-model",
        stop_reason="toolUse",
    )
    messages: list[LlmMessage] = [
        UserMessage(content="Look at a.py"),
        foreign,
        *answer_tools(foreign),
        UserMessage(content="And now?"),
    ]
    answer = await turn(api, model_for(fake, api), messages)
    assert answer.text() == "Understood."
    assert fake.violations == []
