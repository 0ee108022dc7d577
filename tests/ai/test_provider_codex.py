"""OpenAI Codex (``openai-codex-responses``, the ChatGPT subscription backend) on our wire client, against
the fake server's Codex endpoint (which checks the account header, ``store``, ``stream``, ``instructions``
and the absence of an output cap)."""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import zstandard

from pi_tui.ai.errors import is_retryable_error
from pi_tui.ai.providers.openai_codex_responses import (
    build_request,
    codex_url,
    decode_codex_event,
    stream_codex,
    stream_openai_codex_responses,
)
from pi_tui.ai.stream import (
    Error,
    LlmRequest,
    ProviderError,
    StreamEvent,
    StreamOptions,
)
from pi_tui.ai.types import (
    AssistantMessage,
    LlmMessage,
    Model,
    ModelCost,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import abort_a_slow_answer, collect, serve_checked

ACCOUNT = "acct-test"
READ = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    constrainedSampling={"type": "json_schema", "strict": "prefer"},
)
LS = ToolDefinition(name="ls", description="List", parameters={"type": "object", "properties": {}})


def _token(account: str | None = ACCOUNT) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims: dict[str, Any] = {"exp": int(time.time()) + 3600}
    if account is not None:
        claims["https://api.openai.com/auth"] = {"chatgpt_account_id": account}
    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


TOKEN = _token()


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=TOKEN))


def _model(fake: FakeLLM, **extra: Any) -> Model:
    assert fake.server is not None
    fields: dict[str, Any] = {
        "id": "gpt-5.5",
        "api": "openai-codex-responses",
        "provider": "openai-codex",
        "base_url": fake.server.url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=5, output=30, cache_read=0.5),
        "context_window": 272_000,
        "max_tokens": 128_000,
    }
    fields.update(extra)
    return Model(**fields)


async def _run(
    model: Model, messages: list[LlmMessage], retries: int = 0, **options: Any
) -> tuple[list[StreamEvent], AssistantMessage]:
    request = LlmRequest("You are terse.", messages, tools=[READ, LS])
    opts = StreamOptions(api_key=options.pop("key", TOKEN), **options)
    return await collect(stream_codex(model, request, opts, max_retries=retries))


def test_url_follows_pi() -> None:
    assert codex_url("") == ("https://chatgpt.com/backend-api", "/codex/responses")
    assert codex_url("https://proxy.example/api/") == ("https://proxy.example/api", "/codex/responses")
    assert codex_url("https://proxy.example/codex") == ("https://proxy.example", "/codex/responses")
    assert codex_url("https://proxy.example/codex/responses") == ("https://proxy.example", "/codex/responses")


def test_body_follows_pi() -> None:
    model = Model(id="gpt-5.5", api="openai-codex-responses", provider="openai-codex", reasoning=True)
    request = LlmRequest("Be brief.", [UserMessage(content="hi")], tools=[READ, LS])
    body = build_request(model, request, StreamOptions(api_key="t", thinking="medium", session_id="s-1"))
    assert body["instructions"] == "Be brief." and body["input"][0]["role"] == "user"  # not an input item
    assert (body["store"], body["stream"], body["text"]) == (False, True, {"verbosity": "low"})
    assert body["include"] == ["reasoning.encrypted_content"]
    assert (body["prompt_cache_key"], body["tool_choice"], body["parallel_tool_calls"]) == (
        "s-1",
        "auto",
        True,
    )
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert [t["strict"] for t in body["tools"]] == [True, None]  # strict where asked, else null (pi)
    assert "max_output_tokens" not in body
    bare = build_request(model, LlmRequest("", [UserMessage(content="hi")]), StreamOptions(api_key="t"))
    assert bare["instructions"] == "You are a helpful assistant."
    assert bare["reasoning"] == {"effort": "none"} and "prompt_cache_key" not in bare and "tools" not in bare


async def test_a_tool_loop_with_reasoning_parallel_calls_and_cache(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply(
                [
                    thinking("Two files."),
                    text("Reading both."),
                    tool_call("read", {"path": "a.txt"}),
                    tool_call("read", {"path": "b.txt"}),
                ]
            ),
            Reply([text("Both say hi.")], usage={"input": 30, "output": 4, "cache_read": 200}),
        ]
    )
    model = _model(fake)
    prompt: list[LlmMessage] = [UserMessage(content="Read a and b")]
    _, first = await _run(model, prompt, thinking="high", session_id="s-1")
    assert first.stop_reason == "toolUse"
    calls = [p for p in first.content if isinstance(p, ToolCall)]
    results: list[LlmMessage] = [
        ToolResultMessage(tool_call_id=c.id, tool_name="read", content=[TextContent(text=f"hi {i}")])
        for i, c in enumerate(calls)
    ]
    _, second = await _run(model, [*prompt, first, *results], thinking="high", session_id="s-1")
    assert second.stop_reason == "stop" and (second.usage.input, second.usage.cache_read) == (30, 200)
    sent = fake.requests[1]
    assert sent.path == "/codex/responses"
    assert sent.headers["chatgpt-account-id"] == ACCOUNT and sent.headers["originator"] == "pi"
    assert sent.headers["openai-beta"] == "responses=experimental"
    assert sent.headers["session-id"] == sent.headers["x-client-request-id"] == "s-1"
    assert sent.body["input"][1]["type"] == "reasoning" and sent.body["input"][1]["encrypted_content"]


async def test_a_usage_limit_reads_as_pi_words_it(fake: FakeLLM) -> None:
    fake.script([Fault("rate_limit")])
    _, message = await _run(_model(fake), [UserMessage(content="hi")])
    assert message.error_message == "You have hit your ChatGPT usage limit (plus plan). Try again in ~30 min."


async def test_its_own_retry_loop_waits_for_retry_after_and_stops_at_the_limit(fake: FakeLLM) -> None:
    fake.script([Fault("overloaded", retry_after_ms=10), Fault("api_error"), Reply([text("third time")])])
    _, message = await _run(_model(fake), [UserMessage(content="hi")], retries=2)
    assert message.stop_reason == "stop" and len(fake.requests) == 3

    fake.script([Fault("overloaded", retry_after_ms=90_000)])
    _, refused = await _run(_model(fake), [UserMessage(content="hi")], retries=2)
    assert refused.error_message == "Server requested 90s retry delay (max: 60s)"
    assert len(fake.requests) == 4  # asked once, then refused to wait that long

    fake.script([Fault("rate_limit", message="You exceeded your current quota (insufficient_quota)")])
    _, quota = await _run(_model(fake), [UserMessage(content="hi")], retries=2)
    assert len(fake.requests) == 5  # a quota is not retried
    # any 429 with an error body reads as the plan's limit, as in pi (no plan or reset time given here)
    assert quota.error_message == "You have hit your ChatGPT usage limit." and not is_retryable_error(quota)


async def test_by_default_there_is_no_retry_and_the_agent_sees_the_status(fake: FakeLLM) -> None:
    fake.script([Fault("overloaded", retry_after_ms=1500)])
    events = [
        e
        async for e in stream_openai_codex_responses(
            _model(fake), LlmRequest("", [UserMessage(content="hi")]), StreamOptions(api_key=TOKEN)
        )
    ]
    final = events[-1]
    assert isinstance(final, Error)
    assert (final.error.error_message or "").startswith("503 ") and "(retry after 1500 ms)" in (
        final.error.error_message or ""
    )
    assert is_retryable_error(final.error) and len(fake.requests) == 1


async def test_a_refused_or_foreign_token_says_to_log_in_again(fake: FakeLLM) -> None:
    _, refused = await _run(_model(fake), [UserMessage(content="hi")], key=_token("acct-other"))
    assert (refused.error_message or "").startswith("401 ")
    assert "/login openai-codex" in (refused.error_message or "")  # the command that fixes it, whole
    _, foreign = await _run(_model(fake), [UserMessage(content="hi")], key=_token(None))
    assert (
        foreign.error_message
        == "Failed to extract accountId from token: log in to ChatGPT again with /login (openai-codex)"
    )
    assert len(fake.requests) == 1  # the second never left


async def test_an_error_event_and_a_cut_stream(fake: FakeLLM) -> None:
    fake.script(
        [
            Fault("stream_error", after_frames=3, reply=Reply([text("partial answer that breaks")])),
            Fault("truncate", after_frames=3, reply=Reply([text("this answer is cut off early")])),
        ]
    )
    _, broken = await _run(_model(fake), [UserMessage(content="hi")])
    assert (broken.error_message or "").startswith("Codex error: ") and is_retryable_error(broken)
    _, cut = await _run(_model(fake), [UserMessage(content="hi")])
    assert cut.stop_reason == "error" and "stream ended without" in (cut.error_message or "")


def test_the_backends_event_variants() -> None:
    done = decode_codex_event(
        None, json.dumps({"type": "response.done", "response": {"status": "completed"}}), None
    )
    assert done["type"] == "response.completed"
    incomplete = {"type": "response.incomplete", "response": {"status": "incomplete"}}
    assert decode_codex_event(None, json.dumps(incomplete), None)["response"]["status"] == "incomplete"
    failed = {"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}}
    with pytest.raises(ProviderError, match="^boom$"):
        decode_codex_event(None, json.dumps(failed), None)
    with pytest.raises(ProviderError, match="^Codex error: context_length_exceeded$"):
        decode_codex_event(None, json.dumps({"type": "error", "code": "context_length_exceeded"}), None)


async def test_abort_ends_the_stream_at_once(fake: FakeLLM) -> None:
    await abort_a_slow_answer(fake, stream_codex, _model(fake), TOKEN)


def test_the_fake_reads_a_zstd_body_and_refuses_what_the_backend_refuses() -> None:
    fake = FakeLLM(api_key=TOKEN)
    fake.script([Reply([text("ok")])])
    body = {"model": "gpt-5.5", "store": False, "stream": True, "instructions": "x", "input": "hi"}

    def post(payload: dict[str, Any], account: str = ACCOUNT) -> int:
        assert fake.server is not None
        request = urllib.request.Request(
            f"{fake.server.url}/backend-api/codex/responses",
            data=zstandard.ZstdCompressor().compress(json.dumps(payload).encode()),
            headers={
                "authorization": f"Bearer {TOKEN}",
                "chatgpt-account-id": account,
                "content-type": "application/json",
                "content-encoding": "zstd",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
                return int(response.status)
        except urllib.error.HTTPError as exc:
            exc.read()
            return int(exc.code)

    with fake.serve():
        assert post(body) == 200
        assert post({**body, "max_output_tokens": 100}) == 400
        assert post({**body, "store": True}) == 400
        assert post(body, account="someone-else") == 403
    assert fake.requests[0].body == body
    assert [r.response.status for r in fake.requests if r.response] == [200, 400, 400, 403]
