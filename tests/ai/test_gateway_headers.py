"""Gateway headers: a None header deletes the wire API's own header of that name, whatever its case, and
the Cloudflare gateway's token goes in cf-aig-authorization (checked end to end against the fake and pi
in tests/e2e/test_gateway_headers_pi087.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.catalog import provider_models
from pi_tui.ai.providers.gateway_headers import with_gateway_headers
from pi_tui.ai.registry import stream
from pi_tui.ai.stream import Done, Error, LlmRequest, StreamOptions
from pi_tui.ai.types import UserMessage
from pi_tui.ai.wire import without_deleted
from pi_tui.testing import FakeLLM, Reply, text


def test_a_none_header_deletes_every_case_of_that_name() -> None:
    headers = {
        "authorization": "Bearer k",
        "x-api-key": "k",
        "Authorization": None,
        "X-Api-Key": None,
        "a": "1",
    }
    assert without_deleted(headers) == {"a": "1"}


def test_cloudflare_gateway_token_and_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct")
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw")
    model = next(m for m in provider_models("cloudflare-ai-gateway") if m.api == "anthropic-messages")
    model = model.model_copy(
        update={
            "base_url": "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/anthropic"
        }
    )
    options = StreamOptions(api_key="cf-token", session_id="s1")
    model, options = with_gateway_headers(model, options)
    assert model.base_url == "https://gateway.ai.cloudflare.com/v1/acct/gw/anthropic"
    assert options.headers == {
        "cf-aig-authorization": "Bearer cf-token",
        "Authorization": None,
        "x-api-key": None,
    }


def test_opencode_headers_yield_to_configured_ones() -> None:
    model = provider_models("opencode-go")[0]
    options = StreamOptions(api_key="k", session_id="s1", headers={"X-OpenCode-Client": "mine"})
    _, options = with_gateway_headers(model, options)
    assert options.headers == {"x-opencode-session": "s1", "X-OpenCode-Client": "mine"}


def test_the_gateway_headers_leave_the_callers_options_as_they_were() -> None:
    model = provider_models("opencode-go")[0]
    options = StreamOptions(api_key="k", session_id="s1")
    _, sent = with_gateway_headers(model, options)
    assert options.headers is None
    assert sent.headers == {"x-opencode-session": "s1", "x-opencode-client": "pi-tui"}


async def test_a_cloudflare_key_stored_by_pis_login_carries_its_ids(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path
) -> None:
    """pi's /login stores the Cloudflare ids beside the key ({key, env}); they fill the base URL before the
    environment's, field by field, and the request reaches the gateway with them."""
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw-from-env")  # the stored entry has none: env fills it
    stored = {"type": "api_key", "key": "cf-token", "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}}
    (agent_dir / "auth.json").write_text(json.dumps({"cloudflare-ai-gateway": stored}))
    fake = FakeLLM(api_key="cf-token")
    fake.script([Reply([text("through the gateway")])])
    with fake.serve() as server:
        model = next(m for m in provider_models("cloudflare-ai-gateway") if m.api == "openai-completions")
        base = server.url + "/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/compat"
        model = model.model_copy(update={"base_url": base})
        request = LlmRequest("", [UserMessage(content="hi")])
        events = [e async for e in stream(model, request, StreamOptions(api_key="cf-token"))]
    assert isinstance(events[-1], Done), events[-1]
    assert [r.path for r in fake.requests] == ["/v1/acct-stored/gw-from-env/compat/chat/completions"]


async def test_a_missing_cloudflare_id_is_one_line_saying_where_to_set_it(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path
) -> None:
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    model = provider_models("cloudflare-workers-ai")[0]
    request = LlmRequest("", [UserMessage(content="hi")])
    events = [e async for e in stream(model, request, StreamOptions(api_key="cf-token"))]
    final = events[-1]
    assert isinstance(final, Error)
    assert final.error.error_message == (
        "cloudflare-workers-ai needs CLOUDFLARE_ACCOUNT_ID: set it in the environment, or run /login "
        "cloudflare-workers-ai (it asks for the Cloudflare ids and stores them in auth.json)"
    )
