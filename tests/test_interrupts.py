from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# What a program the tests start finds as its SIGINT disposition.
CHILDS_SIGINT = """
import signal
import subprocess
import sys


def test_a_started_program_takes_ctrl_c() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT))"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "default_int_handler" in out, out
"""


@pytest.mark.slow
def test_programs_started_by_tests_take_ctrl_c_when_pytest_began_with_it_ignored(tmp_path: Path) -> None:
    # as a script's background job starts pytest: SIGINT ignored, inherited by what it starts
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.interrupts"]\n')
    (tmp_path / "test_child.py").write_text(CHILDS_SIGINT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_XDIST_WORKER", None)
    runner = (
        "import signal, sys, pytest; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "sys.exit(pytest.main(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", runner, "-p", "no:cacheprovider", "-p", "no:xdist", "--rootdir", str(tmp_path),
         "test_child.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=50, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # and so does this suite
