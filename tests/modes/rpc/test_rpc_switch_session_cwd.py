"""RPC ``switch_session`` to a session recorded in another directory works there, as pi 0.87.1: its tools
run there and that project's AGENTS.md is in the prompt; when the directory is gone the command fails with
pi's message and the current session stays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import run_cli

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow


def _session_made_in(project: Path, agent_dir: Path) -> Path:
    run = run_cli(["--model", "fake-openai/gpt-fake", "-p", "hi"], project)
    assert run.returncode == 0, run.stderr
    (found,) = (agent_dir / "sessions").rglob("*.jsonl")
    return found


def _tool_results(fake: FakeLLM) -> list[str]:
    return [m["content"] for r in fake.requests for m in r.body["messages"] if m.get("role") == "tool"]


def _system(fake: FakeLLM) -> str:
    (first,) = [m for m in fake.requests[-1].body["messages"] if m.get("role") == "system"]
    return str(first["content"])


@pytest.mark.parametrize("gone", [False, True])
def test_switch_session_moves_to_the_sessions_directory(
    tmp_path: Path, agent_dir: Path, fake: FakeLLM, gone: bool
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "AGENTS.md").write_text("Rules of the other project.\n")
    fake.script([Reply([text("one")]), Reply([tool_call("bash", {"command": "pwd"})]), Reply([text("done")])])
    session_file = _session_made_in(project, agent_dir)
    if gone:
        shutil.rmtree(project)
    rpc = RpcProcess(elsewhere, "--model", "fake-openai/gpt-fake")
    try:
        before = rpc.call({"type": "get_state"})["data"]["sessionFile"]
        response, _ = rpc.response(rpc.send({"type": "switch_session", "sessionPath": str(session_file)}))
        if gone:
            assert response["success"] is False
            assert response["error"].splitlines() == [
                f"Stored session working directory does not exist: {project.resolve()}",
                f"Session file: {session_file}",
                f"Current working directory: {elsewhere.resolve()}",
            ]
            assert rpc.call({"type": "get_state"})["data"]["sessionFile"] == before
        else:
            assert response["success"] is True and response["data"] == {"cancelled": False}
        rpc.call({"type": "prompt", "message": "where are you?"})
        rpc.event("agent_settled", timeout=30)
        assert rpc.close() == 0
    finally:
        rpc.kill()
    where = elsewhere if gone else project
    assert _tool_results(fake) == [f"{where.resolve()}\n"]
    assert ("Rules of the other project." in _system(fake)) is not gone
    assert str(where.resolve()) in _system(fake)
    if not gone:  # the session goes on in its own file, which keeps its directory
        header = json.loads(session_file.read_text().splitlines()[0])
        assert header["cwd"] == str(project.resolve())
