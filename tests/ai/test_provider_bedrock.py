"""Amazon Bedrock (``bedrock-converse-stream``) against the fake server: signed requests the fake verifies
with the test's secret, the body pi builds, the binary event stream read back, errors a user can act on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.errors import is_context_overflow, is_retryable_error
from pi_tui.ai.providers._aws_credentials import endpoint_for, resolve_region
from pi_tui.ai.providers.bedrock import stream_bedrock
from pi_tui.ai.stream import Error, LlmRequest, StreamEvent, StreamOptions, TextDelta
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call

from .provider_streams import PIXEL, abort_at_first_text, collect

KEY_ID = "AKIDFAKEBEDROCK"
SECRET = "fake/secret+key=="
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
READ = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    for name in (
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    fake = FakeLLM(aws_credentials={KEY_ID: SECRET}, api_key="bedrock-api-key")
    with fake.serve():
        yield fake


def _model(fake: FakeLLM, model_id: str = CLAUDE, **extra: Any) -> Model:
    assert fake.server is not None
    fields: dict[str, Any] = {
        "id": model_id,
        "name": "Claude Sonnet 4.5",
        "api": "bedrock-converse-stream",
        "provider": "amazon-bedrock",
        "base_url": fake.server.bedrock_base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "max_tokens": 64000,
        "cost": ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    }
    fields.update(extra)
    return Model(**fields)


async def _run(
    model: Model,
    messages: list[LlmMessage],
    tools: list[ToolDefinition] | None = None,
    **options: Any,
) -> tuple[list[StreamEvent], AssistantMessage]:
    opts = StreamOptions(**{"api_key": "<authenticated>", **options})
    return await collect(stream_bedrock(model, LlmRequest("You are terse.", messages, tools or []), opts))


def _user(text_value: str) -> UserMessage:
    return UserMessage(content=text_value)


async def test_a_signed_answer_streams_text_and_usage(fake: FakeLLM) -> None:
    fake.script([Reply([text("Hello from Bedrock.")])])
    events, message = await _run(_model(fake), [_user("hi")])
    assert message.stop_reason == "stop", message.error_message
    assert [b.text for b in message.content if isinstance(b, TextContent)] == ["Hello from Bedrock."]
    assert sum(isinstance(e, TextDelta) for e in events) == 3
    request = fake.last_request
    assert request.api == "bedrock" and request.model == CLAUDE
    assert request.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert request.violations == []
    assert request.body == {
        "inferenceConfig": {"maxTokens": 64000},
        "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}],
        "system": [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}],
    }
    assert message.usage.input == request.response.usage["input"] > 0
    assert message.usage.output > 0 and message.usage.cost.total > 0


async def test_a_wrong_secret_is_refused_with_what_to_check(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    _, message = await _run(_model(fake), [_user("hi")])
    assert message.stop_reason == "error"
    text_shown = message.error_message or ""
    assert text_shown.startswith(
        "InvalidSignatureException: The request signature we calculated does not match"
    )
    assert "HTTP 403" in text_shown and "AWS_SECRET_ACCESS_KEY" in text_shown
    assert not is_retryable_error(message)


async def test_session_token_is_signed_and_a_bearer_key_is_sent_as_is(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session/token==")
    fake.script([Reply([text("one")]), Reply([text("two")])])
    _, first = await _run(_model(fake), [_user("hi")])
    assert first.stop_reason == "stop", first.error_message
    assert fake.last_request.headers["x-amz-security-token"] == "session/token=="
    _, second = await _run(_model(fake), [_user("hi")], api_key="bedrock-api-key")
    assert second.stop_reason == "stop", second.error_message
    assert "x-amz-date" not in fake.last_request.headers


async def test_tool_loop_with_parallel_calls_thinking_and_images(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply(
                [
                    thinking("plan the reads"),
                    tool_call("read", {"path": "a"}),
                    tool_call("read", {"path": "b"}),
                ]
            ),
            Reply([text("done")]),
        ]
    )
    model = _model(fake)
    history: list[LlmMessage] = [
        UserMessage(content=[TextContent(text="look"), ImageContent(data=PIXEL, mime_type="image/png")])
    ]
    _, first = await _run(model, history, [READ], thinking="medium")
    assert first.stop_reason == "toolUse", first.error_message
    calls = [b for b in first.content if isinstance(b, ToolCall)]
    assert [c.arguments for c in calls] == [{"path": "a"}, {"path": "b"}]
    [reasoning] = [b for b in first.content if isinstance(b, ThinkingContent)]
    assert reasoning.thinking == "plan the reads" and reasoning.thinking_signature
    body = fake.requests[0].body
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }
    assert body["messages"][0]["content"][1] == {"image": {"format": "png", "source": {"bytes": PIXEL}}}
    assert body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {"json": READ.parameters}
    history += [
        first,
        ToolResultMessage(tool_call_id=calls[0].id, tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(
            tool_call_id=calls[1].id, tool_name="read", content=[TextContent(text="")], is_error=True
        ),
    ]
    _, second = await _run(model, history, [READ], thinking="medium")
    assert second.stop_reason == "stop", second.error_message
    replay = fake.requests[1].body["messages"]
    assert replay[1]["content"][0] == {
        "reasoningContent": {
            "reasoningText": {"text": "plan the reads", "signature": reasoning.thinking_signature}
        }
    }
    assert replay[2] == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": calls[0].id, "content": [{"text": "A"}], "status": "success"}},
            {"toolResult": {"toolUseId": calls[1].id, "content": [{"text": "<empty>"}], "status": "error"}},
            {"cachePoint": {"type": "default"}},
        ],
    }
    assert fake.violations == []


async def test_cache_points_read_the_prefix_back(fake: FakeLLM) -> None:
    fake.engine.defaults = fake.engine.defaults.__class__(200_000, 128_000, 10)
    fake.script([Reply([text("one")]), Reply([text("two")])])
    model = _model(fake)
    _, first = await _run(model, [_user("a long enough question " * 20)], cache_retention="long")
    assert first.usage.cache_write > 0 and first.usage.cache_read == 0
    assert fake.requests[0].body["system"][1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    history: list[LlmMessage] = [_user("a long enough question " * 20), first, _user("and again")]
    _, second = await _run(model, history, cache_retention="long")
    assert second.usage.cache_read == first.usage.cache_write + first.usage.cache_read > 0


async def test_stop_reasons_and_in_stream_exceptions(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply([text("cut")], stop_reason="max_tokens"),
            Fault(
                "stream_error",
                after_frames=2,
                error_type="rate_limit_error",
                reply=Reply([text("partial words here")]),
            ),
        ]
    )
    _, length = await _run(_model(fake), [_user("hi")])
    assert length.stop_reason == "length"
    _, failed = await _run(_model(fake), [_user("hi")])
    assert failed.stop_reason == "error"
    assert (failed.error_message or "").startswith("Throttling error: Too many requests")
    assert is_retryable_error(failed)


@pytest.mark.parametrize(
    ("fault", "starts", "retryable"),
    [
        (Fault("rate_limit", retry_after_ms=2000), "Throttling error: Too many requests", True),
        (Fault("api_error"), "Internal server error: ", True),
        (Fault("overloaded"), "Service unavailable: ", True),
        (Fault("auth"), "UnrecognizedClientException: The security token", False),
        (Fault("context_overflow"), "Validation error: ", False),
    ],
)
async def test_http_errors_keep_the_provider_text(
    fake: FakeLLM, fault: Fault, starts: str, retryable: bool
) -> None:
    fake.script([fault])
    _, message = await _run(_model(fake), [_user("hi")])
    shown = message.error_message or ""
    assert shown.startswith(starts), shown
    assert is_retryable_error(message) is retryable
    if fault.kind == "rate_limit":
        assert "(retry after 2000 ms)" in shown
    if fault.kind == "context_overflow":
        assert is_context_overflow(message)


async def test_no_credentials_names_the_variables(fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    _, message = await _run(_model(fake), [_user("hi")])
    assert message.stop_reason == "error"
    assert "AWS_BEARER_TOKEN_BEDROCK" in (message.error_message or "")
    assert "AWS_ACCESS_KEY_ID" in (message.error_message or "")
    assert fake.requests == []


async def test_profile_credentials_and_region(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    (tmp_path / "credentials").write_text(
        f"[work]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
    )
    (tmp_path / "config").write_text(
        "[profile work]\nregion = eu-central-1\n[profile sso]\nsso_session = corp\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "work")
    fake.script([Reply([text("ok")])])
    _, message = await _run(_model(fake), [_user("hi")])
    assert message.stop_reason == "stop", message.error_message
    assert resolve_region(CLAUDE, fake.server.url if fake.server else None) == "eu-central-1"
    monkeypatch.setenv("AWS_PROFILE", "sso")
    _, refused = await _run(_model(fake), [_user("hi")])
    assert "names sso_session 'corp', but" in (refused.error_message or "")
    assert "has no [sso-session corp] section" in (refused.error_message or "")


async def test_abort_stops_a_slow_stream(fake: FakeLLM) -> None:
    fake.script([Reply([text("slow words " * 50)], frame_delay=0.05)])
    events = await abort_at_first_text(
        lambda signal: stream_bedrock(
            _model(fake),
            LlmRequest("", [_user("hi")], []),
            StreamOptions(api_key="<authenticated>", signal=signal),
        )
    )
    final = events[-1]
    assert isinstance(final, Error) and final.error.stop_reason == "aborted"
    assert sum(isinstance(e, TextDelta) for e in events) == 1


def test_region_and_endpoint_follow_pi(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    catalog = "https://bedrock-runtime.us-east-1.amazonaws.com"
    arn = "arn:aws:bedrock:eu-west-3:123456789012:application-inference-profile/abc"
    assert resolve_region(arn, catalog) == "eu-west-3"
    assert resolve_region(CLAUDE, catalog) == "us-east-1"
    assert endpoint_for(catalog, "us-east-1") == catalog
    monkeypatch.setenv("AWS_REGION", "ap-northeast-1")
    assert resolve_region(CLAUDE, catalog) == "ap-northeast-1"
    # A configured region moves a standard catalog endpoint; a custom one (a proxy) stays pinned.
    assert endpoint_for(catalog, "ap-northeast-1") == "https://bedrock-runtime.ap-northeast-1.amazonaws.com"
    assert (
        endpoint_for("http://proxy.local:8080/bedrock", "ap-northeast-1") == "http://proxy.local:8080/bedrock"
    )


async def test_a_profile_chosen_at_login_wins_over_ambient_keys(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pi_tui.ai.auth import AuthStorage

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "ambient-keys-that-would-fail")
    (tmp_path / "credentials").write_text(
        f"[work]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    AuthStorage().set("amazon-bedrock", {"type": "api_key", "env": {"AWS_PROFILE": "work"}})
    fake.script([Reply([text("ok")])])
    _, message = await _run(_model(fake), [_user("hi")])
    assert message.stop_reason == "stop", message.error_message


class _Response:
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.headers = {k.lower(): v for k, v in headers.items()}


def _http_error(status: int, body: Any, error_type: str | None = None, **headers: str) -> Exception:
    from pi_tui.ai.wire import HttpStatusError

    extra = (
        {"x-amzn-errortype": f"{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
        if error_type
        else {}
    )
    return HttpStatusError(
        "x", status_code=status, body=body, response=_Response(status, {**extra, **headers})
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            _http_error(
                403,
                {"message": "You don't have access to the model with the specified model ID."},
                "AccessDeniedException",
            ),
            "AccessDeniedException: You don't have access to the model with the specified model ID. (HTTP 403; check "
            "that the account has access to this model in eu-west-1 (Bedrock console, Model access) and that the "
            "credentials may call bedrock:InvokeModelWithResponseStream)",
        ),
        (
            _http_error(404, {"message": "Model not found."}, "ResourceNotFoundException"),
            "ResourceNotFoundException: Model not found. (HTTP 404; check the model id and that region eu-west-1 "
            "serves it (AWS_REGION))",
        ),
        (
            _http_error(400, {"message": "The provided model identifier is invalid."}, "ValidationException"),
            "Validation error: The provided model identifier is invalid. (HTTP 400; check the model id and the region "
            "(eu-west-1): some models need an inference profile id such as us.anthropic.… or eu.anthropic.…)",
        ),
        (
            _http_error(
                429,
                {"message": "Too many tokens, please wait."},
                "ThrottlingException",
                **{"retry-after": "3"},
            ),
            "Throttling error: Too many tokens, please wait. (HTTP 429; rate limit or quota reached; wait and retry, "
            "or ask AWS for a higher quota) (retry after 3000 ms)",
        ),
        (
            _http_error(502, "<html>Bad Gateway</html>"),
            "502: <html>Bad Gateway</html> (HTTP 502; the service failed; retrying may help)",
        ),
    ],
)
def test_what_a_user_reads_for_each_bedrock_failure(error: Exception, expected: str) -> None:
    from pi_tui.ai.providers.bedrock import describe_bedrock_error

    assert describe_bedrock_error(error, "eu-west-1") == expected


async def test_container_credentials_are_fetched_with_their_token_and_kept(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            seen.append(self.headers.get("Authorization"))
            body = json.dumps(
                {
                    "AccessKeyId": KEY_ID,
                    "SecretAccessKey": SECRET,
                    "Token": "ctr-token",
                    "Expiration": "2999-01-01T00:00:00Z",
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
        monkeypatch.setenv(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://127.0.0.1:{server.server_port}/creds"
        )
        monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ctr-auth")
        fake.script([Reply([text("one")]), Reply([text("two")])])
        for _ in range(2):
            _, message = await _run(_model(fake), [_user("hi")])
            assert message.stop_reason == "stop", message.error_message
            assert fake.last_request.headers["x-amz-security-token"] == "ctr-token"
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["ctr-auth"]  # fetched once, kept until shortly before it expires


async def test_custom_headers_are_signed_and_reserved_ones_ignored(fake: FakeLLM) -> None:
    fake.script([Reply([text("ok")])])
    model = _model(fake, headers={"x-team": "pi", "X-Amz-Date": "19990101T000000Z", "Authorization": "nope"})
    _, message = await _run(model, [_user("hi")])
    assert message.stop_reason == "stop", message.error_message  # the fake verified the signature
    headers = fake.last_request.headers
    assert headers["x-team"] == "pi" and headers["x-amz-date"] != "19990101T000000Z"


async def test_skip_auth_signs_with_dummy_keys(fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEDROCK_SKIP_AUTH", "1")
    fake.engine.aws_credentials = {"dummy-access-key": "dummy-secret-key"}
    fake.script([Reply([text("ok")])])
    _, message = await _run(_model(fake), [_user("hi")], api_key="ignored-bearer")
    assert message.stop_reason == "stop", message.error_message
    assert "x-amz-date" in fake.last_request.headers
