from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth import AuthEvent, AuthPrompt, OAuthError, device, login
from pi_tui.ai.oauth.openai_codex import account_id
from pi_tui.ai.oauth.resolve import resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import ScriptedInteraction

# Codex's slow_down names no new interval: the wait grows by a fixed step (5 s, as pi); a short one here
SLOW_DOWN_STEP = 0.3


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    monkeypatch.setattr(device, "_SLOW_DOWN_STEP_S", SLOW_DOWN_STEP)
    with FakeAuthServer(device_script=["authorization_pending", "slow_down", "ok"]) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _choose(method: str, paste: list[str] | None = None) -> object:
    def answer(prompt: AuthPrompt) -> str:
        if prompt.kind == "select":
            assert prompt.message == "Select OpenAI Codex login method:"
            assert [o.label for o in prompt.options] == [
                "Browser login (default)",
                "Device code login (headless)",
            ]
            return method
        assert paste, "nobody pastes in this test"
        return paste[0]

    return answer


def test_codex_browser_login_stores_the_account_id(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    def browser(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            with urllib.request.urlopen(auth_server.browser_approve(event.url), timeout=10) as page:
                assert b"login completed" in page.read()

    io = ScriptedInteraction(on_event=browser)
    io.answer = lambda prompt: "browser" if prompt.kind == "select" else _wait_withdrawn(prompt)
    credential = login("openai-codex", io, AuthStorage(agent_dir / "auth.json"))
    authorize = next(r for r in auth_server.requests if r.path == "/oauth/authorize")
    assert authorize.body["client_id"] == "app_EMoamEEZ73f0CkXaXp7hrann"
    assert authorize.body["scope"] == "openid profile email offline_access"
    assert authorize.body["originator"] == "pi" and authorize.body["codex_cli_simplified_flow"] == "true"
    assert len(authorize.body["state"]) == 32
    assert credential["accountId"] == "acct-fake-123" == account_id(credential["access"])
    assert json.loads((agent_dir / "auth.json").read_text())["openai-codex"] == credential


def _wait_withdrawn(prompt: AuthPrompt) -> str:
    prompt.withdrawn.wait(20)
    return ""


def test_codex_browser_login_by_paste(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    location: list[str] = []
    io = ScriptedInteraction(
        on_event=lambda e: (
            location.append(auth_server.browser_approve(e.url)) if e.kind == "auth_url" else None
        )
    )
    io.answer = _choose("browser", location)  # type: ignore[assignment]
    credential = login("openai-codex", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["access"] in auth_server.valid_access_tokens()


def test_codex_device_login_and_refresh(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    io = ScriptedInteraction(answer=_choose("device_code"))  # type: ignore[arg-type]
    credential = login("openai-codex", io, AuthStorage(agent_dir / "auth.json"))
    shown = [e for e in io.events if e.kind == "device_code"]
    assert len(shown) == 1 and shown[0].user_code == "ABCD-1234"
    assert urllib.parse.urlsplit(shown[0].url).path == "/codex/device"
    polls = [r.time for r in auth_server.requests if r.path == "/api/accounts/deviceauth/token"]
    assert len(polls) == 3  # pending, slow_down, then the code
    assert polls[2] - polls[1] >= SLOW_DOWN_STEP  # after slow_down it waited the longer step
    exchange = next(r for r in auth_server.requests if r.path == "/oauth/token")
    assert exchange.body["redirect_uri"] == "https://auth.openai.com/deviceauth/callback"
    assert credential["accountId"] == "acct-fake-123"

    data = json.loads((agent_dir / "auth.json").read_text())
    data["openai-codex"]["expires"] = 0
    (agent_dir / "auth.json").write_text(json.dumps(data))
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "openai-codex")
    stored = json.loads((agent_dir / "auth.json").read_text())["openai-codex"]
    assert auth is not None and auth.api_key == stored["access"] != credential["access"]
    assert stored["accountId"] == "acct-fake-123"


def test_a_token_without_an_account_is_refused(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    auth_server.account_id = ""
    io = ScriptedInteraction(answer=_choose("device_code"))  # type: ignore[arg-type]
    with pytest.raises(OAuthError, match="Failed to extract accountId from token"):
        login("openai-codex", io, AuthStorage(agent_dir / "auth.json"))
