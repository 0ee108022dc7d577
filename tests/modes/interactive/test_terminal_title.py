"""The terminal's title says pi and the project, as pi's does (``π - <folder>``, with the session's name
once it has one), written to the real terminal (a pty read through pyte, which keeps the title)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM

from .test_real_terminal import _env

pytestmark = pytest.mark.slow


def test_the_terminal_title_names_the_project_and_then_the_session(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "myproject"
    project.mkdir()
    with FakeLLM().serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)  # the footer shows the model: the session is ready
            term.wait_for(lambda _s: term.screen.title == "π - myproject", timeout=30)
            term.send("/name release prep\r")
            term.wait_for("Session name set: release prep")
            term.wait_for(lambda _s: term.screen.title == "π - release prep - myproject", timeout=30)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
