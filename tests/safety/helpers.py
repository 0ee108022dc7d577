from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODEL = ["--model", "fake-anthropic/claude-fake"]


def start_cli(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.Popen(
        [sys.executable, "-m", "pi_tui", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(predicate: object, timeout: float, what: str) -> None:
    """Poll ``predicate`` (a callable) until it is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting to be reaped by init counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def session_lines(agent_dir: Path) -> list[dict[str, object]]:
    """Every line of the one session file, parsed (fails on a line that is not JSON)."""
    (path,) = list((agent_dir / "sessions").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]
