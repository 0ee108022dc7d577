"""Which projects have something that loads only once trusted (pi 0.87's check), and what a settings
manager then reports about trust without loading anything more."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.resources.settings import SettingsManager
from pi_tui.resources.trust_store import has_trust_requiring_resources


@pytest.mark.parametrize(
    "entry", ["settings.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"]
)
def test_each_gated_pi_entry_needs_trust(tmp_path: Path, entry: str) -> None:
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    assert not has_trust_requiring_resources(project)
    target = project / ".pi" / entry
    if "." in entry:
        target.write_text("{}\n")
    else:
        target.mkdir()
    assert has_trust_requiring_resources(project)


def test_context_files_and_other_pi_files_need_no_trust(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".pi" / "sessions").mkdir(parents=True)
    (project / "AGENTS.md").write_text("notes\n")
    (project / "CLAUDE.md").write_text("notes\n")
    assert not has_trust_requiring_resources(project)


def test_agents_skills_above_the_project_need_trust_but_the_users_own_do_not(tmp_path: Path) -> None:
    home = Path.home()  # the test's own temporary home (conftest)
    project = home / "code" / "proj"
    project.mkdir(parents=True)
    (home / ".agents" / "skills").mkdir(parents=True)
    assert not has_trust_requiring_resources(project)
    assert not has_trust_requiring_resources(home)  # even when the project is the home folder
    (home / "code" / ".agents" / "skills").mkdir(parents=True)
    assert has_trust_requiring_resources(project)


def test_nothing_needs_trust_reports_without_loading_the_project(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    project = tmp_path / "proj"
    project.mkdir()
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert settings.nothing_needs_trust()
    assert settings.project_trusted is False  # the manager still reads no project file
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text('{"shellCommandPrefix": "set -x"}\n')
    assert not settings.nothing_needs_trust()
    assert settings.shell_command_prefix != "set -x"


def test_no_approve_wins_over_having_nothing_to_trust(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    settings = SettingsManager(tmp_path / "agent", project, project_trusted=False)
    settings.override_project_trust(False)
    assert not settings.nothing_needs_trust()
