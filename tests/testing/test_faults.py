from __future__ import annotations

import threading
import time

import anthropic
import httpx2
import openai
import pytest

from pi_tui.testing import FakeLLM, Fault, Reply, count_tokens

from ._helpers import ANTHROPIC_MODEL, OPENAI_MODEL, anthropic_for, openai_for, user

MESSAGES = [user("hi")]


def _anthropic_stream(client: anthropic.Anthropic) -> anthropic.types.Message:
    with client.messages.stream(model=ANTHROPIC_MODEL, max_tokens=100, messages=MESSAGES) as stream:  # type: ignore[arg-type]
        return stream.get_final_message()


def _chat_stream(client: openai.OpenAI) -> openai.types.chat.ChatCompletion:
    with client.chat.completions.stream(model=OPENAI_MODEL, messages=MESSAGES) as stream:  # type: ignore[arg-type]
        return stream.get_final_completion()


@pytest.mark.parametrize(
    ("kind", "anthropic_error", "anthropic_status", "openai_error", "openai_status"),
    [
        ("rate_limit", anthropic.RateLimitError, 429, openai.RateLimitError, 429),
        ("overloaded", anthropic.OverloadedError, 529, openai.InternalServerError, 503),
        ("api_error", anthropic.InternalServerError, 500, openai.InternalServerError, 500),
        ("auth", anthropic.AuthenticationError, 401, openai.AuthenticationError, 401),
        ("request_too_large", anthropic.ContentTooLargeError, 413, openai.APIStatusError, 413),
    ],
)
def test_http_faults_raise_the_sdks_real_exception_types(
    fake_llm: FakeLLM,
    claude: anthropic.Anthropic,
    gpt: openai.OpenAI,
    kind: str,
    anthropic_error: type[Exception],
    anthropic_status: int,
    openai_error: type[Exception],
    openai_status: int,
) -> None:
    fake_llm.script([Fault(kind)] * 3)

    with pytest.raises(anthropic_error) as a:
        _anthropic_stream(claude)
    with pytest.raises(openai_error) as c:
        _chat_stream(gpt)
    with pytest.raises(openai_error) as r:
        gpt.responses.create(model=OPENAI_MODEL, input="hi")

    assert a.value.status_code == anthropic_status  # type: ignore[attr-defined]
    assert c.value.status_code == r.value.status_code == openai_status  # type: ignore[attr-defined]
    assert [req.response.fault for req in fake_llm.requests] == [kind] * 3


def test_rate_limit_carries_retry_after_ms_so_sdk_retries_are_instant(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The waits the SDK chose between its tries, not the wall time of the whole call: on a busy machine
    # the three requests alone took longer than the 2 s the wall-time bound allowed.
    waits: list[float] = []
    real_sleep = time.sleep
    caller = threading.get_ident()

    def sleep(seconds: float) -> None:
        if threading.get_ident() == caller:
            waits.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    fake_llm.script([Fault("rate_limit"), Fault("overloaded"), Reply("finally")])
    with anthropic_for(fake_llm, max_retries=2) as client:
        message = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=MESSAGES)

    assert message.content[0].text == "finally"
    assert len(fake_llm.requests) == 3
    assert len(waits) == 2 and sum(waits) < 0.5, waits  # the default backoff alone would be ~1.5 s


def test_context_overflow_fault_uses_each_apis_real_text_with_the_fake_count(
    fake_llm: FakeLLM, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Fault("context_overflow")] * 2 + [Fault("context_overflow", tokens=250_001)])

    with pytest.raises(anthropic.BadRequestError) as a:
        _anthropic_stream(claude)
    with pytest.raises(openai.BadRequestError) as c:
        _chat_stream(gpt)
    with pytest.raises(openai.BadRequestError) as r:
        gpt.responses.create(model=OPENAI_MODEL, input="hi")

    assert a.value.body["error"]["message"] == "prompt is too long: 200001 tokens > 200000 maximum"  # type: ignore[index]
    assert c.value.code == "context_length_exceeded"
    assert (
        "maximum context length is 200000 tokens. However, your messages resulted in 200001 tokens"
        in c.value.message
    )
    assert r.value.code == "context_length_exceeded"
    assert "exceeds the context window" in r.value.message


def test_context_overflow_reports_the_real_count_when_the_prompt_is_over_the_window() -> None:
    fake = FakeLLM(context_window=100, strict=False)
    fake.script([Fault("context_overflow")])
    body = [user("x" * 800)]
    with fake.serve(), anthropic_for(fake) as client:
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=body)  # type: ignore[arg-type]

    tokens = count_tokens({"messages": body})
    assert f"prompt is too long: {tokens} tokens > 100 maximum" in str(caught.value)


def test_anthropic_mid_stream_error_is_a_status_200_api_status_error(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Fault("stream_error", after_frames=3)])

    with pytest.raises(anthropic.APIStatusError) as caught:
        _anthropic_stream(claude)

    assert caught.value.status_code == 200
    assert not isinstance(caught.value, anthropic.OverloadedError)
    assert "overloaded_error" in str(caught.value)
    assert fake_llm.wait_for_delivery().response.frames_sent == 4


def test_chat_mid_stream_error_is_a_statusless_api_error(fake_llm: FakeLLM, gpt: openai.OpenAI) -> None:
    fake_llm.script([Fault("stream_error", after_frames=2, error_type="api_error", message="boom")])

    with pytest.raises(openai.APIError) as caught:
        _chat_stream(gpt)

    assert not isinstance(caught.value, openai.APIStatusError)
    assert caught.value.message == "boom"


def test_responses_mid_stream_error_arrives_as_an_error_event(fake_llm: FakeLLM, gpt: openai.OpenAI) -> None:
    fake_llm.script([Fault("stream_error", after_frames=2)])

    with gpt.responses.stream(model=OPENAI_MODEL, input="hi") as stream:
        events = list(stream)
        with pytest.raises(RuntimeError, match="response.completed"):
            stream.get_final_response()

    assert events[-1].type == "error"
    assert events[-1].message == "Overloaded"


def test_stream_error_on_a_non_streaming_request_becomes_its_http_twin(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Fault("stream_error")])

    with pytest.raises(anthropic.OverloadedError):
        claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=MESSAGES)


def test_truncated_streams_end_silently_without_a_stop_reason(
    fake_llm: FakeLLM, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_llm.script(
        [
            Fault("truncate", after_frames=3),
            Fault("truncate", after_frames=3),
            Fault("truncate", after_frames=4),
        ]
    )

    message = _anthropic_stream(claude)
    completion = _chat_stream(gpt)
    with gpt.responses.stream(model=OPENAI_MODEL, input="hi") as stream:
        with pytest.raises(RuntimeError):
            stream.get_final_response()

    assert message.stop_reason is None
    assert message.content[0].text == "This "
    assert completion.choices[0].finish_reason is None
    assert completion.choices[0].message.content == "This answer "
    assert fake_llm.wait_for_delivery(1).response.frames_sent == 3


def test_truncate_streams_the_given_reply_before_cutting(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Fault("truncate", after_frames=4, reply=Reply("one two three four"))])

    message = _anthropic_stream(claude)

    assert message.content[0].text == "one two "


def test_socket_drop_raises_raw_httpx2_from_anthropic_and_wrapped_from_openai(
    fake_llm: FakeLLM, claude: anthropic.Anthropic, gpt: openai.OpenAI
) -> None:
    fake_llm.script([Fault("drop", after_frames=2)] * 3)

    with pytest.raises(httpx2.RemoteProtocolError):
        _anthropic_stream(claude)
    with pytest.raises(openai.APIConnectionError):
        _chat_stream(gpt)
    with pytest.raises(openai.APIConnectionError):
        with gpt.responses.stream(model=OPENAI_MODEL, input="hi") as stream:
            list(stream)

    assert fake_llm.wait_for_delivery(1).response.frames_sent == 2


def test_socket_drop_on_a_non_streaming_request_is_a_connection_error(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Fault("drop"), Fault("truncate")])

    with pytest.raises(anthropic.APIConnectionError):
        claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=MESSAGES)
    with pytest.raises(anthropic.APIConnectionError):
        claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=MESSAGES)


def test_stall_runs_into_the_clients_read_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script([Fault("stall", after_frames=2)] * 2)
    with anthropic_for(fake_llm, timeout=anthropic.Timeout(0.2, connect=5)) as claude:
        with pytest.raises(httpx2.ReadTimeout):
            _anthropic_stream(claude)
    with openai_for(fake_llm, timeout=openai.Timeout(0.2, connect=5)) as gpt:
        with pytest.raises(openai.APITimeoutError):
            _chat_stream(gpt)


def test_frame_delay_spaces_out_the_frames(fake_llm: FakeLLM, claude: anthropic.Anthropic) -> None:
    fake_llm.script([Reply("a b c", frame_delay=0.03)])
    started = time.monotonic()
    _anthropic_stream(claude)

    frames = fake_llm.wait_for_delivery().response.frames_sent
    assert frames == 8
    assert time.monotonic() - started >= 0.03 * (frames - 1)


def test_client_that_hangs_up_mid_stream_is_recorded_as_aborted(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply("word " * 200, frame_delay=0.005)])
    with claude.messages.stream(model=ANTHROPIC_MODEL, max_tokens=10, messages=MESSAGES) as stream:  # type: ignore[arg-type]
        next(iter(stream))

    response = fake_llm.wait_for_delivery().response
    assert response.aborted_at_frame is not None
    assert response.aborted_at_frame < response.frames_planned
