from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import run_cli

pytestmark = pytest.mark.slow


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _start_login(cwd: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "login", "anthropic"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _authorize_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if "/oauth/authorize?" in line:
            return line.strip()
    raise AssertionError("no authorization URL printed")


def _stored(agent_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    return data


def test_login_through_the_browser_then_answer_then_refresh_then_logout(
    auth_server: FakeAuthServer, agent_dir: Path, tmp_path: Path
) -> None:
    proc = _start_login(tmp_path)
    location = auth_server.browser_approve(_authorize_url(proc))
    with urllib.request.urlopen(location, timeout=10) as page:  # the browser follows the redirect to us
        assert b"login completed" in page.read()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert f"Logged in to Anthropic (Claude Pro/Max). Credentials saved to {agent_dir / 'auth.json'}" in out
    login = _stored(agent_dir)
    assert str(login["access"]) not in out + err and str(login["refresh"]) not in out + err
    assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600

    llm = FakeLLM(api_key=str(login["access"]))
    llm.script([Reply([text("signed in")])])
    with llm.serve() as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"anthropic": {"baseUrl": server.anthropic_base_url}}})
        )
        run = run_cli(["--provider", "anthropic", "--model", "claude-sonnet-4-6", "-p", "hi"], tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "signed in", run.stderr
    assert llm.requests[-1].headers["x-app"] == "cli" and auth_server.refresh_count == 0

    expired = {**login, "expires": int(time.time() * 1000) - 1000}
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": expired}, indent=2))
    llm = FakeLLM()
    llm.script([Reply([text("refreshed")])])
    with llm.serve() as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"anthropic": {"baseUrl": server.anthropic_base_url}}})
        )
        run = run_cli(["--provider", "anthropic", "--model", "claude-sonnet-4-6", "-p", "hi"], tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "refreshed", run.stderr
    fresh = _stored(agent_dir)
    assert auth_server.refresh_count == 1 and fresh["access"] != login["access"]
    assert fresh["access"] in auth_server.valid_access_tokens()

    run = run_cli(["logout", "anthropic"], tmp_path)
    assert run.returncode == 0 and "Logged out of Anthropic (Claude Pro/Max)" in run.stdout
    assert json.loads((agent_dir / "auth.json").read_text()) == {}


def test_login_by_pasting_the_redirect_url(
    auth_server: FakeAuthServer, agent_dir: Path, tmp_path: Path
) -> None:
    proc = _start_login(tmp_path)
    location = auth_server.browser_approve(
        _authorize_url(proc)
    )  # a browser elsewhere: its redirect goes nowhere
    out, err = proc.communicate(location + "\n", timeout=30)
    assert proc.returncode == 0, err
    assert "Logged in to Anthropic" in out
    assert _stored(agent_dir)["access"] in auth_server.valid_access_tokens()


def test_a_revoked_login_fails_the_request_with_one_line_naming_login(
    auth_server: FakeAuthServer, agent_dir: Path, tmp_path: Path
) -> None:
    access, refresh = auth_server.issue_tokens()
    auth_server.revoke(refresh)
    credential = {"type": "oauth", "refresh": refresh, "access": access, "expires": 1000}
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": credential}, indent=2))
    llm = FakeLLM()
    with llm.serve() as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"anthropic": {"baseUrl": server.anthropic_base_url}}})
        )
        run = run_cli(["--provider", "anthropic", "--model", "claude-sonnet-4-6", "-p", "hi"], tmp_path)
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines == [
        "Error: The Anthropic (Claude Pro/Max) login has expired or was revoked (Anthropic token refresh failed "
        "(HTTP 400): invalid_grant: Refresh token not found or invalid). Run /login anthropic (in a shell: "
        "pi-tui login anthropic) to sign in again."
    ]
    assert access not in run.stderr + run.stdout and refresh not in run.stderr + run.stdout
    assert llm.requests == []


def test_login_with_an_unknown_provider_lists_the_ones_there_are(agent_dir: Path, tmp_path: Path) -> None:
    run = run_cli(["login", "nope"], tmp_path)
    assert run.returncode == 1 and 'no login for "nope"' in run.stderr and "anthropic" in run.stderr


def test_logout_with_nothing_stored_says_what_it_removes(agent_dir: Path, tmp_path: Path) -> None:
    run = run_cli(["logout"], tmp_path)
    assert run.returncode == 0 and "No stored credentials to remove." in run.stdout


def test_a_kimi_login_authenticates_requests_with_its_bearer_header(agent_dir: Path, tmp_path: Path) -> None:
    token = "kimi-access-token-123456"
    credential = {
        "type": "oauth",
        "access": token,
        "refresh": "r",
        "expires": int(time.time() * 1000) + 3600_000,
    }
    (agent_dir / "auth.json").write_text(json.dumps({"kimi-coding": credential}, indent=2))
    llm = FakeLLM(api_key=token)
    llm.script([Reply([text("kimi here")])])
    with llm.serve() as server:
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"kimi-coding": {"baseUrl": server.anthropic_base_url}}})
        )
        run = run_cli(["--provider", "kimi-coding", "-p", "hi"], tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "kimi here", run.stderr
    sent = llm.requests[-1].headers
    assert "authorization" in sent and "x-api-key" not in sent  # pi sends Kimi's token only as Bearer


def test_login_with_a_malformed_auth_json_fails_first_and_keeps_the_file(
    auth_server: FakeAuthServer, agent_dir: Path, tmp_path: Path
) -> None:
    broken = '{"openai": {"type": "api_key", "key": "sk-keep"},\n'
    (agent_dir / "auth.json").write_text(broken)
    run = run_cli(["login", "anthropic"], tmp_path)
    assert run.returncode == 1
    assert f"Cannot save a login: {agent_dir / 'auth.json'}:2: invalid JSON" in run.stderr
    assert not [r for r in auth_server.requests if r.path == "/v1/oauth/token"]
    assert (agent_dir / "auth.json").read_text() == broken


def test_codex_device_login_from_the_shell_then_a_request_then_refresh(
    auth_server: FakeAuthServer, agent_dir: Path, tmp_path: Path
) -> None:
    run = run_cli(["login", "openai-codex"], tmp_path, stdin="2\n")  # 2 = device code login (headless)
    assert run.returncode == 0, run.stderr
    assert "Device code login (headless)" in run.stdout and "Enter code: ABCD-1234" in run.stdout
    assert "Logged in to OpenAI (ChatGPT Plus/Pro)" in run.stdout
    login = json.loads((agent_dir / "auth.json").read_text())["openai-codex"]
    assert login["accountId"] == "acct-fake-123"

    for expires, answer in ((login["expires"], "from codex"), (0, "after refresh")):
        data = json.loads((agent_dir / "auth.json").read_text())
        data["openai-codex"]["expires"] = expires
        (agent_dir / "auth.json").write_text(json.dumps(data))
        llm = FakeLLM()
        llm.script([Reply([text(answer)])])
        with llm.serve() as server:
            (agent_dir / "models.json").write_text(
                json.dumps({"providers": {"openai-codex": {"baseUrl": server.url}}})
            )
            run = run_cli(["--provider", "openai-codex", "-p", "hi"], tmp_path)
        assert run.returncode == 0 and run.stdout.strip() == answer, run.stderr
        assert llm.requests[-1].headers["chatgpt-account-id"] == "acct-fake-123"
    refreshed = json.loads((agent_dir / "auth.json").read_text())["openai-codex"]
    assert refreshed["access"] != login["access"] and refreshed["access"] in auth_server.valid_access_tokens()


def test_logout_names_an_api_key_by_its_provider(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": "sk-ant-x"}}))
    run = run_cli(["logout", "anthropic"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Removed stored API key for Anthropic." in run.stdout
    assert "Claude Pro/Max" not in run.stdout
    assert json.loads((agent_dir / "auth.json").read_text()) == {}
