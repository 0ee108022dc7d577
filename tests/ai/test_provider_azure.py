"""Azure OpenAI Responses (``azure-openai-responses``) on our wire client, against the fake server's Azure
endpoint (``/openai/v1/responses?api-version=…``, key in ``api-key``, known deployments)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.errors import is_retryable_error
from pi_tui.ai.providers.azure_openai_responses import (
    AzureConfigError,
    build_request,
    normalize_base_url,
    resolve_config,
    stream_azure_openai_responses,
)
from pi_tui.ai.stream import LlmRequest, StreamEvent, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
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

from .provider_streams import PIXEL, abort_a_slow_answer, collect, serve_checked

KEY = "azure-test-key"
DEPLOYMENT = "prod-gpt54"
READ = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    constrainedSampling={"type": "json_schema", "strict": "prefer"},
)


@pytest.fixture(autouse=True)
def _no_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "AZURE_OPENAI_BASE_URL",
        "AZURE_OPENAI_RESOURCE_NAME",
        "AZURE_OPENAI_API_VERSION",
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", f"gpt-5.4={DEPLOYMENT}")


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    yield from serve_checked(FakeLLM(api_key=KEY, azure_deployments={DEPLOYMENT}))


def _model(base_url: str = "", model_id: str = "gpt-5.4", **extra: Any) -> Model:
    fields: dict[str, Any] = {
        "id": model_id,
        "api": "azure-openai-responses",
        "provider": "azure-openai-responses",
        "base_url": base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=2.5, output=15, cache_read=0.25),
        "context_window": 272_000,
        "max_tokens": 128_000,
    }
    fields.update(extra)
    return Model(**fields)


async def _run(
    model: Model, messages: list[LlmMessage], **options: Any
) -> tuple[list[StreamEvent], AssistantMessage]:
    request = LlmRequest("You are terse.", messages, tools=[READ])
    opts = StreamOptions(api_key=options.pop("key", KEY), **options)
    return await collect(stream_azure_openai_responses(model, request, opts))


def test_base_url_comes_from_the_environment_then_the_resource_then_models_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = _model("http://models-json.example/openai/v1")
    assert resolve_config(model).base_url == "http://models-json.example/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "contoso")
    assert resolve_config(model).base_url == "https://contoso.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://fabrikam.cognitiveservices.azure.com/openai")
    config = resolve_config(model)
    assert config.base_url == "https://fabrikam.cognitiveservices.azure.com/openai/v1"
    assert (config.api_version, config.deployment) == ("v1", DEPLOYMENT)
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "preview")
    assert resolve_config(_model(model_id="gpt-4o")).deployment == "gpt-4o"  # not in the map
    assert resolve_config(model).api_version == "preview"


def test_normalisation_and_missing_base_url() -> None:
    assert normalize_base_url("https://x.openai.azure.com/") == "https://x.openai.azure.com/openai/v1"
    assert (
        normalize_base_url("https://x.services.ai.azure.com/openai/v1/responses?api-version=2025-01-01")
        == "https://x.services.ai.azure.com/openai/v1"
    )
    assert normalize_base_url("https://proxy.example/azure/") == "https://proxy.example/azure"
    with pytest.raises(AzureConfigError, match="AZURE_OPENAI_BASE_URL"):
        resolve_config(_model(""))
    with pytest.raises(AzureConfigError, match="Invalid Azure OpenAI base URL"):
        normalize_base_url("contoso")


def test_body_follows_pi() -> None:
    request = LlmRequest("sys", [UserMessage(content="hi")], tools=[READ])
    model = _model("https://x.openai.azure.com")
    body = build_request(model, request, StreamOptions(api_key="k", thinking="medium", session_id="s" * 80))
    assert body["model"] == DEPLOYMENT and body["store"] is False and body["stream"] is True
    assert body["prompt_cache_key"] == "s" * 64
    assert body["max_output_tokens"] == 128_000
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    tool = body["tools"][0]
    assert tool["strict"] is True and tool["parameters"]["additionalProperties"] is False
    off = build_request(model, request, StreamOptions(api_key="k"))
    assert off["reasoning"] == {"effort": "none"} and "include" not in off and "prompt_cache_key" not in off
    no_strict = _model("https://x.openai.azure.com", compat={"supportsStrictMode": False})
    assert "strict" not in build_request(no_strict, request, StreamOptions(api_key="k"))["tools"][0]


async def test_a_tool_loop_with_reasoning_images_parallel_calls_and_cache(fake: FakeLLM) -> None:
    assert fake.server is not None
    fake.script(
        [
            Reply(
                [
                    thinking("Two files."),
                    text("Reading both."),
                    tool_call("read", {"path": "a.png"}),
                    tool_call("read", {"path": "b.txt"}),
                ]
            ),
            Reply([text("An image and hi.")], usage={"input": 50, "output": 6, "cache_read": 300}),
        ]
    )
    model = _model(fake.server.azure_base_url)
    prompt: list[LlmMessage] = [UserMessage(content="Read a and b")]
    _, first = await _run(model, prompt, thinking="high", session_id="s-1")
    assert first.stop_reason == "toolUse"
    calls = [p for p in first.content if isinstance(p, ToolCall)]
    assert [c.arguments for c in calls] == [{"path": "a.png"}, {"path": "b.txt"}]
    results: list[LlmMessage] = [
        ToolResultMessage(
            tool_call_id=calls[0].id,
            tool_name="read",
            content=[ImageContent(data=PIXEL, mime_type="image/png")],
        ),
        ToolResultMessage(tool_call_id=calls[1].id, tool_name="read", content=[TextContent(text="hi")]),
    ]
    _, second = await _run(model, [*prompt, first, *results], thinking="high", session_id="s-1")
    assert second.stop_reason == "stop"
    assert (second.usage.input, second.usage.cache_read) == (50, 300)
    assert second.usage.cost.cache_read == pytest.approx(300 * 0.25 / 1e6)
    sent = fake.requests[1]
    assert sent.path == "/openai/v1/responses?api-version=v1" and sent.body["model"] == DEPLOYMENT
    items = sent.body["input"]
    assert items[2]["type"] == "reasoning" and items[2]["encrypted_content"]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert outputs[0]["output"][0]["type"] == "input_image" and outputs[1]["output"] == "hi"


async def test_no_base_url_is_one_line_naming_the_variables() -> None:
    _, message = await _run(_model(""), [UserMessage(content="hi")])
    assert (message.error_message or "").startswith(
        "Azure OpenAI base URL is required: set AZURE_OPENAI_BASE_URL"
    )


async def test_a_missing_deployment_says_which_name_was_sent(fake: FakeLLM) -> None:
    assert fake.server is not None
    _, message = await _run(_model(fake.server.azure_base_url, "gpt-4o"), [UserMessage(content="hi")])
    error = message.error_message or ""
    assert error.startswith(
        'Azure OpenAI API error (404): {"code":"DeploymentNotFound","message":"The API deployment'
    )
    assert "'gpt-4o' was sent" in error and "AZURE_OPENAI_DEPLOYMENT_NAME_MAP" in error
    assert not is_retryable_error(message)


async def test_an_unknown_api_version_names_the_variable(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fake.server is not None
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2023-05-15")
    _, message = await _run(_model(fake.server.azure_base_url), [UserMessage(content="hi")])
    error = message.error_message or ""
    assert error.startswith(
        'Azure OpenAI API error (400): {"code":"BadRequest","message":"API version not supported"}'
    )
    assert "AZURE_OPENAI_API_VERSION: '2023-05-15' was sent" in error
    assert fake.requests[0].path.endswith("?api-version=2023-05-15")


async def test_a_wrong_key_names_the_key_and_the_resource(fake: FakeLLM) -> None:
    assert fake.server is not None
    _, message = await _run(_model(fake.server.azure_base_url), [UserMessage(content="hi")], key="wrong")
    error = message.error_message or ""
    assert error.startswith("Azure OpenAI API error (401): ") and "Access denied" in error
    assert "check AZURE_OPENAI_API_KEY" in error and fake.server.azure_base_url in error


async def test_an_unreachable_resource_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", f"http://127.0.0.1:{port}/openai/v1")
    _, message = await _run(_model("http://unused.example"), [UserMessage(content="hi")])
    error = message.error_message or ""
    assert f"(check AZURE_OPENAI_BASE_URL: http://127.0.0.1:{port}/openai/v1 could not be reached)" in error
    assert is_retryable_error(message)


@pytest.mark.parametrize(
    ("fault", "status", "retryable"),
    [
        (Fault("rate_limit", retry_after_ms=3000), 429, True),
        (Fault("overloaded"), 503, True),
        (Fault("api_error"), 500, True),
    ],
)
async def test_rate_limits_and_server_errors(
    fake: FakeLLM, fault: Fault, status: int, retryable: bool
) -> None:
    assert fake.server is not None
    fake.script([fault])
    _, message = await _run(_model(fake.server.azure_base_url), [UserMessage(content="hi")])
    error = message.error_message or ""
    assert error.startswith(f"Azure OpenAI API error ({status}): ")
    assert is_retryable_error(message) is retryable
    if status == 429:
        assert error.endswith("(retry after 3000 ms)")
    assert len(fake.requests) == 1  # pi's Azure adapter does not retry by default; the agent does


async def test_abort_ends_the_stream_at_once(fake: FakeLLM) -> None:
    assert fake.server is not None
    await abort_a_slow_answer(fake, stream_azure_openai_responses, _model(fake.server.azure_base_url), KEY)
