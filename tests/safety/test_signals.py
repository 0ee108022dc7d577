from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json

from .helpers import MODEL, alive, session_lines, start_cli, wait_for

pytestmark = pytest.mark.slow

# The tool's shell records its pid and a background child's pid, then waits on the child.
COMMAND = "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait"


def pids(cwd: Path) -> list[int]:
    return [int((cwd / name).read_text()) for name in ("shell.pid", "child.pid")]


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130), (signal.SIGKILL, -9)]
)
def test_a_signal_during_a_bash_call_leaves_no_process_of_the_tool_and_a_valid_session(
    tmp_path: Path, agent_dir: Path, sig: signal.Signals, code: int
) -> None:
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": COMMAND})]), Reply([text("never reached")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = start_cli([*MODEL, "--mode", "json", "run the command"], tmp_path)
        try:
            wait_for(
                lambda: (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text(),
                30,
                "the command",
            )
            shell, child = pids(tmp_path)
            assert alive(shell) and alive(child)
            os.kill(proc.pid, sig)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            out, err = proc.communicate()

    assert proc.returncode == code, err
    wait_for(lambda: not alive(shell) and not alive(child), 10, "the tool's processes to be gone")
    lines = session_lines(agent_dir)
    assert lines[0]["type"] == "session"
    calls = [
        line for line in lines if line.get("type") == "message" and line["message"]["role"] == "assistant"
    ]
    assert calls and calls[0]["message"]["content"][0]["name"] == "bash"
