"""MCP servers as processes: killing pi-tui leaves none behind, and their stderr stays off the protocol."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.safety.helpers import MODEL, alive, start_cli, wait_for

DEMO = Path(__file__).parent / "mcp_servers" / "demo.py"


def write_config(agent_dir: Path, pid_file: Path) -> None:
    server = {
        "command": sys.executable,
        "args": [str(DEMO)],
        "env": {"DEMO_PID_FILE": str(pid_file), "DEMO_IGNORE_SIGTERM": "1"},
    }
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": server}}))


def test_killing_pi_tui_mid_call_kills_the_server_too(tmp_path: Path, agent_dir: Path) -> None:
    # The server ignores SIGTERM and its hang tool blocks: closing its stdin alone would leave it running.
    pid_file = tmp_path / "server.pid"
    write_config(agent_dir, pid_file)
    fake = FakeLLM()
    fake.script([Reply([tool_call("mcp", {"tool": "demo/hang", "args": {}})]), Reply([text("never")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = start_cli([*MODEL, "-e", "mcp", "--mode", "json", "hang"], tmp_path)
        try:
            wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), 30, "the server to start")
            pid = int(pid_file.read_text().split()[0])
            wait_for((tmp_path / "server.pid.hanging").exists, 30, "the call to hang")
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    wait_for(lambda: not alive(pid), 10, "the MCP server to be gone")


def test_server_stderr_never_reaches_stdout_in_json_mode(tmp_path: Path, agent_dir: Path) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(agent_dir, pid_file)
    fake = FakeLLM()
    fake.script(
        [Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 1, "b": 2}})]), Reply([text("3")])]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = start_cli([*MODEL, "-e", "mcp", "--mode", "json", "add"], tmp_path)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert all(json.loads(line) for line in lines)  # only protocol lines
    assert "demo server starting" not in out and "demo server starting" not in err
    assert any('"3"' in line or "'3'" in line for line in lines if "tool_execution_end" in line)
    assert not alive(int(pid_file.read_text().split()[0]))  # a clean exit stops it too


def test_a_run_ends_promptly_after_a_server_that_printed_garbage_and_leaves_it_dead(
    tmp_path: Path, agent_dir: Path
) -> None:
    # The server ignores its closed stdin (it sleeps); it used to cost ~6 s of waiting for a start that
    # could not finish, then 2 s before SIGTERM. Timed from the tool call to the process's exit.
    pid_file = tmp_path / "garbage.pid"
    script = (
        "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid()));"
        "print('Welcome to my server!', flush=True); time.sleep(60)"
    )
    server = {"command": sys.executable, "args": ["-c", script, str(pid_file)], "timeout": 50}
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"noisy": server}}))
    fake = FakeLLM()
    fake.script([Reply([tool_call("mcp", {"tool": "noisy/x", "args": {}})]), Reply([text("done")])])
    with fake.serve() as llm:
        write_models_json(agent_dir, llm)
        proc = start_cli([*MODEL, "-e", "mcp", "--mode", "json", "go"], tmp_path)
        assert proc.stdout is not None
        called = None
        for line in proc.stdout:
            if called is None and '"tool_execution_start"' in line:
                called = time.monotonic()
        proc.wait(timeout=30)
        ended = time.monotonic()
        _, err = proc.communicate()
    assert proc.returncode == 0, err
    assert called is not None
    # ~0.7 s on a quiet machine, up to ~2.7 s seen at load 13; the old wait was ~8 s.
    assert ended - called < 5.0
    assert not alive(int(pid_file.read_text()))


def _imported_modules(args: list[str], cwd: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "pi_tui", *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")
    }


def test_the_sdk_is_not_imported_while_no_server_is_configured_or_enabled(
    tmp_path: Path, agent_dir: Path
) -> None:
    args = ["--provider", "faux", "-e", "mcp", "-p", "hi"]
    loaded = _imported_modules(args, tmp_path)
    assert "pi_tui" in loaded and not {"mcp", "mcp_types"} & loaded  # loaded, nothing configured
    pid_file = tmp_path / "server.pid"
    write_config(agent_dir, pid_file)
    config = json.loads((agent_dir / "mcp.json").read_text())
    config["mcpServers"]["demo"]["enabled"] = False
    (agent_dir / "mcp.json").write_text(json.dumps(config))
    assert not {"mcp", "mcp_types"} & _imported_modules(args, tmp_path)  # configured but disabled
    # Enabled and lazy, in a print run: the SDK is imported in the background once a request goes out
    # to a model (its wait is the time to spare); the faux provider sends none, so nothing is imported
    # at all, and the server is not started while nobody uses it.
    write_config(agent_dir, pid_file)
    assert not {"mcp", "mcp_types", "pydantic"} & _imported_modules(args, tmp_path)
    assert not pid_file.exists()


def test_a_login_outcome_in_print_mode_reaches_stderr_once(tmp_path: Path, agent_dir: Path) -> None:
    """Print mode writes extension notices to stderr itself; the login's outcome is not written twice."""
    write_config(agent_dir, tmp_path / "server.pid")
    proc = start_cli(["--provider", "faux", "-e", "mcp", "-p", "/mcp login demo"], tmp_path)
    _, err = proc.communicate(timeout=60)
    assert err.count("runs locally") == 1, err
    assert "[error] MCP server demo runs locally" in err
