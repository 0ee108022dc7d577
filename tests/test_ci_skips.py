"""A skip under CI=true fails the run; elsewhere it stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SAMPLE = """
import pytest

def test_needs_something_missing():
    pytest.skip("the thing is not installed")

@pytest.mark.xfail(reason="known")
def test_known_failure():
    assert False

def test_fine():
    assert True
"""


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST")}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.ci_skips",
            "-o",
            "addopts=",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_sample.py"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )


def test_a_skip_fails_under_ci(tmp_path: Path) -> None:
    result = _run(tmp_path, "true")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "skipped under CI=true" in result.stdout
    assert "the thing is not installed" in result.stdout
    assert "1 failed, 1 passed, 1 xfailed" in result.stdout


def test_a_skip_stays_a_skip_elsewhere(tmp_path: Path) -> None:
    result = _run(tmp_path, None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped, 1 xfailed" in result.stdout
