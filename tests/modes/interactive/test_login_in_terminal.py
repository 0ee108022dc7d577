from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM
from pi_tui.testing.oauth_server import FakeAuthServer

from .test_real_terminal import _env as terminal_env

pytestmark = pytest.mark.slow

ARGV = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]


def test_device_code_login_in_a_real_terminal(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent_dir = isolated_home / ".pi" / "agent"
    fake = FakeLLM()
    auth = FakeAuthServer(device_script=["authorization_pending"] * 8 + ["ok"], device_interval=0.25)
    with fake.serve() as server, auth:
        env = {**terminal_env(isolated_home, agent_dir, server), **auth.env()}
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("/login xai")
            term.wait_for("/login xai")
            term.send("\x1b")  # close the completion menu
            term.drain()
            term.send("\r")
            term.wait_for("Select authentication method for xAI")
            term.send("\r")  # Sign in with an account
            term.wait_for("Enter code: ABCD-1234", timeout=20)
            screen = term.text()
            assert "Login to xAI" in screen
            assert "https://example.com/device?user_code=ABCD-1234" in screen
            term.wait_for("Logged in to xAI. Credentials saved", timeout=20)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
    assert json.loads((agent_dir / "auth.json").read_text())["xai"]["type"] == "oauth"
