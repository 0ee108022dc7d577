"""The one line a user sees when a provider refuses a request, on every wire API: the provider's own
message, then what to check (a refused key names the provider's key variable, or /login for a login-only
provider), and for 429/5xx the wait the server asked for. Each API's fake is driven into 401, 403, 404,
429 and 500 and the request goes through the real provider code (`pi_tui.ai.registry.stream`)."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from pi_tui.ai.catalog import provider_models
from pi_tui.ai.registry import stream
from pi_tui.ai.stream import Error, LlmRequest, StreamOptions
from pi_tui.ai.types import UserMessage
from pi_tui.testing import FakeLLM, Fault

KEY = "error-text-key"
AWS_KEY_ID, AWS_SECRET = "AKIDERRORTEXT", "error-text-secret"


def _codex_token() -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct"}, "exp": int(time.time()) + 86400}
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2ln"


CODEX_TOKEN = _codex_token()


@dataclass
class Api:
    name: str
    provider: str
    model: str
    base: str
    key_check: str  # what a refused key must name
    env: dict[str, str] = field(default_factory=dict)
    fake: dict[str, Any] = field(default_factory=dict)
    key: str = KEY


APIS = [
    Api("anthropic-messages", "anthropic", "claude-sonnet-4-5", "anthropic_base_url", "ANTHROPIC_API_KEY"),
    Api("openai-completions", "groq", "openai/gpt-oss-120b", "openai_base_url", "GROQ_API_KEY"),
    Api("openai-responses", "openai", "gpt-5.5", "openai_base_url", "OPENAI_API_KEY"),
    Api("google-generative-ai", "google", "gemini-3.1-pro-preview", "gemini_base_url", "GEMINI_API_KEY"),
    Api("google-vertex", "google-vertex", "gemini-3.1-pro-preview", "url", "GOOGLE_CLOUD_API_KEY"),
    Api(
        "bedrock-converse-stream",
        "amazon-bedrock",
        "us.anthropic.claude-opus-4-6-v1",
        "bedrock_base_url",
        "AWS_ACCESS_KEY_ID",
        {"AWS_ACCESS_KEY_ID": AWS_KEY_ID, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "AWS_REGION": "us-west-2"},
        {"aws_credentials": {AWS_KEY_ID: AWS_SECRET}},
    ),
    Api("mistral-conversations", "mistral", "devstral-medium-latest", "mistral_base_url", "MISTRAL_API_KEY"),
    Api(
        "azure-openai-responses",
        "azure-openai-responses",
        "gpt-5.4",
        "azure_base_url",
        "AZURE_OPENAI_API_KEY",
        {"AZURE_OPENAI_API_KEY": KEY},
        {"azure_deployments": {"gpt-5.4"}},
    ),
    Api("openai-codex-responses", "openai-codex", "gpt-5.5", "url", "/login", key=CODEX_TOKEN),
    Api("pi-messages", "radius", "balanced", "pi_messages_base_url", "RADIUS_API_KEY"),
]
# The APIs whose hints come from `pi_tui.ai.providers._error_hints`: they name the provider and the model.
_NAMING = {"anthropic-messages", "openai-completions", "openai-responses", "pi-messages"}
_NAMING_PROVIDER = _NAMING | {"mistral-conversations"}  # 429/5xx name the provider

STATUSES = {
    401: Fault("auth"),  # each fake refuses a key in its vendor's own words
    403: Fault("api_error", status=403, message="Provider says: no access to this model"),
    404: Fault("api_error", status=404, message="Provider says: no such model"),
    429: Fault("rate_limit", message="Provider says: slow down", retry_after_ms=2000),
    500: Fault("api_error", message="Provider says: something broke"),
}


async def _error_text(api: Api, fault: Fault, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AZURE_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in api.env.items():
        monkeypatch.setenv(name, value)
    fake = FakeLLM(api_key=api.key, **api.fake)
    fake.script([fault])
    with fake.serve() as server:
        model = next(m for m in provider_models(api.provider) if m.id == api.model)
        model = model.model_copy(update={"base_url": getattr(server, api.base)})
        options = StreamOptions(api_key=api.key if api.provider != "amazon-bedrock" else None, session_id="s")
        events = [
            event async for event in stream(model, LlmRequest("sys", [UserMessage(content="hi")]), options)
        ]
    last = events[-1]
    assert isinstance(last, Error), last
    return last.error.error_message or ""


@pytest.mark.parametrize("status", list(STATUSES))
@pytest.mark.parametrize("api", APIS, ids=[a.name for a in APIS])
async def test_error_text_names_the_providers_message_and_what_to_check(
    api: Api, status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = await _error_text(api, STATUSES[status], monkeypatch)
    assert "\n" not in text
    if status == 401:
        # the fakes answer a refused key in the vendor's own words (AWS: a signature it cannot match)
        assert api.key_check in text, text
    elif not (status == 429 and api.provider == "openai-codex"):
        assert "Provider says: " in text, text
    if status in (403, 404):
        assert "check" in text, text
    if status == 429 and api.provider == "openai-codex":
        assert text.startswith("You have hit your ChatGPT usage limit"), text  # pi's words for a plan's limit
    elif status == 429:
        assert "(retry after 2000 ms)" in text, text
    if status == 500:
        assert "retry" in text or "failed" in text, text
    if api.name in _NAMING and status in (403, 404):
        assert f"{api.provider}/{api.model}" in text, text
    if api.name in _NAMING_PROVIDER and status in (429, 500):
        assert f"{api.provider}'s " in text, text


@pytest.mark.parametrize("api", [a for a in APIS if a.name in _NAMING], ids=lambda a: a.name)
async def test_an_overloaded_server_is_called_overloaded_not_failed(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = await _error_text(api, Fault("overloaded"), monkeypatch)  # 529 (Anthropic) or 503
    assert f"{api.provider} is overloaded or unavailable; retrying may help" in text, text
    assert "server failed" not in text


def test_a_refused_key_of_a_provider_of_your_own_points_at_models_json() -> None:
    from pi_tui.ai.providers._error_hints import http_hint

    assert (
        http_hint("my-proxy", 401)
        == "check the apiKey of my-proxy in models.json, or the key stored for it in auth.json"
    )
    assert "ANTHROPIC_API_KEY" in (http_hint("anthropic", 401) or "")
