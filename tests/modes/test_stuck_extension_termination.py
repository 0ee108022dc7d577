"""An extension handler that blocks the event loop (a sync ``time.sleep``) no longer makes print and RPC
mode deaf to SIGTERM: the signal is taken by a plain handler, and the process ends with 143 once the normal
way out has had `DEADLINE` seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.modes.termination import DEADLINE
from pi_tui.testing import FakeLLM, Reply, text
from tests.e2e.helpers import write_models_json

pytestmark = pytest.mark.slow

STUCK = """
import sys, time

def register(pi):
    @pi.on("before_agent_start")
    def stuck(event, ctx):
        sys.stderr.write("stuck now\\n")
        sys.stderr.flush()
        time.sleep(3600)
"""


def _start(args: list[str], cwd: Path, ext: Path, *, rpc: bool) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    return subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "--model", "fake-anthropic/claude-fake", "-e", str(ext), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if rpc else subprocess.DEVNULL,  # print mode reads piped input to its end
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_stuck(proc: subprocess.Popen[str]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.strip() == "stuck now":
            return
    raise AssertionError(f"the extension never ran; exit {proc.wait()}")


@pytest.mark.parametrize("mode", ["print", "rpc"])
def test_sigterm_ends_a_run_whose_extension_blocks_the_loop(
    tmp_path: Path, agent_dir: Path, mode: str
) -> None:
    ext = tmp_path / "stuck.py"
    ext.write_text(STUCK)
    fake = FakeLLM()
    fake.responder = lambda _request: Reply([text("never")])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = mode == "rpc"
        proc = _start(["--mode", "rpc"] if rpc else ["-p", "hi"], tmp_path, ext, rpc=rpc)
        with proc:
            try:
                if rpc:
                    assert proc.stdin is not None
                    proc.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "hi"}) + "\n")
                    proc.stdin.flush()
                _wait_stuck(proc)
                proc.send_signal(signal.SIGTERM)
                code = proc.wait(timeout=DEADLINE + 20)
                assert proc.stderr is not None
                rest = proc.stderr.read()
            finally:
                if proc.poll() is None:
                    proc.kill()
    assert code == 143
    assert "Stopped by SIGTERM: still busy" in rest
