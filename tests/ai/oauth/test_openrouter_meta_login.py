from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth import AuthEvent, login
from pi_tui.ai.oauth.resolve import LoginExpiredError, resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import ScriptedInteraction


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def test_openrouter_login_trades_the_code_for_a_key_that_never_expires(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    def browser(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            with urllib.request.urlopen(auth_server.browser_approve(event.url), timeout=10) as page:
                assert b"login completed" in page.read()

    io = ScriptedInteraction(on_event=browser)
    credential = login("openrouter", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["access"].startswith("sk-or-v1-")
    assert credential["refresh"] == "" and credential["expires"] == 2**53 - 1
    listening = next(e.message for e in io.events if e.kind == "progress")
    assert listening.startswith("Listening for OpenRouter OAuth callback on http://127.0.0.1:")
    assert "/oauth/callback/" in listening
    keys = next(r for r in auth_server.requests if r.path == "/api/v1/auth/keys")
    assert set(keys.body) == {"code", "code_verifier", "code_challenge_method"}
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "openrouter")
    assert auth is not None and auth.api_key == credential["access"]
    assert json.loads((agent_dir / "auth.json").read_text())["openrouter"] == credential


def test_meta_login_mints_a_key_and_refresh_mints_again(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    io = ScriptedInteraction()
    credential = login("meta", io, AuthStorage(agent_dir / "auth.json"))
    assert any(e.kind == "progress" and e.message == "Enabling Meta Model API access..." for e in io.events)
    assert credential["access"].startswith("meta-key-")
    mint = next(r for r in auth_server.requests if r.path == "/muse-code/key")
    headers = {k.lower(): v for k, v in mint.headers.items()}
    assert (
        headers["authorization"] == f"Bearer {credential['refresh']}" and headers["x-api-version"] == "1.0.0"
    )
    start = next(r for r in auth_server.requests if r.path == "/oidc/device/authorization/")
    assert start.body == {"client_id": "1031625952748946"}

    data = json.loads((agent_dir / "auth.json").read_text())
    data["meta"]["expires"] = 0
    (agent_dir / "auth.json").write_text(json.dumps(data))
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "meta")
    assert auth is not None and auth.api_key != credential["access"] and auth.api_key.startswith("meta-key-")

    auth_server.revoke_identity_token(str(credential["refresh"]))
    data["meta"] = {**json.loads((agent_dir / "auth.json").read_text())["meta"], "expires": 0}
    (agent_dir / "auth.json").write_text(json.dumps(data))
    with pytest.raises(LoginExpiredError, match=r"HTTP 401.*Run /login meta"):
        resolve_oauth(AuthStorage(agent_dir / "auth.json"), "meta")
