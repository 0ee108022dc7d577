from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import run_cli, write_models_json
from tests.modes.rpc.rpc_client import RpcProcess

from .helpers import MODEL

pytestmark = pytest.mark.slow

PRINTER = """
import os, subprocess, sys

print("printed at register")

def register(pi):
    print("printed in register")

    @pi.on("session_start")
    def start(event):
        print("printed at session_start")
        os.write(1, b"written to fd 1\\n")
        sys.__stdout__.write("written to sys.__stdout__\\n")
        sys.__stdout__.flush()
        subprocess.run(["echo", "a child inherited fd 1"], check=True)

    @pi.on("tool_result")
    def result(event):
        print("printed in tool_result")
"""


def test_a_printing_extension_leaves_json_mode_output_valid_json_on_every_line(
    tmp_path: Path, agent_dir: Path
) -> None:
    printer = tmp_path / "printer.py"
    printer.write_text(PRINTER)
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "echo from the tool"})]), Reply([text("done")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "--mode", "json", "-e", str(printer), "go"], tmp_path)

    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    records = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert records[0]["type"] == "session" and records[-1]["type"] in ("agent_end", "agent_settled")
    assert "from the tool" in run.stdout  # the tool's own output is inside the JSON, where it belongs
    for stray in (
        "printed at register",
        "printed in register",
        "printed at session_start",
        "written to fd 1",
        "written to sys.__stdout__",
        "a child inherited fd 1",
        "printed in tool_result",
    ):
        assert stray in run.stderr and stray not in run.stdout, stray


def test_a_printing_extension_leaves_rpc_output_valid_json_on_every_line(
    tmp_path: Path, agent_dir: Path
) -> None:
    printer = tmp_path / "printer.py"
    printer.write_text(PRINTER)
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "echo from the tool"})]), Reply([text("done")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL, "-e", str(printer))
        try:
            rpc.call({"type": "prompt", "message": "go"})
            rpc.event("agent_settled")
            bash, _ = rpc.response(rpc.send({"type": "bash", "command": "echo from a user command"}))
            assert bash["success"] is True
            assert rpc.close() == 0  # fails if any stdout line was not JSON
        finally:
            rpc.kill()
    for stray in (
        "printed at register",
        "written to fd 1",
        "a child inherited fd 1",
        "printed in tool_result",
    ):
        assert stray in rpc.stderr, stray
    assert any("from a user command" in json.dumps(r) for r in rpc.records)
