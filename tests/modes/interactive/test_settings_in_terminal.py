"""Settings whose effect lives between the app and the terminal, checked in a pseudo-terminal (pyte)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen

pytestmark = pytest.mark.slow


def _env(home: Path, agent_dir: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }


@pytest.mark.parametrize("shown", [False, True])
def test_show_hardware_cursor_shows_the_terminal_cursor_at_the_editor(
    tmp_path: Path, isolated_home: Path, shown: bool
) -> None:
    agent_dir = isolated_home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"showHardwareCursor": shown}))
    project = tmp_path / "project"
    project.mkdir()
    argv = [sys.executable, "-m", "pi_tui", "--provider", "faux"]
    with PtyScreen(argv, cwd=project, env=_env(isolated_home, agent_dir), columns=100, lines=30) as term:
        term.wait_for("faux", timeout=30)  # the footer names the model: the session is ready
        term.send("hello")
        term.wait_for("hello")
        term.drain()
        cursor = term.screen.cursor
        assert cursor.hidden is (not shown)
        if shown:  # where the editor's cursor is: right after the typed text
            row = term.screen.display[cursor.y]
            assert row[: cursor.x].rstrip().endswith("hello")
        term.send("\x03\x03")
        term.wait_exit(timeout=20)
