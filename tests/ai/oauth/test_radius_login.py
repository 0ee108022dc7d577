"""Radius login (pi's gateway) against the fake authorization server: the browser way (the gateway's
discovered authorization page, PKCE, the loopback callback or a pasted redirect URL), the device code,
the refresh, and the stored login authenticating a Radius request."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth import AuthEvent, AuthPrompt, OAuthError, login, oauth_provider_ids
from pi_tui.ai.oauth.resolve import resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import ScriptedInteraction


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer(access_prefix="radius-at-", device_script=["authorization_pending", "ok"]) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _answer(method: str, paste: list[str]) -> object:
    def answer(prompt: AuthPrompt) -> str:
        if prompt.kind == "select":
            assert prompt.message == "Sign in to Radius:"
            assert [(o.id, o.label) for o in prompt.options] == [
                ("browser", "Sign in with browser (recommended)"),
                ("device-code", "Sign in with device code (when signing in from another device)"),
            ]
            return method
        if paste:
            return paste[0]
        prompt.withdrawn.wait(20)  # nobody pastes: the browser's callback answers
        return ""

    return answer


def test_radius_is_offered_as_a_login() -> None:
    assert "radius" in oauth_provider_ids()


def test_browser_login_discovers_the_page_and_comes_back_to_the_callback(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    def browser(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            with urllib.request.urlopen(auth_server.browser_approve(event.url), timeout=10) as page:
                assert b"Radius login completed" in page.read()

    io = ScriptedInteraction(on_event=browser)
    io.answer = _answer("browser", [])  # type: ignore[assignment]
    credential = login("radius", io, AuthStorage(agent_dir / "auth.json"))
    paths = [(r.method, r.path) for r in auth_server.requests]
    assert paths == [
        ("GET", "/v1/oauth"),
        ("GET", "/oauth/authorize"),
        ("POST", "/v1/oauth/token"),
        ("GET", "/v1/config"),  # the gateway's model list, fetched with the new login
    ]
    authorize = auth_server.requests[1].body
    assert authorize["client_id"] == "pi-gateway" and authorize["scope"] == "gateway offline_access"
    assert authorize["handoff"] == "url" and authorize["code_challenge_method"] == "S256"
    assert authorize["redirect_uri"].startswith("http://127.0.0.1:")
    assert authorize["redirect_uri"].endswith("/oauth/callback")
    assert any(e.kind == "progress" and "Listening for OAuth callback" in e.message for e in io.events)
    token = auth_server.requests[2].body
    assert token["grant_type"] == "authorization_code" and token["client_id"] == "pi-gateway"
    assert credential["type"] == "oauth" and credential["access"].startswith("radius-at-")
    # a minute early, as pi stores it
    assert abs(credential["expires"] - (time.time() * 1000 + 3600_000 - 60_000)) < 5_000
    assert json.loads((agent_dir / "auth.json").read_text())["radius"] == credential


def test_a_pasted_redirect_url_finishes_the_browser_login(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    pasted: list[str] = []

    def browser_elsewhere(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            pasted.append(auth_server.browser_approve(event.url))  # copied from the other machine

    io = ScriptedInteraction(on_event=browser_elsewhere)
    io.answer = _answer("browser", pasted)  # type: ignore[assignment]
    credential = login("radius", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["access"] in auth_server.valid_access_tokens()


def test_device_code_login_then_refresh(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    io = ScriptedInteraction()
    io.answer = _answer("device-code", [])  # type: ignore[assignment]
    storage = AuthStorage(agent_dir / "auth.json")
    credential = login("radius", io, storage)
    shown = [e for e in io.events if e.kind == "device_code"]
    assert len(shown) == 1 and shown[0].user_code == "ABCD-1234"
    assert shown[0].url == "https://example.com/device"
    start = next(r for r in auth_server.requests if r.path == "/v1/oauth/device")
    assert start.body == {"client_id": "pi-gateway", "scope": "gateway offline_access"}
    # an expiring login is refreshed at the gateway's token endpoint before use
    storage.set("radius", {**credential, "expires": int(time.time() * 1000)})
    auth = resolve_oauth(storage, "radius")
    assert auth is not None and auth.api_key in auth_server.valid_access_tokens()
    assert auth.api_key != credential["access"]
    refreshed = json.loads((agent_dir / "auth.json").read_text())["radius"]
    assert refreshed["access"] == auth.api_key and refreshed["refresh"] != credential["refresh"]


def test_a_denied_device_login_says_so(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    auth_server.device_script = ["access_denied"]
    io = ScriptedInteraction()
    io.answer = _answer("device-code", [])  # type: ignore[assignment]
    with pytest.raises(OAuthError, match="Device authorization was denied"):
        login("radius", io, AuthStorage(agent_dir / "auth.json"))
    assert not (agent_dir / "auth.json").exists()


def test_the_login_stores_the_gateways_models_for_pi_and_pi_tui(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    from pi_tui.ai.model_registry import ModelRegistry

    io = ScriptedInteraction()
    io.answer = _answer("device-code", [])  # type: ignore[assignment]
    credential = login("radius", io, AuthStorage(agent_dir / "auth.json"))
    config = next(r for r in auth_server.requests if r.path == "/v1/config")
    assert config.headers["Authorization"] == f"Bearer {credential['access']}"
    store = json.loads((agent_dir / "models-store.json").read_text())
    (model,) = store["radius"]["models"]  # the entry without the model fields is left out, as pi does
    assert model["id"] == "fake-gateway-model" and model["api"] == "pi-messages"
    assert model["provider"] == "radius" and model["baseUrl"] == "https://radius.example/v1"
    assert isinstance(store["radius"]["checkedAt"], int)
    models = {m.id: m for m in ModelRegistry(agent_dir).all_models() if m.provider == "radius"}
    assert "balanced" in models  # the bundled ones stay
    assert models["fake-gateway-model"].base_url == "https://radius.example/v1"
    assert models["fake-gateway-model"].context_window == 100000


def test_a_gateway_that_refuses_the_catalog_does_not_fail_the_login(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    auth_server.radius_config = {"unexpected": True}
    io = ScriptedInteraction()
    io.answer = _answer("device-code", [])  # type: ignore[assignment]
    credential = login("radius", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["type"] == "oauth"
    assert any("Radius model catalog could not be refreshed" in e.message for e in io.events)
    assert not (agent_dir / "models-store.json").exists()
