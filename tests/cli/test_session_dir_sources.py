"""Where sessions are stored: ``--session-dir``, then ``PI_CODING_AGENT_SESSION_DIR``, then ``sessionDir``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..e2e.helpers import run_cli


def _sessions(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.jsonl")) if folder.exists() else []


def test_environment_variable_moves_session_storage(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "env-sessions"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(store))
    run = run_cli(["--provider", "faux", "-p", "hello"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert len(_sessions(store)) == 1
    assert _sessions(agent_dir / "sessions") == []


def test_setting_moves_session_storage_and_continue_finds_it(tmp_path: Path, agent_dir: Path) -> None:
    store = tmp_path / "setting-sessions"
    (agent_dir / "settings.json").write_text(json.dumps({"sessionDir": str(store)}))
    assert run_cli(["--provider", "faux", "-p", "hello"], tmp_path).returncode == 0
    assert len(_sessions(store)) == 1
    run = run_cli(["--provider", "faux", "-c", "-p", "again"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert len(_sessions(store)) == 1  # the same session was continued
    assert _sessions(agent_dir / "sessions") == []


def test_flag_beats_environment_which_beats_setting(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"sessionDir": str(tmp_path / "from-setting")}))
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "from-env"))
    assert run_cli(["--provider", "faux", "-p", "one"], tmp_path).returncode == 0
    assert len(_sessions(tmp_path / "from-env")) == 1
    assert _sessions(tmp_path / "from-setting") == []
    run = run_cli(["--provider", "faux", "--session-dir", str(tmp_path / "from-flag"), "-p", "two"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert len(_sessions(tmp_path / "from-flag")) == 1
    assert len(_sessions(tmp_path / "from-env")) == 1
