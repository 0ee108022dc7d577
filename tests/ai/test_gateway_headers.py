"""Gateway headers: a None header deletes the wire API's own header of that name, whatever its case, and
the Cloudflare gateway's token goes in cf-aig-authorization (checked end to end against the fake and pi
in tests/e2e/test_gateway_headers_pi087.py)."""

from __future__ import annotations

import pytest

from pi_tui.ai.catalog import provider_models
from pi_tui.ai.providers.gateway_headers import with_gateway_headers
from pi_tui.ai.stream import StreamOptions
from pi_tui.ai.wire import without_deleted


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
