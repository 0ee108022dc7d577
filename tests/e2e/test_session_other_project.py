"""``--session <id>`` naming another project's session, and ``--fork``, as pi 0.87.1.

pi says ``Session found in different project: <its cwd>`` and asks ``Fork this session into current
directory? [y/N]``: yes copies the whole session into a new session of the current directory (its header
records this directory and names the original as parent) and goes on there; anything else prints
``Aborted.`` and exits 0, touching nothing. ``--fork`` makes the same copy without asking.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.session.paths import default_session_dir
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

SESSION_ID = "019ac000-1111-7000-8000-000000000001"


def _write_other_project_session(project: Path) -> Path:
    """A session of ``project`` with two branches (answer "A1", then "B1" after going back)."""
    path = default_session_dir(project) / f"2026-11-27T06-00-00-000Z_{SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = "2026-11-27T06:00:00.000Z"

    def message(entry_id: str, parent: str | None, role: str, words: str) -> dict[str, object]:
        body: dict[str, object] = {"role": role, "content": [{"type": "text", "text": words}], "timestamp": 1}
        if role == "assistant":
            body |= {"api": "openai-completions", "provider": "fake-openai", "model": "gpt-fake",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop"}  # fmt: skip
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": body}

    lines = [
        {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": stamp, "cwd": str(project)},
        message("u1", None, "user", "question A"),
        message("a1", "u1", "assistant", "A1"),
        message("u2", None, "user", "question B"),
        message("a2", "u2", "assistant", "B1"),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _tool_results(fake: FakeLLM) -> list[str]:
    return [m["content"] for r in fake.requests for m in r.body["messages"] if m.get("role") == "tool"]


def _run_with_terminal_stdin(args: list[str], cwd: Path, answer: str) -> tuple[int, str, str]:
    """Run pi-tui with a terminal as stdin (where the question is answered) and pipes for its output."""
    main, side = os.openpty()
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pi_tui", *args],
            cwd=cwd,
            env=env,
            stdin=side,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(side)
        os.write(main, answer.encode() + b"\n")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(main)
    return proc.returncode, out, err


def test_declining_without_a_terminal_touches_nothing(tmp_path: Path, agent_dir: Path) -> None:
    other, here = tmp_path / "other", tmp_path / "here"
    other.mkdir()
    here.mkdir()
    source = _write_other_project_session(other)
    before = source.read_bytes()
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--session", SESSION_ID[:13], "--model", "fake-openai/gpt-fake", "-p", "hi"], here)
    assert run.returncode == 0
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        f"Session found in different project: {other}",
        "Fork this session into current directory? [y/N] ",
        "Aborted.",
    ]
    assert fake.requests == []
    assert source.read_bytes() == before
    assert not default_session_dir(here).exists()


@pytest.mark.parametrize("how", ["--session", "--fork"])
def test_yes_or_fork_copies_the_whole_session_into_this_directory(
    tmp_path: Path, agent_dir: Path, how: str
) -> None:
    other, here = tmp_path / "other", tmp_path / "here"
    other.mkdir()
    here.mkdir()
    source = _write_other_project_session(other)
    before = source.read_bytes()
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])])
    args = [how, SESSION_ID[:13], "--model", "fake-openai/gpt-fake", "-p", "where?"]
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        code, out, err = _run_with_terminal_stdin(args, here, "y")
    assert code == 0, err
    assert out == "done\n"
    if how == "--session":
        assert f"Session found in different project: {other}" in err
    assert _tool_results(fake) == [f"{here.resolve()}\n"]  # it works here, not in the other project
    assert source.read_bytes() == before
    (fork,) = default_session_dir(here).glob("*.jsonl")
    lines = [json.loads(line) for line in fork.read_text().splitlines()]
    assert lines[0]["cwd"] == str(here.resolve()) and lines[0]["parentSession"] == str(source)
    assert lines[0]["id"] != SESSION_ID
    # both branches came along; the conversation went on from the last entry, as in pi
    assert [e["id"] for e in lines[1:5]] == ["u1", "a1", "u2", "a2"]
    sent = [m for m in fake.requests[0].body["messages"] if m.get("role") in ("user", "assistant")]
    assert [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in sent][:2] == [
        "question B",
        "B1",
    ]
