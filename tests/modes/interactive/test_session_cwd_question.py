"""``pi-tui --session FILE`` in a terminal runs in the directory the file records, as pi 0.87.1; when
that directory is gone it asks "Session cwd not found" first: yes continues in the current directory,
no leaves (exit 0) without sending anything. Checked on the tool result the fake server received."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .test_real_terminal import _env as terminal_env

pytestmark = pytest.mark.slow


def _two_directories(tmp_path: Path, isolated_home: Path) -> tuple[Path, Path, Path]:
    """A session's project and the directory pi-tui is started in (both made), and the agent folder."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    return project, elsewhere, isolated_home / ".pi" / "agent"


def _first_session(project: Path, agent_dir: Path, env: dict[str, str]) -> Path:
    argv = [sys.executable, "-m", "pi_tui", "--model", "fake/claude-fake", "-p", "hi"]
    run = subprocess.run(argv, cwd=project, env=env, input="", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    (found,) = (agent_dir / "sessions").rglob("*.jsonl")
    return found


def _pwd_results(fake: FakeLLM) -> list[str]:
    seen: list[str] = []
    for request in fake.requests:
        for message in request.body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    found = content if isinstance(content, str) else "".join(p["text"] for p in content)
                    if found not in seen:
                        seen.append(found)
    return seen


@pytest.mark.parametrize("answer", ["exists", "y", "n"])
def test_a_session_runs_where_it_was_recorded_or_asks(
    tmp_path: Path, isolated_home: Path, answer: str
) -> None:
    project, elsewhere, agent_dir = _two_directories(tmp_path, isolated_home)
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])])
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        session_file = _first_session(project, agent_dir, env)
        if answer != "exists":
            shutil.rmtree(project)
        argv = [sys.executable, "-m", "pi_tui", "--session", str(session_file), "where are you?"]
        with PtyScreen(argv, cwd=elsewhere, env=env, columns=100, lines=30) as term:
            if answer != "exists":
                term.wait_for("Session cwd not found", timeout=30)
                flat = re.sub(r"[\s│]", "", term.text())  # long paths wrap inside the dialog's frame
                assert str(project) in flat and str(elsewhere) in flat
                term.send(answer)
            if answer == "n":
                assert term.wait_exit(timeout=20) == 0
            else:
                term.wait_for("done", timeout=30)
                term.send("\x03\x03")
                assert term.wait_exit(timeout=20) == 0
    assert fake.violations == []
    if answer == "n":
        assert len(fake.requests) == 1  # only the first run's
        assert not project.exists()
        return
    where = project if answer == "exists" else elsewhere
    assert _pwd_results(fake) == [f"{where.resolve()}\n"]
    if answer == "y":  # the file keeps the directory it recorded
        header = json.loads(session_file.read_text().splitlines()[0])
        assert header["cwd"] == str(project.resolve())
