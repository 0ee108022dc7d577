from __future__ import annotations

import fcntl
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
# dependencies changed, and reads the others from the cache.
# Cold, the check took 14 s of CPU (60-140 s of one worker at load 14); warm, 0.5 s.
# The files are named by absolute path: mypy trusts a cached module without reading it again when its
# path, size and modification second match the cache's, and with relative paths another checkout's
# file of the same size, written in the same second (a rebase in each), passed for this one: its types
# came from the other version ("AgentSession has no attribute ..." for an attribute it has). With this
# checkout's own path a cache written by another checkout is checked by the file's hash.
# One mypy at a time uses the cache (a lock beside it): a module's record and its types are separate
# entries, and a run reading while another checkout's run writes could pair one's record with the
# other's types, which no hash check catches.
MYPY_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-tui" / "mypy"


@pytest.mark.slow
@pytest.mark.timeout(300)  # a machine's first run starts with a cold mypy cache
def test_mypy_finds_no_type_errors_in_pi_tui() -> None:
    # The bundled MCP extension too: it is typed against the MCP SDK's own types.
    MYPY_CACHE.mkdir(parents=True, exist_ok=True)
    with (MYPY_CACHE.parent / "mypy.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        result = _run(
            "mypy", "--cache-dir", str(MYPY_CACHE), str(REPO / "pi_tui"), str(REPO / "extensions" / "mcp")
        )
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
