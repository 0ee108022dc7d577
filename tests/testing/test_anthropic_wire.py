from __future__ import annotations

import json

import anthropic
import httpx2
import pytest

from pi_tui.testing import FakeLLM, Reply, count_tokens, fake_signature, text, thinking, tool_call

from ._helpers import ANTHROPIC_MODEL, API_KEY, anthropic_for, http_client, user


def _stream(client: anthropic.Anthropic, **kwargs: object) -> tuple[list[object], anthropic.types.Message]:
    params = {"model": ANTHROPIC_MODEL, "max_tokens": 4000, "messages": [user("hi")], **kwargs}
    with client.messages.stream(**params) as stream:  # type: ignore[arg-type]
        events = list(stream)
        return events, stream.get_final_message()


def test_stream_assembles_thinking_text_and_tool_use_with_deterministic_ids(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script(
        [
            Reply(
                [
                    thinking("Look at the file first."),
                    text("Reading it now."),
                    tool_call("read", {"path": "a.py"}),
                ]
            ),
            Reply([tool_call("bash", {"cmd": "ls"}), tool_call("read", {"path": "b.py"})]),
        ]
    )
    _, first = _stream(claude)
    _, second = _stream(claude)

    assert [b.type for b in first.content] == ["thinking", "text", "tool_use"]
    assert first.content[0].thinking == "Look at the file first."
    assert first.content[0].signature == fake_signature("Look at the file first.")
    assert first.content[1].text == "Reading it now."
    assert (first.content[2].id, first.content[2].name, first.content[2].input) == (
        "toolu_fake_0001",
        "read",
        {"path": "a.py"},
    )
    assert first.stop_reason == "tool_use"
    assert [b.id for b in second.content] == ["toolu_fake_0002", "toolu_fake_0003"]
    assert fake_llm.requests[1].response.tool_call_ids == ["toolu_fake_0002", "toolu_fake_0003"]
    fake_llm.assert_script_consumed()


def test_stream_follows_the_real_event_sequence_with_usage_in_start_and_delta(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply([thinking("hm"), text("one two")])])
    with claude.messages.create(
        model=ANTHROPIC_MODEL, max_tokens=4000, messages=[user("hi")], stream=True
    ) as stream:
        events = list(stream)

    assert [e.type for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start, delta = events[0], events[-2]
    assert events[1].content_block.signature == ""
    assert events[3].delta.type == "signature_delta"
    prompt = count_tokens({"messages": [user("hi")]})
    assert start.message.usage.input_tokens == prompt
    assert start.message.usage.cache_read_input_tokens == 0
    assert delta.usage.input_tokens == prompt
    assert delta.usage.output_tokens == count_tokens("hm") + count_tokens("one two")
    assert delta.delta.stop_reason == "end_turn"


def test_text_is_split_by_word_by_default_or_by_fixed_chunks(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply("alpha beta gamma"), Reply("abcdefgh", chunk=3), Reply("one two", chunk="whole")])
    deltas = []
    for _ in range(3):
        events, _ = _stream(claude)
        deltas.append([e.delta.text for e in events if e.type == "content_block_delta"])

    assert deltas == [["alpha ", "beta ", "gamma"], ["abc", "def", "gh"], ["one two"]]


def test_non_stream_message_carries_parsed_tool_input_stop_reason_and_usage(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script(
        [Reply([text("x"), tool_call("edit", '{"path": "a", "n": 2}')], stop_reason="max_tokens")]
    )
    message = claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=100, messages=[user("hi")])

    assert message.content[1].input == {"path": "a", "n": 2}
    assert message.stop_reason == "max_tokens"
    assert message.usage.input_tokens == count_tokens({"messages": [user("hi")]})
    assert message.id == "msg_fake_0001"


def test_raw_tool_arguments_are_streamed_verbatim_even_when_invalid(
    fake_llm: FakeLLM, raw: httpx2.Client
) -> None:
    fake_llm.script([Reply([tool_call("bash", '{"cmd": "ls -la", "timeo')], chunk=5)])
    body = {"model": ANTHROPIC_MODEL, "max_tokens": 10, "messages": [user("hi")], "stream": True}
    response = raw.post("/v1/messages", json=body, headers={"x-api-key": API_KEY})

    frames = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    pieces = [f["delta"]["partial_json"] for f in frames if f["type"] == "content_block_delta"]
    assert pieces[0] == ""
    assert "".join(pieces) == '{"cmd": "ls -la", "timeo'
    assert all(len(p) <= 5 for p in pieces)
    assert "event: content_block_delta" in response.text
    assert response.headers["content-type"].startswith("text/event-stream")


def test_ping_is_sent_after_message_start_when_asked(fake_llm: FakeLLM, raw: httpx2.Client) -> None:
    fake_llm.script([Reply("hi", ping=True)])
    body = {"model": ANTHROPIC_MODEL, "max_tokens": 10, "messages": [user("hi")], "stream": True}
    response = raw.post("/v1/messages", json=body, headers={"x-api-key": API_KEY})

    names = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
    assert names[:3] == ["message_start", "ping", "content_block_start"]


def test_redacted_thinking_is_sent_as_an_opaque_block(fake_llm: FakeLLM, claude: anthropic.Anthropic) -> None:
    fake_llm.script([Reply([thinking("opaque-bytes", redacted=True), text("ok")])])
    _, message = _stream(claude)

    assert message.content[0].type == "redacted_thinking"
    assert message.content[0].data == "opaque-bytes"


def test_usage_override_replaces_only_the_given_numbers(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply("hi", usage={"output": 777, "cache_read": 5})])
    _, message = _stream(claude)

    assert message.usage.output_tokens == 777
    assert message.usage.cache_read_input_tokens == 5
    assert message.usage.input_tokens == count_tokens({"messages": [user("hi")]})
    assert fake_llm.requests[0].response.usage == {
        "input": message.usage.input_tokens,
        "output": 777,
        "cache_read": 5,
        "cache_write": 0,
    }


def test_count_tokens_endpoint_answers_the_fake_count_without_using_the_script(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = {"system": "You are terse.", "messages": [user("count me please")]}
    result = claude.messages.count_tokens(model=ANTHROPIC_MODEL, **body)  # type: ignore[arg-type]

    assert result.input_tokens == count_tokens(body)
    assert fake_llm.requests[0].api == "anthropic-count-tokens"
    fake_llm.assert_script_consumed()


def test_models_endpoint_answers_in_each_providers_shape(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    from ._helpers import openai_for

    anthropic_ids = [m.id for m in claude.models.list()]
    with openai_for(fake_llm) as gpt:
        openai_ids = [m.id for m in gpt.models.list()]

    assert anthropic_ids and all(i.startswith("claude") for i in anthropic_ids)
    assert "gpt-5" in openai_ids


@pytest.mark.parametrize("header", ["x-api-key", "authorization"])
def test_configured_key_is_accepted_from_either_header_and_recorded_redacted(header: str) -> None:
    fake = FakeLLM(api_key="right-key")
    fake.script([Reply("ok")])
    value = "right-key" if header == "x-api-key" else "Bearer right-key"
    with fake.serve() as server, http_client(base_url=server.url) as client:
        body = {"model": ANTHROPIC_MODEL, "max_tokens": 10, "messages": [user("hi")]}
        response = client.post(
            "/v1/messages", json=body, headers={header: value, "anthropic-version": "2099-01-01"}
        )

    assert response.status_code == 200
    assert fake.requests[0].headers[header] == "<redacted>"
    assert fake.requests[0].headers["anthropic-version"] == "2099-01-01"


def test_wrong_key_gets_a_real_shaped_401_without_consuming_the_script() -> None:
    fake = FakeLLM(api_key="right-key")
    fake.script([Reply("ok")])
    with fake.serve(), anthropic_for(fake) as client:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            client.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=[user("hi")])

    assert caught.value.body["error"] == {"type": "authentication_error", "message": "invalid x-api-key"}
    assert caught.value.response.headers["request-id"] == "req_fake_0001"
    assert fake.remaining_turns == 1
