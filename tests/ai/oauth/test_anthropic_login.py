from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth import AuthEvent, AuthPrompt, LoginCancelled, OAuthError, login
from pi_tui.ai.oauth.anthropic import CLIENT_ID, SCOPES
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import ScriptedInteraction


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _open(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_pkce_login_through_the_local_callback(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    pages: list[str] = []

    def browser(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            pages.append(_open(auth_server.browser_approve(event.url)))

    io = ScriptedInteraction(on_event=browser)
    storage = AuthStorage(agent_dir / "auth.json")
    credential = login("anthropic", io, storage)

    authorize = next(r for r in auth_server.requests if r.path == "/oauth/authorize")
    assert authorize.body["client_id"] == CLIENT_ID and authorize.body["scope"] == SCOPES
    assert authorize.body["code"] == "true" and authorize.body["code_challenge_method"] == "S256"
    assert "login completed" in pages[0]
    assert io.prompts[0].kind == "manual_code" and io.prompts[0].withdrawn.is_set()
    stored = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    assert stored == credential
    assert stored["type"] == "oauth" and stored["access"] in auth_server.valid_access_tokens()
    assert stored["access"].startswith("sk-ant-oat")
    lifetime_ms = stored["expires"] - time.time() * 1000
    assert 3600_000 - 5 * 60_000 - 5_000 < lifetime_ms <= 3600_000 - 5 * 60_000
    token = next(r for r in auth_server.requests if r.path == "/v1/oauth/token")
    assert token.body["grant_type"] == "authorization_code" and token.body["state"] == authorize.body["state"]


def test_paste_fallback_accepts_the_redirect_url(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    location: list[str] = []

    def browser_elsewhere(event: AuthEvent) -> None:
        if event.kind == "auth_url":  # a browser on another machine: its redirect to localhost goes nowhere
            location.append(auth_server.browser_approve(event.url))

    def paste(prompt: AuthPrompt) -> str:
        assert prompt.kind == "manual_code"
        return location[0]

    io = ScriptedInteraction(on_event=browser_elsewhere, answer=paste)
    credential = login("anthropic", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["access"] in auth_server.valid_access_tokens()


def test_paste_fallback_accepts_code_hash_state(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    pasted: list[str] = []

    def browser_elsewhere(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(auth_server.browser_approve(event.url)).query)
            pasted.append(f"{query['code'][0]}#{query['state'][0]}")

    io = ScriptedInteraction(on_event=browser_elsewhere, answer=lambda _p: pasted[0])
    credential = login("anthropic", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["access"] in auth_server.valid_access_tokens()


def test_a_code_from_another_login_is_refused(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    io = ScriptedInteraction(answer=lambda _p: "somecode#not-our-state")
    with pytest.raises(OAuthError, match="state mismatch"):
        login("anthropic", io, AuthStorage(agent_dir / "auth.json"))
    assert not (agent_dir / "auth.json").exists()


def test_cancel_stops_the_login_and_frees_the_port(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    io = ScriptedInteraction()
    io.on_event = lambda event: io.cancel.set() if event.kind == "auth_url" else None
    with pytest.raises(LoginCancelled, match="Login cancelled"):
        login("anthropic", io, AuthStorage(agent_dir / "auth.json"))
    assert io.prompts[0].withdrawn.is_set()


def test_a_refused_exchange_says_why_without_the_code(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    io = ScriptedInteraction(answer=lambda _p: "code-never-issued-12345")
    with pytest.raises(OAuthError) as failure:
        login("anthropic", io, AuthStorage(agent_dir / "auth.json"))
    assert "HTTP 400" in str(failure.value) and "invalid_grant" in str(failure.value)
    assert "code-never-issued-12345" not in str(failure.value)
