from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.resources.loader import ResourceLoader
from pi_tui.resources.settings import SettingsManager
from tests.resources.skill_helpers import write_skill


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / ".git").mkdir()  # keeps the .agents/skills walk inside the test tree
    return path


def test_empty_dirs_give_empty_resources(cwd: Path, agent_dir: Path) -> None:
    loader = ResourceLoader(cwd, agent_dir, project_trusted=True)
    assert loader.context_files == []
    assert loader.skills == []
    assert loader.templates == []
    assert loader.system_prompt is None
    assert loader.append_system_prompt is None
    assert loader.warnings == []


def test_trusted_project_loads_everything(cwd: Path, agent_dir: Path) -> None:
    write(agent_dir / "AGENTS.md", "global rules")
    write(cwd / "AGENTS.md", "project rules")
    write_skill(cwd / ".pi" / "skills", "project-skill")
    write_skill(agent_dir / "skills", "user-skill")
    write(cwd / ".pi" / "prompts" / "fix.md", "Fix $1")
    write(agent_dir / "prompts" / "review.md", "Review")
    write(cwd / ".pi" / "SYSTEM.md", "project system")
    write(agent_dir / "APPEND_SYSTEM.md", "appended")
    loader = ResourceLoader(cwd, agent_dir, project_trusted=True)
    assert [f.content for f in loader.context_files] == ["global rules", "project rules"]
    assert [s.name for s in loader.skills] == ["project-skill", "user-skill"]
    assert [t.name for t in loader.templates] == ["fix", "review"]
    assert loader.system_prompt == "project system"
    assert loader.append_system_prompt == "appended"


def test_untrusted_project_keeps_context_files_but_drops_project_config(cwd: Path, agent_dir: Path) -> None:
    write(cwd / "AGENTS.md", "project rules")
    write_skill(cwd / ".pi" / "skills", "project-skill")
    write_skill(cwd / ".agents" / "skills", "agents-skill")
    write(cwd / ".pi" / "prompts" / "fix.md", "Fix")
    write(cwd / ".pi" / "SYSTEM.md", "project system")
    write(agent_dir / "SYSTEM.md", "agent system")
    loader = ResourceLoader(cwd, agent_dir, project_trusted=False)
    assert [f.content for f in loader.context_files] == ["project rules"]
    assert loader.skills == []
    assert loader.templates == []
    assert loader.system_prompt == "agent system"


def test_cli_flags_win_and_name_files(cwd: Path, agent_dir: Path) -> None:
    write(agent_dir / "SYSTEM.md", "agent system")
    write(cwd / "custom.md", "from file")
    loader = ResourceLoader(
        cwd, agent_dir, project_trusted=True, system_prompt="custom.md", append_system_prompt="literal"
    )
    assert loader.system_prompt == "from file"
    assert loader.append_system_prompt == "literal"


def test_no_skills_still_loads_explicit_skill_paths(cwd: Path, agent_dir: Path) -> None:
    write_skill(agent_dir / "skills", "auto-skill")
    write_skill(cwd / "extra", "cli-skill")
    loader = ResourceLoader(cwd, agent_dir, no_skills=True, skill_paths=["extra"], project_trusted=True)
    assert [s.name for s in loader.skills] == ["cli-skill"]


def test_no_prompt_templates_still_loads_explicit_paths(cwd: Path, agent_dir: Path) -> None:
    write(agent_dir / "prompts" / "auto.md", "Auto")
    write(cwd / "mine.md", "Mine")
    loader = ResourceLoader(cwd, agent_dir, no_prompt_templates=True, template_paths=["mine.md"])
    assert [t.name for t in loader.templates] == ["mine"]


def test_settings_paths_resolve_against_their_settings_dir(cwd: Path, agent_dir: Path) -> None:
    write_skill(agent_dir / "my-skills", "global-listed")
    write_skill(cwd / ".pi" / "team-skills", "project-listed")
    write(agent_dir / "my-prompts" / "g.md", "G")
    write(agent_dir / "settings.json", json.dumps({"skills": ["my-skills"], "prompts": ["my-prompts"]}))
    write(cwd / ".pi" / "settings.json", json.dumps({"skills": ["team-skills"]}))
    settings = SettingsManager(agent_dir, cwd)
    trusted = ResourceLoader(cwd, agent_dir, settings, project_trusted=True)
    assert sorted(s.name for s in trusted.skills) == ["global-listed", "project-listed"]
    assert [t.name for t in trusted.templates] == ["g"]
    untrusted = ResourceLoader(cwd, agent_dir, settings, project_trusted=False)
    assert [s.name for s in untrusted.skills] == ["global-listed"]


def test_settings_exclusions_and_globs(cwd: Path, agent_dir: Path) -> None:
    write_skill(agent_dir / "skills", "keep-me")
    write_skill(agent_dir / "skills", "drop-me")
    write_skill(agent_dir / "packs" / "one", "pack-one")
    write_skill(agent_dir / "packs" / "two", "pack-two")
    write(
        agent_dir / "settings.json",
        json.dumps({"skills": ["!skills/drop-me", "+packs/*", "-packs/two/*"]}),
    )
    loader = ResourceLoader(cwd, agent_dir, project_trusted=True)
    assert sorted(s.name for s in loader.skills) == ["keep-me", "pack-one"]


def test_diagnostics_collect_skill_and_settings_problems(cwd: Path, agent_dir: Path) -> None:
    write_skill(agent_dir / "skills", "no-description", description=None)
    write(agent_dir / "settings.json", "{broken")
    loader = ResourceLoader(cwd, agent_dir, project_trusted=True)
    kinds = {d.resource_type for d in loader.diagnostics}
    assert kinds == {"skill", "settings"}
    assert any("description is required" in warning for warning in loader.warnings)


def test_reload_sees_new_files(cwd: Path, agent_dir: Path) -> None:
    loader = ResourceLoader(cwd, agent_dir, project_trusted=True)
    assert loader.skills == []
    write_skill(agent_dir / "skills", "late-skill")
    assert loader.skills == []
    loader.reload()
    assert [s.name for s in loader.skills] == ["late-skill"]


def test_extend_resources_adds_paths_that_survive_reload(cwd: Path, agent_dir: Path) -> None:
    write_skill(cwd / "ext-skills", "ext-skill")
    write(cwd / "ext-prompts" / "ext.md", "Ext")
    loader = ResourceLoader(cwd, agent_dir, project_trusted=True)
    loader.extend_resources(skill_paths=[cwd / "ext-skills"], template_paths=[cwd / "ext-prompts"])
    loader.reload()
    assert [s.name for s in loader.skills] == ["ext-skill"]
    assert [t.name for t in loader.templates] == ["ext"]


def test_importing_the_resources_layer_stays_light() -> None:
    code = (
        "import sys, pi_tui.resources.loader, pi_tui.resources.system_prompt\n"
        "heavy = [m for m in ('textual', 'pydantic', 'anthropic', 'openai', 'rich', 'yaml') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert result.stdout.strip() == ""
