from __future__ import annotations

import json
from pathlib import Path

from ..e2e.helpers import run_cli


def _project_with_settings(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".pi").mkdir(parents=True)
    (repo / ".pi" / "settings.json").write_text(
        json.dumps({"defaultProvider": "faux", "defaultModel": "faux-1"})
    )
    return repo


def test_untrusted_project_settings_are_ignored_and_the_user_is_told(tmp_path: Path, agent_dir: Path) -> None:
    repo = _project_with_settings(tmp_path)
    run = run_cli(["-p", "hi"], repo)
    assert run.returncode == 1  # the project's default model was not honoured: no model with a key
    assert "not trusted" in run.stderr and "--trust-project" in run.stderr
    assert "--approve" in run.stderr and "/trust " not in run.stderr  # print mode has no /trust


def test_trust_project_is_recorded_globally_and_enables_project_settings(
    tmp_path: Path, agent_dir: Path
) -> None:
    repo = _project_with_settings(tmp_path)
    run = run_cli(["--trust-project", "-p", "hi"], repo)
    assert run.returncode == 0, run.stderr
    assert "faux provider" in run.stdout
    trusted = json.loads((agent_dir / "settings.json").read_text())["trustedProjects"]
    assert str(repo.resolve()) in trusted
    again = run_cli(["-p", "hi"], repo)  # remembered: no flag needed any more
    assert again.returncode == 0 and "not trusted" not in again.stderr
