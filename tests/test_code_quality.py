from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_ruff_reports_nothing_in_the_code_tests_and_extensions() -> None:
    result = _run("ruff", "check", "--no-cache", "pi_tui", "tests", "bench", "extensions")
    assert result.returncode == 0, result.stdout + result.stderr


# mypy's incremental cache, outside the checkout (read here, before the tests' temporary HOME) and shared
# by every checkout and clean clone on the machine: mypy checks again each module whose source or
# dependencies changed (a file's hash decides, whatever its path), and reads the others from the cache.
# Cold, the check took 14 s of CPU (60-140 s of one worker at load 14); warm, 0.5 s.
MYPY_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-tui" / "mypy"


@pytest.mark.slow
@pytest.mark.timeout(300)  # a machine's first run starts with a cold mypy cache
def test_mypy_finds_no_type_errors_in_pi_tui() -> None:
    # The bundled MCP extension too: it is typed against the MCP SDK's own types.
    result = _run("mypy", "--cache-dir", str(MYPY_CACHE), "pi_tui", "extensions/mcp")
    assert result.returncode == 0, result.stdout + result.stderr


# The structural guards: layers, private reaches, lookups by name and the typing ratchet, UI libraries.
# Their own files run with the suite; they run here too because landing runs this file (and a guard
# that only the whole suite runs is found broken after the landing, by everyone else).
GUARDS = (
    "tests/test_layers.py",
    "tests/test_private_access.py",
    "tests/test_typing_ratchet.py",
    "tests/test_ui_libraries.py",
)
GUARDS_TEST = "tests/test_code_quality.py::test_the_structural_guards_pass"
"""Left out of a run that has the guards' own files (tests/conftest.py): they would run twice."""


@pytest.mark.slow
@pytest.mark.timeout(300)  # four files of guards, each parsing the whole package
def test_the_structural_guards_pass() -> None:
    result = _run("pytest", *GUARDS, "-q", "-n", "0", "-p", "no:cacheprovider")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
