from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.model_registry import ModelRegistry
from pi_tui.ai.oauth.resolve import LoginExpiredError, resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _store_login(path: Path, access: str, refresh: str, expires_in_s: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    credential = {
        "type": "oauth",
        "refresh": refresh,
        "access": access,
        "expires": int((time.time() + expires_in_s) * 1000),
    }
    path.write_text(
        json.dumps({"anthropic": credential, "openai": {"type": "api_key", "key": "sk-other"}}, indent=2)
    )


def test_a_valid_login_is_used_without_refreshing(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    access, refresh = auth_server.issue_tokens()
    _store_login(agent_dir / "auth.json", access, refresh, 3600)
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "anthropic")
    assert auth is not None and auth.api_key == access
    assert auth_server.refresh_count == 0


def test_a_login_about_to_expire_is_refreshed_and_saved(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    access, refresh = auth_server.issue_tokens()
    _store_login(agent_dir / "auth.json", access, refresh, 60)  # inside the five-minute margin
    auth = resolve_oauth(AuthStorage(agent_dir / "auth.json"), "anthropic")
    assert auth is not None and auth.api_key != access and auth.api_key in auth_server.valid_access_tokens()
    data = json.loads((agent_dir / "auth.json").read_text())
    assert data["anthropic"]["access"] == auth.api_key and data["anthropic"]["refresh"] != refresh
    assert data["openai"] == {"type": "api_key", "key": "sk-other"}
    request = next(r for r in auth_server.requests if r.path == "/v1/oauth/token")
    assert request.body == {
        "grant_type": "refresh_token",
        "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
        "refresh_token": refresh,
    }


def test_a_revoked_login_says_so_in_one_line_naming_login(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    access, refresh = auth_server.issue_tokens()
    auth_server.revoke(refresh)
    _store_login(agent_dir / "auth.json", access, refresh, -10)
    before = (agent_dir / "auth.json").read_text()
    with pytest.raises(LoginExpiredError) as failure:
        resolve_oauth(AuthStorage(agent_dir / "auth.json"), "anthropic")
    message = str(failure.value)
    assert "\n" not in message and "expired or was revoked" in message and "/login anthropic" in message
    assert access not in message and refresh not in message
    assert (agent_dir / "auth.json").read_text() == before  # the credential is kept, as pi keeps it


async def test_the_registry_refreshes_before_a_request(auth_server: FakeAuthServer, agent_dir: Path) -> None:
    access, refresh = auth_server.issue_tokens()
    _store_login(agent_dir / "auth.json", access, refresh, 10)
    registry = ModelRegistry(agent_dir)
    model = registry.default_model_for("anthropic")
    assert model is not None
    key = await registry.resolve_api_key(model)
    assert key != access and key in auth_server.valid_access_tokens()
    assert await registry.resolve_api_key(model) == key  # fresh now: no second refresh
    assert auth_server.refresh_count == 1


_RACER = """
import hashlib, sys
from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth.resolve import expires_soon, resolve_oauth
storage = AuthStorage()
assert expires_soon(storage.oauth("anthropic"))
print("saw-expired", flush=True)
auth = resolve_oauth(storage, "anthropic")
print(hashlib.sha256(auth.api_key.encode()).hexdigest(), flush=True)
"""


def _racer(env_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _RACER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_processes_refreshing_at_once_both_keep_working(
    auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    access, refresh = auth_server.issue_tokens()
    _store_login(agent_dir / "auth.json", access, refresh, -10)
    auth_server.hold_refreshes()
    first = _racer(agent_dir)
    assert first.stdout is not None and first.stdout.readline() == "saw-expired\n"
    assert auth_server.refresh_arrived.wait(20)  # the first process holds the lock, its refresh parked
    second = _racer(agent_dir)
    assert (
        second.stdout is not None and second.stdout.readline() == "saw-expired\n"
    )  # it read the old token too
    auth_server.release_refreshes()
    out_first, err_first = first.communicate(timeout=30)
    out_second, err_second = second.communicate(timeout=30)
    assert first.returncode == 0, err_first
    assert second.returncode == 0, err_second
    assert out_first == out_second  # the same fresh token in both
    assert auth_server.refresh_count == 1  # the second re-read under the lock instead of refreshing
    stored = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    assert stored["access"] in auth_server.valid_access_tokens() and stored["access"] != access
    assert not (agent_dir / "auth.json.lock").exists()
