"""pi 0.87.1's start-up questions about the session, in a real terminal.

- ``--session FILE`` of another project: the trust question is about the directory the session works in
  (the file's own), not the one pi-tui was started in.
- ``--session <id>`` of another project: "Session found in different project" and "Fork this session into
  current directory?"; yes works on in a copy filed here, no leaves (exit 0) with "Aborted.".
- ``--plain`` (pi's interactive mode, line by line) asks whether to continue in the current directory
  when the session's own is gone; yes goes on there, no leaves (exit 0).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.session.paths import default_session_dir
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from ..plain.test_plain_pty import _prompt_shown
from .test_real_terminal import _env as terminal_env
from .test_session_cwd_question import _first_session, _pwd_results, _two_directories

pytestmark = pytest.mark.slow


def _flat(term: PtyScreen) -> str:
    return re.sub(r"[\s│]", "", term.text())  # long paths wrap inside a dialog's frame


def _dialog_flat(term: PtyScreen) -> str:
    """`_flat` of what is inside the dialog's frame only (the dimmed chat and footer show around it)."""
    lines = term.text().splitlines()
    top = next(i for i, line in enumerate(lines) if "╭" in line)
    bottom = next(i for i, line in enumerate(lines) if i > top and "╰" in line)
    left = lines[top].index("╭")
    right = lines[top].index("╮")
    inside = "".join(line[left + 1 : right] for line in lines[top + 1 : bottom])
    return re.sub(r"\s", "", inside)


def test_the_trust_question_is_about_the_sessions_directory(tmp_path: Path, isolated_home: Path) -> None:
    project, elsewhere, agent_dir = _two_directories(tmp_path, isolated_home)
    fake = FakeLLM()
    fake.script([Reply([text("one")])])
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        session_file = _first_session(project, agent_dir, env)
        (project / ".pi" / "extensions").mkdir(parents=True)  # only the session's project has any
        (project / ".pi" / "extensions" / "hello.py").write_text("def register(pi):\n    pass\n")
        argv = [sys.executable, "-m", "pi_tui", "--session", str(session_file)]
        with PtyScreen(argv, cwd=elsewhere, env=env, columns=120, lines=30) as term:
            term.wait_for("Trust project folder?", timeout=30)
            flat = _dialog_flat(term)
            assert str(project.resolve()) in flat and str(elsewhere.resolve()) not in flat
            assert ".pi/extensions/hello.py" in flat
            term.send("\x1b")  # no answer: not trusted
            # the session's history, once it is loaded (the preview of it shows behind the dialog)
            term.wait_for(
                lambda screen: "one" in screen and "Trust project folder?" not in screen, timeout=30
            )
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


@pytest.mark.parametrize("answer", ["y", "n"])
def test_another_projects_session_by_id_is_forked_here_or_left(
    tmp_path: Path, isolated_home: Path, answer: str
) -> None:
    project, elsewhere, agent_dir = _two_directories(tmp_path, isolated_home)
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])])
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        session_file = _first_session(project, agent_dir, env)
        before = session_file.read_bytes()
        session_id = json.loads(before.splitlines()[0])["id"]
        argv = [sys.executable, "-m", "pi_tui", "--session", session_id[:13], "where are you?"]
        with PtyScreen(argv, cwd=elsewhere, env=env, columns=120, lines=30) as term:
            term.wait_for("Session found in different project", timeout=30)
            assert str(project.resolve()) in _flat(term)
            assert "Fork this session into current directory?" in term.text()
            term.send(answer)
            if answer == "n":
                assert term.wait_exit(timeout=20) == 0
                assert "Aborted." in term.text()
            else:
                term.wait_for("done", timeout=30)
                term.send("\x03\x03")
                assert term.wait_exit(timeout=20) == 0
    assert fake.violations == []
    assert session_file.read_bytes() == before
    if answer == "n":
        assert len(fake.requests) == 1  # only the first run's
        assert not default_session_dir(elsewhere.resolve()).exists()
        return
    assert _pwd_results(fake) == [f"{elsewhere.resolve()}\n"]
    (fork,) = default_session_dir(elsewhere.resolve()).glob("*.jsonl")
    header = json.loads(fork.read_text().splitlines()[0])
    assert header["cwd"] == str(elsewhere.resolve()) and header["parentSession"] == str(session_file)


@pytest.mark.parametrize("answer", ["y", "n"])
def test_plain_mode_asks_to_continue_when_the_sessions_directory_is_gone(
    tmp_path: Path, isolated_home: Path, answer: str
) -> None:
    project, elsewhere, agent_dir = _two_directories(tmp_path, isolated_home)
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])])
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        session_file = _first_session(project, agent_dir, env)
        shutil.rmtree(project)
        argv = [sys.executable, "-m", "pi_tui", "--plain", "--session", str(session_file), "where are you?"]
        with PtyScreen(argv, cwd=elsewhere, env=env, columns=120, lines=30) as term:
            term.wait_for("Continue in the current directory? [y/N]", timeout=30)
            assert "Stored session working directory does not exist" in term.text()
            assert str(project.resolve()) in _flat(term)
            term.send(answer + "\r")
            if answer == "n":
                assert term.wait_exit(timeout=20) == 0
            else:
                term.wait_for("done", timeout=30)
                term.wait_for(_prompt_shown, timeout=30)  # Ctrl+D quits from the prompt, not mid-answer
                term.send("\x04")
                assert term.wait_exit(timeout=20) == 0
    assert fake.violations == []
    if answer == "n":
        assert len(fake.requests) == 1
    else:
        assert _pwd_results(fake) == [f"{elsewhere.resolve()}\n"]
