"""``--session FILE`` runs in the working directory the file records, as in pi 0.87.1.

A session started in one project and opened from another directory goes back to its own directory (its
tools run there). When that directory is gone, print and JSON mode stop with pi's error and exit 1,
sending nothing; the full-screen app asks first (tests/modes/interactive/test_session_cwd_question.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow


def _session_made_in(project: Path, agent_dir: Path, fake: FakeLLM) -> Path:
    run = run_cli(["--model", "fake-openai/gpt-fake", "-p", "hi"], project)
    assert run.returncode == 0, run.stderr
    (found,) = (agent_dir / "sessions").rglob("*.jsonl")
    return found


def _tool_results(fake: FakeLLM) -> list[str]:
    return [m["content"] for r in fake.requests for m in r.body["messages"] if m.get("role") == "tool"]


def test_tools_run_in_the_directory_the_session_records(tmp_path: Path, agent_dir: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    fake = FakeLLM()
    fake.script(
        [Reply([text("one")]), Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        session_file = _session_made_in(project, agent_dir, fake)
        run = run_cli(["--session", str(session_file), "-p", "where are you?"], elsewhere)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    assert _tool_results(fake) == [f"{project.resolve()}\n"]


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_a_recorded_directory_that_is_gone_stops_with_exit_1(
    tmp_path: Path, agent_dir: Path, mode: list[str]
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([text("never")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        session_file = _session_made_in(project, agent_dir, fake)
        before = session_file.read_bytes()
        shutil.rmtree(project)
        run = run_cli(["--session", str(session_file), *mode, "again"], elsewhere)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        f"Stored session working directory does not exist: {project.resolve()}",
        f"Session file: {session_file}",
        f"Current working directory: {elsewhere.resolve()}",
    ]
    assert len(fake.requests) == 1  # only the first run's
    assert session_file.read_bytes() == before


def test_a_new_session_file_runs_where_it_was_named(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-openai/gpt-fake", "--session", "new.jsonl", "-p", "pwd"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert _tool_results(fake) == [f"{tmp_path.resolve()}\n"]
    header = json.loads((tmp_path / "new.jsonl").read_text().splitlines()[0])
    assert header["cwd"] == str(tmp_path.resolve())
