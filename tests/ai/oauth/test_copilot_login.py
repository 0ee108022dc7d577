from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.model_registry import ModelRegistry
from pi_tui.ai.oauth import AuthPrompt, login
from pi_tui.ai.oauth.github_copilot import copilot_base_url, normalize_domain
from pi_tui.ai.oauth.resolve import LoginExpiredError, resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import ScriptedInteraction


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer(device_script=["authorization_pending", "slow_down", "ok"]) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _domain_answer(answer: str) -> ScriptedInteraction:
    def reply(prompt: AuthPrompt) -> str:
        assert (
            prompt.kind == "text" and prompt.message == "GitHub Enterprise URL/domain (blank for github.com)"
        )
        return answer

    return ScriptedInteraction(answer=reply)


def test_copilot_device_login_exchanges_the_token_and_lists_models(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    io = _domain_answer("")
    credential = login("github-copilot", io, AuthStorage(agent_dir / "auth.json"))
    assert [e.user_code for e in io.events if e.kind == "device_code"] == ["ABCD-1234"]
    assert any(e.kind == "progress" and e.message == "Enabling models..." for e in io.events)
    github_token = credential["refresh"]
    assert github_token.startswith("gho_") and "proxy-ep=" in credential["access"]
    assert "enterpriseUrl" not in credential
    # enabled + the unconfigured one switched on; the tool-less embedding model left out
    assert credential["availableModelIds"] == ["gpt-5.4", "claude-sonnet-4.6"]
    assert auth_server.enabled_models == ["claude-sonnet-4.6"]
    start = next(r for r in auth_server.requests if r.path == "/login/device/code")
    assert start.body == {"client_id": "Iv1.b507a08c87ecfe98", "scope": "read:user"}
    exchange = next(r for r in auth_server.requests if r.path == "/copilot_internal/v2/token")
    assert exchange.headers["Authorization"] == f"Bearer {github_token}"
    assert exchange.headers["Editor-Version"] == "vscode/1.107.0"
    assert exchange.headers["Copilot-Integration-Id"] == "vscode-chat"
    lifetime_ms = credential["expires"] - time.time() * 1000
    assert 3600_000 - 5 * 60_000 - 5_000 < lifetime_ms <= 3600_000 - 5 * 60_000

    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "github-copilot")
    assert auth is not None and auth.api_key == credential["access"]
    assert auth.base_url == "https://api.individual.githubcopilot.com"

    registry = ModelRegistry(agent_dir)
    offered = [m.id for m in registry.available_models() if m.provider == "github-copilot"]
    assert sorted(offered) == ["claude-sonnet-4.6", "gpt-5.4"]  # of the catalog's 32, only the account's


def test_copilot_enterprise_domain_is_kept_and_refresh_exchanges_again(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    io = _domain_answer("https://company.ghe.com/some/path")
    credential = login("github-copilot", io, AuthStorage(agent_dir / "auth.json"))
    assert credential["enterpriseUrl"] == "company.ghe.com"
    data = json.loads((agent_dir / "auth.json").read_text())
    data["github-copilot"]["expires"] = 0
    (agent_dir / "auth.json").write_text(json.dumps(data))
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "github-copilot")
    stored = json.loads((agent_dir / "auth.json").read_text())["github-copilot"]
    assert auth is not None and auth.api_key == stored["access"] != credential["access"]
    assert stored["refresh"] == credential["refresh"] and stored["enterpriseUrl"] == "company.ghe.com"

    auth_server.revoke_identity_token(str(credential["refresh"]))
    data["github-copilot"] = {**stored, "expires": 0}
    (agent_dir / "auth.json").write_text(json.dumps(data))
    with pytest.raises(LoginExpiredError, match=r"HTTP 401.*Run /login github-copilot"):
        resolve_oauth(AuthStorage(agent_dir / "auth.json"), "github-copilot")


def test_copilot_base_url_rules() -> None:
    assert copilot_base_url("tid=1;proxy-ep=proxy.business.githubcopilot.com;x=1", None) == (
        "https://api.business.githubcopilot.com"
    )
    assert copilot_base_url("tid=1", "company.ghe.com") == "https://copilot-api.company.ghe.com"
    assert copilot_base_url("tid=1", None) == "https://api.individual.githubcopilot.com"
    assert normalize_domain(" company.ghe.com ") == "company.ghe.com"
    assert normalize_domain("") is None
