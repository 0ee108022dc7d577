from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth import AuthEvent, LoginCancelled, OAuthError, login
from pi_tui.ai.oauth.resolve import resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import ScriptedInteraction


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer(access_prefix="xai-at-", device_interval=0.05) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _polls(server: FakeAuthServer, path: str) -> list[float]:
    return [
        r.time
        for r in server.requests
        if r.path == path and r.body.get("grant_type", "").endswith("device_code")
    ]


@pytest.mark.parametrize(
    ("provider", "start_path", "token_path"),
    [
        ("xai", "/oauth2/device/code", "/oauth2/token"),
        ("kimi-coding", "/api/oauth/device_authorization", "/api/oauth/token"),
    ],
)
def test_device_code_pending_then_slow_down_then_success(
    auth_server: FakeAuthServer, agent_dir: Path, provider: str, start_path: str, token_path: str
) -> None:
    auth_server.device_script = ["authorization_pending", "slow_down", "ok"]
    io = ScriptedInteraction()
    credential = login(provider, io, AuthStorage(agent_dir / "auth.json"))
    shown = [e for e in io.events if e.kind == "device_code"]
    assert len(shown) == 1 and shown[0].user_code == "ABCD-1234"
    assert shown[0].url == "https://example.com/device?user_code=ABCD-1234"
    polls = _polls(auth_server, token_path)
    assert len(polls) == 3
    # after slow_down the client waits the server's new (doubled) interval
    assert polls[2] - polls[1] >= 2 * auth_server.device_interval * 0.9
    assert json.loads((agent_dir / "auth.json").read_text())[provider] == credential
    assert credential["access"] in auth_server.valid_access_tokens()
    start = next(r for r in auth_server.requests if r.path == start_path)
    if provider == "xai":
        assert start.body["client_id"] == "b1a00492-073a-47ea-816f-4c329264a828"
        assert start.body["scope"] == "openid profile email offline_access grok-cli:access api:access"
        assert start.body["referrer"] == "pi"
    else:
        assert start.body == {"client_id": "17e5f671-d194-4dfb-9706-5516cb48c098"}


def test_a_denied_device_login_says_so(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    auth_server.device_script = ["authorization_pending", "access_denied"]
    with pytest.raises(OAuthError, match="xAI device authorization was denied"):
        login("xai", ScriptedInteraction(), AuthStorage(agent_dir / "auth.json"))
    assert not (agent_dir / "auth.json").exists()


def test_cancel_stops_device_polling(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    auth_server.device_script = ["authorization_pending"]
    io = ScriptedInteraction()
    polled = threading.Event()

    def cancel_after_code(event: AuthEvent) -> None:
        if event.kind == "device_code":
            polled.set()
            io.cancel.set()

    io.on_event = cancel_after_code
    with pytest.raises(LoginCancelled):
        login("xai", io, AuthStorage(agent_dir / "auth.json"))
    assert polled.is_set()


def test_xai_refresh_keeps_the_refresh_token_and_uses_the_new_access(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    access, refresh = auth_server.issue_tokens()
    stored = {"type": "oauth", "access": access, "refresh": refresh, "expires": 0}
    (agent_dir / "auth.json").write_text(json.dumps({"xai": stored}))
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "xai")
    assert auth is not None and auth.api_key != access and auth.api_key in auth_server.valid_access_tokens()
    request = next(r for r in auth_server.requests if r.path == "/oauth2/token")
    assert request.body == {
        "grant_type": "refresh_token",
        "client_id": "b1a00492-073a-47ea-816f-4c329264a828",
        "refresh_token": refresh,
    }
