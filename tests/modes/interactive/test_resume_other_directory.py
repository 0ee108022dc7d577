"""``/resume`` of a session recorded in another directory works there, as pi 0.87.1, in a real terminal.

pi builds the session's runtime for the directory its file records: the tools run there, that project's
AGENTS.md is in the prompt, the footer names it, and ``/new`` files the next session there. When that
directory is gone it asks "Session cwd not found": yes resumes in the current directory, no cancels
and the current session stays. Checked on what the fake server received.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .test_real_terminal import _env as terminal_env
from .test_session_cwd_question import _first_session, _pwd_results, _two_directories

pytestmark = pytest.mark.slow


def _system_prompt(request: object) -> str:
    body = request.body  # type: ignore[attr-defined]
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(part.get("text", "") for part in system)


def _resume_first_of_all(term: PtyScreen, words: str) -> None:
    term.send("/resume")
    term.wait_for("/resume", timeout=20)
    term.send("\r")
    term.wait_for("Resume Session", timeout=20)
    term.send("\t")  # every project's sessions
    term.send(words)
    term.wait_for(words, timeout=20)
    term.send("\r")


@pytest.mark.parametrize("answer", ["exists", "y", "n"])
def test_resume_moves_to_the_sessions_directory_or_asks(
    tmp_path: Path, isolated_home: Path, answer: str
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "AGENTS.md").write_text("Rules of the other project.\n")
    agent_dir = isolated_home / ".pi" / "agent"
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("recorded")]),
            Reply([tool_call("bash", {"command": "pwd"})]),
            Reply([text("done")]),
        ]
    )
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        _first_session(project, agent_dir, env)
        if answer != "exists":
            shutil.rmtree(project)
        argv = [sys.executable, "-m", "pi_tui", "--model", "fake/claude-fake"]
        with PtyScreen(argv, cwd=elsewhere, env=env, columns=120, lines=32) as term:
            term.wait_for("claude-fake", timeout=30)
            _resume_first_of_all(term, "hi")
            if answer != "exists":
                term.wait_for("Session cwd not found", timeout=30)
                term.send(answer)
            if answer == "n":
                term.wait_for("Resume cancelled", timeout=20)  # back in the session started here
            else:
                term.wait_for("recorded", timeout=30)  # the resumed session's history
            if answer == "exists":
                term.wait_for(project.name, timeout=20)  # the footer names the session's directory
                footer = re.sub(r"\s", "", term.text())
                assert str(project.resolve()) in footer and str(elsewhere.resolve()) not in footer
            term.send("where are you?")
            term.send("\r")
            term.wait_for("done", timeout=30)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
    assert fake.violations == []
    where = project if answer == "exists" else elsewhere
    assert _pwd_results(fake) == [f"{where.resolve()}\n"]
    prompt = _system_prompt(fake.requests[-1])
    assert str(where.resolve()) in prompt
    assert ("Rules of the other project." in prompt) == (answer == "exists")


@pytest.mark.parametrize("answer", ["trust", "do not trust"])
def test_resume_asks_the_trust_question_about_the_sessions_directory(
    tmp_path: Path, isolated_home: Path, answer: str
) -> None:
    project, elsewhere, agent_dir = _two_directories(tmp_path, isolated_home)
    fake = FakeLLM()
    fake.script([Reply([text("recorded")]), Reply([text("done")])])
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        _first_session(project, agent_dir, env)
        (project / ".pi").mkdir()
        (project / ".pi" / "APPEND_SYSTEM.md").write_text("Appended rule of the other project.\n")
        argv = [sys.executable, "-m", "pi_tui", "--model", "fake/claude-fake"]
        with PtyScreen(argv, cwd=elsewhere, env=env, columns=120, lines=32) as term:
            term.wait_for("claude-fake", timeout=30)  # nothing to trust here: no question at start
            _resume_first_of_all(term, "hi")
            term.wait_for("Trust project folder?", timeout=30)
            assert str(project.resolve()) in re.sub(r"[\s│]", "", term.text())
            if answer == "trust":
                term.send("\r")  # the first choice: Trust
            else:
                term.send("\x1b")  # no answer: not trusted
            term.wait_for("recorded", timeout=30)
            term.send("next")
            term.send("\r")
            term.wait_for("done", timeout=30)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
    assert fake.violations == []
    assert ("Appended rule of the other project." in _system_prompt(fake.requests[-1])) == (answer == "trust")
