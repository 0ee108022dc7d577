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
    """The shell's and its child's host pids. Read from the files they wrote, translated through each
    process's ``NSpid`` line when the command ran in the sandbox (its own PID namespace)."""
    inside = [int((cwd / name).read_text()) for name in ("shell.pid", "child.pid")]
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            where = os.readlink(entry / "cwd")
        except OSError:
            continue
        nspids = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
        if nspids and int(nspids[-1]) in inside and Path(where) == cwd.resolve():
            found[int(nspids[-1])] = int(entry.name)
    return [found.get(pid, pid) for pid in inside]


@pytest.mark.parametrize(
    ("sig", "code", "sandbox"),
    [
        (signal.SIGTERM, 143, "workspace-write"),
        (signal.SIGHUP, 129, "workspace-write"),
        (signal.SIGINT, 130, "workspace-write"),
        (signal.SIGKILL, -9, "workspace-write"),
        (signal.SIGTERM, 143, "off"),
        (signal.SIGKILL, -9, "off"),
    ],
)
def test_a_signal_during_a_bash_call_leaves_no_process_of_the_tool_and_a_valid_session(
    tmp_path: Path, agent_dir: Path, sig: signal.Signals, code: int, sandbox: str
) -> None:
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": COMMAND})]), Reply([text("never reached")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = start_cli([*MODEL, "--sandbox", sandbox, "--mode", "json", "run the command"], tmp_path)
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
