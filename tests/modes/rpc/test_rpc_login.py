from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def _option(listed: list[dict[str, Any]], provider: str, auth_type: str) -> dict[str, Any]:
    (found,) = [p for p in listed if p["id"] == provider and p["authType"] == auth_type]
    return found


def test_login_providers_list_key_providers_too_with_their_status_as_pi_login_does(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {
                        "baseUrl": "http://127.0.0.1:9/v1",
                        "api": "openai-completions",
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    rpc = RpcProcess(tmp_path, "--provider", "faux")
    try:
        listed = rpc.call({"type": "get_login_providers"})["data"]["providers"]
        names = [p["name"] for p in listed]
        assert names == sorted(names, key=str.casefold)  # one list by name, as pi's /login shows it
        assert _option(listed, "openai", "api_key") == {
            "id": "openai",
            "name": "OpenAI",
            "authType": "api_key",
            "status": {"type": "api_key", "source": "OPENAI_API_KEY"},
            "loggedIn": False,
        }
        assert _option(listed, "local", "api_key")["status"] is None  # models.json's provider takes a key
        assert {"oauth", "api_key"} <= {p["authType"] for p in listed if p["id"] == "anthropic"}
        assert not [p for p in listed if p["id"] == "openai-codex" and p["authType"] == "api_key"]

        login_id = rpc.send({"type": "login", "provider": "local", "authType": "api_key"})
        asked, _ = rpc.wait_for(
            lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "input"
        )
        rpc.send({"type": "extension_ui_response", "id": asked["id"], "value": "none"})
        response, _ = rpc.response(login_id, timeout=30)
        assert response["success"] is True, response
        assert response["data"]["provider"] == "local"
        assert json.loads((agent_dir / "auth.json").read_text())["local"] == {
            "type": "api_key",
            "key": "none",
        }
        listed = rpc.call({"type": "get_login_providers"})["data"]["providers"]
        local = _option(listed, "local", "api_key")
        assert (
            local["status"] == {"type": "api_key", "source": "stored credential"}
            and local["loggedIn"] is True
        )
        assert "local/m" in [
            f"{m['provider']}/{m['id']}" for m in rpc.call({"type": "get_available_models"})["data"]["models"]
        ]
        response, _ = rpc.response(rpc.send({"type": "login", "provider": "local", "authType": "oauth"}))
        assert response["success"] is False and 'No login for "local"' in response["error"]
        assert rpc.close() == 0
    finally:
        rpc.kill()


def test_rpc_login_through_the_browser_then_logout(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    rpc = RpcProcess(tmp_path, "--provider", "faux")
    try:
        listed = rpc.call({"type": "get_login_providers"})["data"]["providers"]
        assert _option(listed, "anthropic", "oauth") == {
            "id": "anthropic",
            "name": "Anthropic",
            "authType": "oauth",
            "status": None,
            "loggedIn": False,
            "loginLabel": "Sign in with an account",
            "subscription": True,
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
        listed = rpc.call({"type": "get_login_providers"})["data"]["providers"]
        assert _option(listed, "anthropic", "oauth")["loggedIn"] is True
        assert _option(listed, "anthropic", "api_key")["status"] == {
            "type": "oauth",
            "source": "stored credential",
        }
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
