"""Project trust shared with pi 0.87.1 through ``<agent dir>/trust.json``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pi_tui.resources.settings import SettingsManager
from pi_tui.resources.trust_store import ProjectTrustStore
from pi_tui.testing import FakeLLM, Reply, text

from ..e2e.helpers import write_models_json
from ..pi087 import Pi087


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "work" / "proj"
    (project / ".pi").mkdir(parents=True)
    return project.resolve()


def test_a_decision_saved_by_pi_is_honoured_closest_first(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path)
    # as pi writes it: sorted keys, two-space indent, canonical paths
    (agent_dir / "trust.json").write_text(
        json.dumps({str(project.parent): True, str(project): False}, indent=2) + "\n"
    )
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert settings.is_project_trusted(project) is False  # the closest decision wins
    assert settings.is_project_trusted(project.parent / "other") is True  # the parent's decision


def test_pi_s_false_beats_pi_tui_s_trusted_projects_and_true_needs_no_entry(
    tmp_path: Path, agent_dir: Path
) -> None:
    project = _project(tmp_path)
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)]}))
    store = ProjectTrustStore(agent_dir)
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert settings.is_project_trusted(project)
    store.set(project, False)
    assert not settings.is_project_trusted(project)
    store.set(project, None)
    assert settings.is_project_trusted(project)
    assert json.loads((agent_dir / "trust.json").read_text()) == {}


def test_trusting_in_pi_tui_writes_pi_s_file_and_untrusting_writes_do_not_trust(
    tmp_path: Path, agent_dir: Path
) -> None:
    project = _project(tmp_path)
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    settings.trust_project(project)
    assert (agent_dir / "trust.json").read_text() == json.dumps({str(project): True}, indent=2) + "\n"
    assert not (agent_dir / "trust.json.lock").exists()  # the lock directory is released
    settings.untrust_project(project)
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project): False}
    assert not settings.is_project_trusted(project)


def test_default_project_trust_always_from_the_global_file_only(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path)
    (project / ".pi" / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    assert not SettingsManager(agent_dir, project, project_trusted=False).is_project_trusted(project)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    assert SettingsManager(agent_dir, project, project_trusted=False).is_project_trusted(project)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "never"}))
    assert not SettingsManager(agent_dir, project, project_trusted=False).is_project_trusted(project)


def test_a_broken_trust_file_is_no_decision_and_is_never_rewritten(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path)
    (agent_dir / "trust.json").write_text('{"/x": "yes"')
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert not settings.is_project_trusted(project)
    settings.trust_project(project)  # pi-tui's own list still records it
    assert settings.is_project_trusted(project)
    assert (agent_dir / "trust.json").read_text() == '{"/x": "yes"'
    assert any("trust store" in e for e in settings.errors)


@pytest.mark.slow
def test_pi_0_87_1_loads_project_resources_once_pi_tui_trusted_the_project(
    tmp_path: Path, agent_dir: Path, pi087: Pi087
) -> None:
    project = _project(tmp_path)
    (project / ".pi" / "APPEND_SYSTEM.md").write_text("PROJECT ADDENDUM MARKER")
    env = pi087.env()
    argv = pi087.argv("--model", "fake-anthropic/claude-fake", "-p", "hi")
    fake = FakeLLM()
    fake.script([Reply([text("a")]), Reply([text("b")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        before = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
        SettingsManager(agent_dir, project, project_trusted=False).trust_project(project)
        after = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert before.returncode == 0 and after.returncode == 0, before.stderr + after.stderr
    first, second = (json.dumps(r.body["system"]) for r in fake.requests)
    assert "PROJECT ADDENDUM MARKER" not in first
    assert "PROJECT ADDENDUM MARKER" in second
