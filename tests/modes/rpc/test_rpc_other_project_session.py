"""``--mode rpc --session <id>`` of another project's session: pi 0.87.1 asks "Fork this session into
current directory? [y/N]" on stderr and takes the first stdin line as the answer (checked with pi: a
``y`` line forks, a command line prints "Aborted." and exits 0). pi-tui answered no without reading it
(stdin is no terminal). After a yes, pi-tui serves the commands that follow (pi's own RPC stops reading
its input after that question)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .rpc_client import RpcProcess
from .test_rpc_switch_session_cwd import _session_made_in

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("answer", [b"y\n", b"yes\n", b"json"])
def test_the_first_stdin_line_answers_the_fork_question(
    tmp_path: Path, agent_dir: Path, fake: FakeLLM, answer: bytes
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    fake.script([Reply([text("one")])])
    source = _session_made_in(project, agent_dir)
    session_id = json.loads(source.read_text().splitlines()[0])["id"]
    rpc = RpcProcess(elsewhere, "--model", "fake-openai/gpt-fake", "--session", session_id[:8])
    try:
        if answer == b"json":  # a client that does not know the question: its first command answers no
            rpc.send({"type": "get_state"})
            assert rpc.proc.wait(timeout=30) == 0
            stderr = rpc.stderr
        else:
            rpc.send_raw(answer)
            state = rpc.call({"type": "get_state"}, timeout=30)["data"]
            assert rpc.close() == 0
            stderr = rpc.stderr
    finally:
        rpc.kill()
    assert f"Session found in different project: {project.resolve()}" in stderr
    assert "Fork this session into current directory? [y/N]" in stderr
    files = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    if answer == b"json":
        assert "Aborted." in stderr
        assert files == [source]
        return
    assert "Aborted." not in stderr
    (fork,) = [f for f in files if f != source]
    assert state["sessionFile"] == str(fork)
    header = json.loads(fork.read_text().splitlines()[0])
    assert header["cwd"] == str(elsewhere.resolve()) and header["parentSession"] == str(source)
