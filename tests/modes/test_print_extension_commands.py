"""Extension commands given to ``-p``: they run without a model call, their notices go to stderr."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.testing import FakeLLM

from ..e2e.helpers import run_cli

EXTENSION = """
def register(pi):
    async def hello(args, ctx):
        ctx.ui.notify("hello " + args, "info")
        ctx.ui.notify("careful", "warning")

    def broken(args, ctx):
        raise RuntimeError("the login server is down")

    pi.register_command("hello", handler=hello)
    pi.register_command("broken", handler=broken)
"""

MODEL = ["--provider", "fake-anthropic", "--model", "claude-fake"]


def _extension(tmp_path: Path) -> str:
    path = tmp_path / "hello_ext.py"
    path.write_text(EXTENSION)
    return str(path)


def test_extension_command_is_a_successful_run_with_notices_on_stderr(tmp_path: Path, fake: FakeLLM) -> None:
    run = run_cli([*MODEL, "-e", _extension(tmp_path), "-p", "/hello world"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert "[info] hello world\n" in run.stderr
    assert "[warning] careful\n" in run.stderr
    assert "Error" not in run.stderr
    assert fake.requests == []


def test_extension_command_in_json_mode_keeps_stdout_json(tmp_path: Path, fake: FakeLLM) -> None:
    run = run_cli([*MODEL, "-e", _extension(tmp_path), "--mode", "json", "-p", "/hello world"], tmp_path)
    assert run.returncode == 0, run.stderr
    for line in run.stdout.splitlines():
        json.loads(line)
    assert "[info] hello world\n" in run.stderr
    assert fake.requests == []


def test_failing_extension_command_exits_1_with_its_error(tmp_path: Path, fake: FakeLLM) -> None:
    run = run_cli([*MODEL, "-e", _extension(tmp_path), "-p", "/broken"], tmp_path)
    assert run.returncode == 1
    assert "the login server is down" in run.stderr
    assert "produced no answer" not in run.stderr
    assert run.stdout == ""
    assert fake.requests == []
