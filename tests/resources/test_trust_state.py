"""Which projects have something that loads only once trusted (pi 0.87's check, plus the files loaded
extensions name), and the three states kept apart: trusted by a decision (what loading follows),
nothing to trust (reported trusted, loads nothing more), untrusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.resources.settings import SettingsManager
from pi_tui.resources.trust_store import TrustState, has_trust_requiring_resources, trust_requiring_paths


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


def test_context_files_sessions_and_mcp_files_alone_need_no_trust(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".pi" / "sessions").mkdir(parents=True)
    for name in ("AGENTS.md", "CLAUDE.md", ".mcp.json", ".pi/mcp.json"):
        (project / name).write_text("{}\n")
    assert not has_trust_requiring_resources(project)
    # an extension that reads them only once trusted names them: then they count
    assert has_trust_requiring_resources(project, [".pi/mcp.json"])
    assert trust_requiring_paths(project, [".mcp.json", ".pi/mcp.json"]) == [
        project.resolve() / ".mcp.json",
        project.resolve() / ".pi" / "mcp.json",
    ]


def test_agents_skills_above_the_project_need_trust_but_the_users_own_do_not(tmp_path: Path) -> None:
    home = Path.home()  # the test's own temporary home (conftest)
    project = home / "code" / "proj"
    project.mkdir(parents=True)
    (home / ".agents" / "skills").mkdir(parents=True)
    assert not has_trust_requiring_resources(project)
    assert not has_trust_requiring_resources(home)
    (home / "code" / ".agents" / "skills").mkdir(parents=True)
    assert has_trust_requiring_resources(project)


def test_the_three_states(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    project = tmp_path / "proj"
    project.mkdir()
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert settings.trust_state() is TrustState.NOTHING_TO_TRUST
    assert settings.trust_state().reported_trusted
    assert settings.trust_decision() is None
    assert not settings.is_project_trusted()  # what loading follows: no decision trusts it
    assert settings.trust_state(extra=[".mcp.json"]) is TrustState.NOTHING_TO_TRUST
    (project / ".mcp.json").write_text("{}\n")
    assert settings.trust_state(extra=[".mcp.json"]) is TrustState.UNTRUSTED
    assert not TrustState.UNTRUSTED.reported_trusted
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text('{"shellCommandPrefix": "set -x"}\n')
    assert settings.trust_state() is TrustState.UNTRUSTED
    assert settings.shell_command_prefix != "set -x"  # reporting read nothing of the project
    settings.trust_project()
    assert settings.trust_state() is TrustState.TRUSTED


def test_no_approve_leaves_nothing_to_trust_untrusted_and_approve_trusts(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    settings = SettingsManager(tmp_path / "agent", project, project_trusted=False)
    settings.override_project_trust(False)
    assert settings.trust_state() is TrustState.UNTRUSTED
    settings.override_project_trust(True)
    assert settings.trust_state() is TrustState.TRUSTED


def test_trust_decision_follows_default_project_trust(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    for value, decision in (("always", True), ("never", False), ("ask", None)):
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": value}))
        assert SettingsManager(agent_dir, project, project_trusted=False).trust_decision() is decision
