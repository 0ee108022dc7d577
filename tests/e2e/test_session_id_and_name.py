"""``--session-id <id>`` and ``--name/-n <name>``, as pi 0.87.1.

``--session-id`` opens this project's session with exactly that id, or creates one with it (warning that
none was found); it refuses a malformed id and ``--session``/``-c``/``-r`` beside it; with ``--fork`` the
copy gets the id (refused when this project already has it); with ``--no-session`` the in-memory session
has it. ``--name`` names the session (an empty name is refused).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.session.paths import default_session_dir
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import run_cli

pytestmark = pytest.mark.slow

MODEL = ["--model", "fake-openai/gpt-fake"]


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_session_id_creates_then_reopens_and_name_names_it(tmp_path: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("first")]), Reply([text("second")])])
    created = run_cli(["--session-id", "my-task.1", "-n", "Auth work", *MODEL, "-p", "one"], tmp_path)
    assert created.returncode == 0, created.stderr
    assert created.stderr == (
        "Warning: No project session found with id 'my-task.1'; creating a new session with that id.\n"
    )
    (path,) = default_session_dir(tmp_path).glob("*.jsonl")
    assert path.name.endswith("_my-task.1.jsonl")
    assert _lines(path)[0]["id"] == "my-task.1"
    assert {"type": "session_info", "name": "Auth work"}.items() <= next(
        e for e in _lines(path) if e["type"] == "session_info"
    ).items()
    again = run_cli(["--session-id", "my-task.1", *MODEL, "-p", "two"], tmp_path)
    assert again.returncode == 0 and again.stderr == ""
    assert list(default_session_dir(tmp_path).glob("*.jsonl")) == [path]
    sent = [m["content"] for m in fake.requests[-1].body["messages"] if m.get("role") == "user"]
    assert [c if isinstance(c, str) else c[0]["text"] for c in sent] == ["one", "two"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--session-id", "-bad"], "Error: Session id must be non-empty"),
        (["--session-id", "x", "-c"], "Error: --session-id cannot be combined with --continue"),
        (["--session-id", "x", "--session", "y"], "Error: --session-id cannot be combined with --session"),
        (["--name", "  "], "Error: --name requires a non-empty value"),
    ],
)
def test_bad_session_id_or_name_stops_with_exit_1(
    tmp_path: Path, fake: FakeLLM, args: list[str], error: str
) -> None:
    run = run_cli([*args, *MODEL, "-p", "hi"], tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith(error)
    assert fake.requests == []


def test_fork_with_a_session_id_and_no_session_with_one(tmp_path: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("a")]), Reply([text("b")])])
    assert run_cli(["--session-id", "src", *MODEL, "-p", "one"], tmp_path).returncode == 0
    source = next(default_session_dir(tmp_path).glob("*.jsonl"))
    taken = run_cli(["--fork", str(source), "--session-id", "src", *MODEL, "-p", "x"], tmp_path)
    assert taken.returncode == 1 and taken.stderr == "Session already exists with id 'src'\n"
    forked = run_cli(["--fork", str(source), "--session-id", "copy", *MODEL, "-p", "two"], tmp_path)
    assert forked.returncode == 0, forked.stderr
    (copy,) = [p for p in default_session_dir(tmp_path).glob("*.jsonl") if p != source]
    assert _lines(copy)[0]["id"] == "copy"
    memory = run_cli(
        ["--no-session", "--session-id", "mem", "--mode", "rpc"], tmp_path, stdin='{"type":"get_state"}\n'
    )
    assert memory.returncode == 0, memory.stderr
    state = next(json.loads(line) for line in memory.stdout.splitlines() if '"get_state"' in line)
    assert state["data"]["sessionId"] == "mem"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--fork", "x", "-c"], "Error: --fork cannot be combined with --continue\n"),
        (
            ["--fork", "x", "--no-session", "-r"],
            "Error: --fork cannot be combined with --resume, --no-session\n",
        ),
        (["--session-id", "x", "-r"], "Error: --session-id cannot be combined with --resume\n"),
    ],
)
def test_fork_and_session_id_refuse_other_session_flags(
    tmp_path: Path, fake: FakeLLM, args: list[str], error: str
) -> None:
    run = run_cli([*args, *MODEL, "-p", "hi"], tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", error)
    assert fake.requests == []
