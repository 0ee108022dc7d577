from __future__ import annotations

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


@pytest.mark.slow
@pytest.mark.timeout(300)  # a clean clone starts with a cold mypy cache
def test_mypy_finds_no_type_errors_in_pi_tui(tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.mktemp("mypy-cache")
    # The bundled MCP extension too: it is typed against the MCP SDK's own types.
    result = _run("mypy", "--cache-dir", str(cache), "pi_tui", "extensions/mcp")
    assert result.returncode == 0, result.stdout + result.stderr
