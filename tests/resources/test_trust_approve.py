"""pi 0.79's --approve / --no-approve: project trust decided for one run, nothing saved."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.resources.settings import SettingsManager
from pi_tui.runtime.factory import _load_settings


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(json.dumps({"shellCommandPrefix": "set -x"}))
    return project.resolve()


def test_flags_parse() -> None:
    assert parse_args([]).approve is None
    assert parse_args(["-a", "hi"]).approve is True
    assert parse_args(["--approve"]).approve is True
    assert parse_args(["-na"]).approve is False
    assert parse_args(["--no-approve", "hi"]).messages == ["hi"]


def test_approve_trusts_this_run_without_saving(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path)
    warnings: list[str] = []
    settings = _load_settings(parse_args(["--approve"]), agent_dir, project, warnings)
    assert settings.is_project_trusted(project) and settings.shell_command_prefix == "set -x"
    assert warnings == []
    assert not (agent_dir / "trust.json").exists()  # nothing saved: the next run asks again
    assert SettingsManager(agent_dir, project, project_trusted=False).is_project_trusted(project) is False


def test_no_approve_beats_a_saved_trust(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path)
    (agent_dir / "trust.json").write_text(json.dumps({str(project): True}, indent=2) + "\n")
    warnings: list[str] = []
    settings = _load_settings(parse_args(["--no-approve", "--trust-project"]), agent_dir, project, warnings)
    assert settings.is_project_trusted(project) is False
    assert settings.is_project_trusted(project / "sub") is False
    assert settings.shell_command_prefix is None
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project): True}  # left as it was
