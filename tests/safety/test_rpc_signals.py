"""SIGTERM and SIGHUP in ``--mode rpc`` (issue #15, item 5): the running tool's process group is stopped,
what is pending is written to the session, and the process exits 143/129."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.modes.rpc.rpc_client import RpcProcess

from .helpers import MODEL, alive, session_lines, wait_for
from .test_signals import COMMAND, pids

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_during_a_bash_call_in_rpc_mode_stops_the_tool_saves_and_exits_with_its_code(
    tmp_path: Path, agent_dir: Path, sig: signal.Signals, code: int
) -> None:
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": COMMAND})]), Reply([text("never reached")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL)
        try:
            rpc.call({"type": "prompt", "message": "run the command"})
            rpc.event("tool_execution_start")
            wait_for(
                lambda: (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text(),
                30,
                "the command",
            )
            shell, child = pids(tmp_path)
            assert alive(shell) and alive(child)
            os.kill(rpc.proc.pid, sig)
            assert rpc.close(timeout=30) == code, rpc.stderr
        finally:
            rpc.kill()

    assert f"Stopped by {sig.name}" in rpc.stderr
    wait_for(lambda: not alive(shell) and not alive(child), 10, "the tool's processes to be gone")
    assert len(fake.requests) == 1
    lines = session_lines(agent_dir)  # every line parses
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "toolResult"]  # prompt recorded
    assert messages[2]["content"][0]["name"] == "bash"
    assert messages[3]["isError"] is True  # the stopped call's result is written, not lost
