from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.testing.oauth_server import FakeAuthServer

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def test_rpc_login_through_the_browser_then_logout(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    rpc = RpcProcess(tmp_path, "--provider", "faux")
    try:
        listed = rpc.call({"type": "get_login_providers"})["data"]["providers"]
        assert listed[0] == {
            "id": "anthropic",
            "name": "Anthropic (Claude Pro/Max)",
            "loginLabel": "Sign in with an account",
            "subscription": True,
            "loggedIn": False,
        }
        login_id = rpc.send({"type": "login", "provider": "anthropic"})
        shown, _ = rpc.wait_for(lambda r: r.get("type") == "login_event" and r.get("event") == "auth_url")
        paste, _ = rpc.wait_for(
            lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "input"
        )
        assert "paste the authorization code" in paste["title"]
        location = auth_server.browser_approve(shown["url"])
        with urllib.request.urlopen(location, timeout=10) as page:
            assert b"login completed" in page.read()
        response, _ = rpc.response(login_id, timeout=30)
        assert response["success"] is True, response
        assert response["data"] == {
            "provider": "anthropic",
            "name": "Anthropic (Claude Pro/Max)",
            "savedTo": str(agent_dir / "auth.json"),
        }
        stored = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
        assert stored["access"] in auth_server.valid_access_tokens()
        assert rpc.call({"type": "get_login_providers"})["data"]["providers"][0]["loggedIn"] is True
        assert rpc.call({"type": "logout", "provider": "anthropic"})["data"] == {"removed": True}
        assert rpc.close() == 0
    finally:
        rpc.kill()
    everything = json.dumps(rpc.records)
    assert stored["access"] not in everything and stored["refresh"] not in everything
    assert json.loads((agent_dir / "auth.json").read_text()) == {}


def test_rpc_login_by_pasting_and_abort(tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer) -> None:
    rpc = RpcProcess(tmp_path, "--provider", "faux")
    try:
        login_id = rpc.send({"type": "login", "provider": "anthropic"})
        shown, _ = rpc.wait_for(lambda r: r.get("type") == "login_event" and r.get("event") == "auth_url")
        paste, _ = rpc.wait_for(
            lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "input"
        )
        location = auth_server.browser_approve(shown["url"])
        rpc.send({"type": "extension_ui_response", "id": paste["id"], "value": location})
        response, _ = rpc.response(login_id, timeout=30)
        assert response["success"] is True, response

        login_id = rpc.send({"type": "login", "provider": "xai"})
        auth_server.device_script = ["authorization_pending"]
        code, _ = rpc.wait_for(lambda r: r.get("type") == "login_event" and r.get("event") == "device_code")
        assert code["userCode"] == "ABCD-1234"
        assert rpc.call({"type": "abort_login"})["data"] == {"aborted": True}
        response, _ = rpc.response(login_id, timeout=30)
        assert response["success"] is False and response["error"] == "Login cancelled"
        assert rpc.close() == 0
    finally:
        rpc.kill()
    assert set(json.loads((agent_dir / "auth.json").read_text())) == {"anthropic"}
