from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_tui.resources.skills import (
    Skill,
    SkillError,
    default_skill_dirs,
    expand_skill_command,
    format_skills_for_prompt,
    load_skill_file,
    load_skills,
    scan_skill_dir,
)
from tests.resources.skill_helpers import write_skill


def messages(diagnostics: list) -> list[str]:
    return [diagnostic.message for diagnostic in diagnostics]


def test_valid_skill_loads_with_its_metadata(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "valid-skill", name="valid-skill", description="Does valid things.")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert result.skills == [
        Skill("valid-skill", "Does valid things.", path, path.parent, "user", disable_model_invocation=False)
    ]
    assert result.diagnostics == []


def test_name_defaults_to_the_directory_name(tmp_path: Path) -> None:
    write_skill(tmp_path, "unnamed-skill")
    skill = scan_skill_dir(tmp_path, "user", include_root_files=False).skills[0]
    assert skill.name == "unnamed-skill"


def test_name_mismatch_warns_but_loads(tmp_path: Path) -> None:
    write_skill(tmp_path, "name-mismatch", name="different-name")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert [skill.name for skill in result.skills] == ["different-name"]
    assert messages(result.diagnostics) == [
        'name "different-name" does not match parent directory "name-mismatch"'
    ]
    assert result.diagnostics[0].kind == "warning"


def test_invalid_name_characters_warn_but_load(tmp_path: Path) -> None:
    write_skill(tmp_path, "Invalid_Name", name="Invalid_Name")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert len(result.skills) == 1
    assert any("invalid characters" in message for message in messages(result.diagnostics))


def test_long_name_warns_but_loads(tmp_path: Path) -> None:
    long_name = "a" * 65
    write_skill(tmp_path, long_name, name=long_name)
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert len(result.skills) == 1
    assert messages(result.diagnostics) == ["name exceeds 64 characters (65)"]


@pytest.mark.parametrize(
    ("directory", "expected"),
    [
        ("bad--name", "name must not contain consecutive hyphens"),
        ("-leading", "name must not start or end with a hyphen"),
        ("trailing-", "name must not start or end with a hyphen"),
    ],
)
def test_hyphen_rules_warn(tmp_path: Path, directory: str, expected: str) -> None:
    write_skill(tmp_path, directory)
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert len(result.skills) == 1
    assert expected in messages(result.diagnostics)


def test_missing_description_skips_the_skill_with_a_warning(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "missing-description", description=None)
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert result.skills == []
    assert messages(result.diagnostics) == ["skill skipped: description is required"]
    assert result.diagnostics[0].path == path


def test_blank_description_is_missing(tmp_path: Path) -> None:
    write_skill(tmp_path, "blank", description='"   "')
    assert scan_skill_dir(tmp_path, "user", include_root_files=False).skills == []


def test_skill_without_frontmatter_is_skipped(tmp_path: Path) -> None:
    skill_dir = tmp_path / "no-frontmatter"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text("# Just a heading\n", encoding="utf-8")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert result.skills == []
    assert messages(result.diagnostics) == ["skill skipped: description is required"]


def test_invalid_yaml_skips_the_skill_with_a_warning(tmp_path: Path) -> None:
    write_skill(tmp_path, "invalid-yaml", raw_frontmatter="name: invalid-yaml\ndescription: [unclosed")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert result.skills == []
    assert len(result.diagnostics) == 1
    assert result.diagnostics[0].message.startswith("skill skipped: invalid YAML")


def test_long_description_warns_but_loads(tmp_path: Path) -> None:
    write_skill(tmp_path, "wordy", description="x" * 1025)
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert len(result.skills) == 1
    assert messages(result.diagnostics) == ["description exceeds 1024 characters (1025)"]


def test_multiline_description_and_unknown_fields(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "multi",
        raw_frontmatter="description: |\n  First line.\n  Second line.\nlicense: MIT\ncustom-field: 1",
    )
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert result.skills[0].description == "First line.\nSecond line.\n"
    assert result.diagnostics == []


def test_disable_model_invocation_is_read_strictly(tmp_path: Path) -> None:
    write_skill(tmp_path, "hidden", extra="disable-model-invocation: true")
    write_skill(tmp_path, "stringly", extra='disable-model-invocation: "true"')
    skills = {skill.name: skill for skill in scan_skill_dir(tmp_path, "u", include_root_files=False).skills}
    assert skills["hidden"].disable_model_invocation is True
    assert skills["stringly"].disable_model_invocation is False


def test_nested_skills_are_found_and_nothing_below_a_skill_is_scanned(tmp_path: Path) -> None:
    write_skill(tmp_path, "group/child-skill")
    write_skill(tmp_path, "root-skill")
    write_skill(tmp_path, "root-skill/nested-child")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert sorted(skill.name for skill in result.skills) == ["child-skill", "root-skill"]


def test_root_markdown_files_count_only_in_explicit_dirs(tmp_path: Path) -> None:
    write_skill(tmp_path, ".", name="extra", file_name="extra.md")
    write_skill(tmp_path, "sub", file_name="not-a-skill.md")
    assert scan_skill_dir(tmp_path, "user", include_root_files=False).skills == []
    explicit = scan_skill_dir(tmp_path, "path", include_root_files=True)
    assert [skill.name for skill in explicit.skills] == ["extra"]
    assert explicit.diagnostics == []


def test_dot_dirs_node_modules_and_ignored_dirs_are_skipped(tmp_path: Path) -> None:
    write_skill(tmp_path, ".hidden/dot-skill")
    write_skill(tmp_path, "node_modules/dep-skill")
    write_skill(tmp_path, "ignored/ignored-skill")
    write_skill(tmp_path, "build-out/built-skill")
    write_skill(tmp_path, "kept/kept-skill")
    (tmp_path / ".gitignore").write_text("# comment\nignored/\n*-out\n", encoding="utf-8")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert [skill.name for skill in result.skills] == ["kept-skill"]


def test_ignore_files_in_subdirectories_and_negation(tmp_path: Path) -> None:
    write_skill(tmp_path, "group/drafts/draft-skill")
    write_skill(tmp_path, "group/keep-me")
    write_skill(tmp_path, "group/other")
    (tmp_path / "group" / ".ignore").write_text("*\n!keep-me\n", encoding="utf-8")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert [skill.name for skill in result.skills] == ["keep-me"]


def test_symlinked_skill_dirs_are_followed_and_deduplicated(tmp_path: Path) -> None:
    real_root = tmp_path / "real"
    write_skill(real_root, "linked-skill")
    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()
    os.symlink(real_root / "linked-skill", skills_dir / "linked-skill")
    os.symlink(tmp_path / "missing", skills_dir / "broken")
    result = load_skills(cwd=tmp_path, agent_dir=tmp_path / "agent", explicit_paths=[skills_dir, real_root])
    assert [skill.file_path for skill in result.skills] == [skills_dir / "linked-skill" / "SKILL.md"]
    assert [d for d in result.diagnostics if d.kind == "collision"] == []


def test_symlink_loops_do_not_recurse_forever(tmp_path: Path) -> None:
    (tmp_path / "loop").mkdir()
    os.symlink(tmp_path, tmp_path / "loop" / "back")
    write_skill(tmp_path, "only-skill")
    result = scan_skill_dir(tmp_path, "user", include_root_files=False)
    assert [skill.name for skill in result.skills] == ["only-skill"]


def test_first_skill_wins_a_name_collision_with_a_diagnostic(tmp_path: Path) -> None:
    first = write_skill(tmp_path / "first", "calendar", description="First calendar.")
    second = write_skill(tmp_path / "second", "calendar", description="Second calendar.")
    result = load_skills(
        cwd=tmp_path,
        agent_dir=tmp_path / "agent",
        explicit_paths=[tmp_path / "first", tmp_path / "second"],
    )
    assert [(skill.name, skill.description) for skill in result.skills] == [("calendar", "First calendar.")]
    collisions = [d for d in result.diagnostics if d.kind == "collision"]
    assert len(collisions) == 1
    assert collisions[0].path == second and collisions[0].winner_path == first
    assert collisions[0].message == 'name "calendar" collision'


def test_default_locations_project_first_then_user(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "repo"
    cwd = repo / "pkg" / "app"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    agent = tmp_path / "agent"
    dirs = default_skill_dirs(cwd, agent, include_project=True, home=isolated_home)
    assert dirs == [
        (cwd / ".pi" / "skills", "project"),
        (cwd / ".agents" / "skills", "project"),
        (repo / "pkg" / ".agents" / "skills", "project"),
        (repo / ".agents" / "skills", "project"),
        (agent / "skills", "user"),
        (isolated_home / ".agents" / "skills", "user"),
    ]


def test_agents_skills_walk_goes_to_filesystem_root_outside_a_repo(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    cwd.mkdir()
    home = tmp_path / "home"
    dirs = default_skill_dirs(cwd, tmp_path / "agent", include_project=True, home=home)
    project_dirs = [path for path, source in dirs if source == "project"]
    assert project_dirs[-1] == Path("/") / ".agents" / "skills"


def test_home_agents_skills_stays_user_scoped_when_the_walk_passes_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = home / "work"
    cwd.mkdir(parents=True)
    dirs = default_skill_dirs(cwd, tmp_path / "agent", include_project=True, home=home)
    assert (home / ".agents" / "skills", "project") not in dirs
    assert dirs[-1] == (home / ".agents" / "skills", "user")


def test_project_skills_win_over_user_skills_and_can_be_excluded(tmp_path: Path, isolated_home: Path) -> None:
    cwd = tmp_path / "project"
    agent = tmp_path / "agent"
    write_skill(cwd / ".pi" / "skills", "shared", description="Project version.")
    write_skill(agent / "skills", "shared", description="User version.")
    write_skill(isolated_home / ".agents" / "skills", "from-home")
    write_skill(cwd / ".agents" / "skills", "from-agents-dir")
    trusted = load_skills(cwd=cwd, agent_dir=agent, include_project=True)
    assert {skill.name: skill.description for skill in trusted.skills} == {
        "shared": "Project version.",
        "from-agents-dir": "A test skill.",
        "from-home": "A test skill.",
    }
    assert {skill.name: skill.source for skill in trusted.skills}["shared"] == "project"
    untrusted = load_skills(cwd=cwd, agent_dir=agent, include_project=False)
    assert {skill.name: skill.source for skill in untrusted.skills} == {"shared": "user", "from-home": "user"}


def test_auto_dirs_ignore_extra_markdown_files(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_skill(agent / "skills", ".", name="stray", file_name="stray.md")
    result = load_skills(cwd=tmp_path, agent_dir=agent, include_project=False)
    assert result.skills == []


def test_explicit_paths_load_without_defaults_and_expand_tilde(tmp_path: Path, isolated_home: Path) -> None:
    agent = tmp_path / "agent"
    write_skill(agent / "skills", "default-skill")
    write_skill(isolated_home / "my-skills", "tilde-skill")
    single = write_skill(tmp_path / "single", ".", name="single", file_name="single.md")
    result = load_skills(
        cwd=tmp_path,
        agent_dir=agent,
        include_defaults=False,
        explicit_paths=["~/my-skills", single, "missing-dir", tmp_path / "single"],
    )
    assert [(skill.name, skill.source) for skill in result.skills] == [
        ("tilde-skill", "path"),
        ("single", "path"),
    ]
    assert "skill path does not exist" in messages(result.diagnostics)


def test_explicit_non_markdown_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    result = load_skills(cwd=tmp_path, agent_dir=tmp_path / "agent", explicit_paths=["notes.txt"])
    assert messages(result.diagnostics) == ["skill path is not a markdown file"]


def test_load_skill_file_for_a_root_markdown_file_defaults_to_its_stem(tmp_path: Path) -> None:
    path = write_skill(tmp_path, ".", file_name="my-helper.md")
    skill, diagnostics = load_skill_file(path, "path")
    assert skill is not None and skill.name == "my-helper"
    assert diagnostics == []


def make_skill(name: str, description: str, path: str, *, hidden: bool = False) -> Skill:
    file_path = Path(path)
    return Skill(name, description, file_path, file_path.parent, "user", hidden)


def test_prompt_block_format_is_exact() -> None:
    block = format_skills_for_prompt([make_skill("pdf", "Work with PDFs.", "/s/pdf/SKILL.md")])
    assert block == (
        "\n\nThe following skills provide specialized instructions for specific tasks.\n"
        "Use the read tool to load a skill's file when the task matches its description.\n"
        "When a skill file references a relative path, resolve it against the skill directory "
        "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"
        "\n"
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>pdf</name>\n"
        "    <description>Work with PDFs.</description>\n"
        "    <location>/s/pdf/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>"
    )


def test_prompt_block_escapes_xml() -> None:
    block = format_skills_for_prompt([make_skill("a&b", "Use <tags> & \"quotes\" 'too'", "/s/a&b/SKILL.md")])
    assert "<name>a&amp;b</name>" in block
    assert "<description>Use &lt;tags&gt; &amp; &quot;quotes&quot; &apos;too&apos;</description>" in block
    assert "<location>/s/a&amp;b/SKILL.md</location>" in block


def test_prompt_block_hides_disabled_skills_and_is_empty_without_visible_ones() -> None:
    hidden = make_skill("secret", "Hidden.", "/s/secret/SKILL.md", hidden=True)
    assert format_skills_for_prompt([hidden]) == ""
    assert format_skills_for_prompt([]) == ""
    visible = make_skill("shown", "Shown.", "/s/shown/SKILL.md")
    block = format_skills_for_prompt([hidden, visible])
    assert "secret" not in block and "<name>shown</name>" in block


def test_skill_command_expands_body_without_frontmatter(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "pdf", body="Use pdftotext.\n\nThen summarise.")
    skills = scan_skill_dir(tmp_path, "user", include_root_files=False).skills
    assert expand_skill_command("/skill:pdf", skills) == (
        f'<skill name="pdf" location="{path}">\n'
        f"References are relative to {path.parent}.\n\n"
        "Use pdftotext.\n\nThen summarise.\n"
        "</skill>"
    )


def test_skill_command_appends_arguments_after_a_blank_line(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", body="Body.")
    skills = scan_skill_dir(tmp_path, "user", include_root_files=False).skills
    expanded = expand_skill_command("/skill:pdf   summarise report.pdf  ", skills)
    assert expanded is not None
    assert expanded.endswith("Body.\n</skill>\n\nsummarise report.pdf")


def test_disabled_skills_can_still_be_invoked_explicitly(tmp_path: Path) -> None:
    write_skill(tmp_path, "manual", extra="disable-model-invocation: true", body="Manual body.")
    skills = scan_skill_dir(tmp_path, "user", include_root_files=False).skills
    assert "Manual body." in (expand_skill_command("/skill:manual", skills) or "")


def test_unknown_skill_or_other_text_is_not_expanded(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf")
    skills = scan_skill_dir(tmp_path, "user", include_root_files=False).skills
    assert expand_skill_command("/skill:nope args", skills) is None
    assert expand_skill_command("hello /skill:pdf", skills) is None
    assert expand_skill_command("/pdf", skills) is None


def test_skill_command_reports_a_vanished_file(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "gone")
    skills = scan_skill_dir(tmp_path, "user", include_root_files=False).skills
    path.unlink()
    with pytest.raises(SkillError, match="gone"):
        expand_skill_command("/skill:gone", skills)
