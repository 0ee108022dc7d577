from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .pi087 import NODE_PACKAGE, PI_PACKAGE, Pi087

REPO = Path(__file__).resolve().parents[1]
NEEDS_PI = """
from tests.pi087 import require_pi

def test_needs_pi() -> None:
    assert require_pi().present()
"""


def _run_pytest(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """Runs a test that needs pi in a fresh pytest process; returns its short summary lines."""
    (tmp_path / "test_needs_pi.py").write_text(NEEDS_PI)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "test_needs_pi.py"],
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=50,
    )
    return [
        line
        for line in run.stdout.splitlines()
        if line.split(" ")[0] in ("PASSED", "SKIPPED", "ERROR", "FAILED")
    ]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST", "PI087_DIR", "CI")}
    return env | {"PI087_CACHE": str(tmp_path / "cache")} | extra


@pytest.mark.slow
def test_in_ci_a_failed_pi_install_fails_the_test_with_npms_error_on_one_line(tmp_path: Path) -> None:
    [line] = _run_pytest(tmp_path, _env(tmp_path, CI="true", npm_config_registry="http://127.0.0.1:9/"))
    assert line.startswith("FAILED ")
    assert PI_PACKAGE in line and NODE_PACKAGE in line and "ECONNREFUSED" in line
    assert not (tmp_path / "cache").exists()  # a failed install leaves no folder that looks installed


@pytest.mark.slow
def test_without_npm_outside_ci_the_test_is_skipped_saying_how_to_install(tmp_path: Path) -> None:
    [line] = _run_pytest(tmp_path, _env(tmp_path, PATH=str(Path(sys.executable).parent)))
    assert line.startswith("SKIPPED ")
    assert f"npm install --prefix {tmp_path / 'cache'} {PI_PACKAGE} {NODE_PACKAGE}" in line


def test_pi087_dir_names_the_install_to_use(pi087: Pi087, monkeypatch: pytest.MonkeyPatch) -> None:
    from . import pi087 as helper

    monkeypatch.setenv("PI087_DIR", str(pi087.dir))
    assert helper.install() == pi087
    assert pi087.pi_ai_dist.joinpath("api", "anthropic-messages.js").is_file()
    version = subprocess.run(pi087.argv("--version"), env=pi087.env(), capture_output=True, text=True)
    assert version.stdout.strip() == "0.87.1"
