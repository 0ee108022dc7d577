from __future__ import annotations

import os
from pathlib import Path

from pi_tui.resources.context_files import (
    find_context_file,
    load_context_files,
    load_prompt_override,
    resolve_prompt_value,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_agents_md_wins_over_claude_md_in_a_directory(tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "claude")
    assert find_context_file(tmp_path) == tmp_path / "CLAUDE.md"
    write(tmp_path / "AGENTS.md", "agents")
    assert find_context_file(tmp_path) == tmp_path / "AGENTS.md"


def test_global_file_first_then_root_down_to_cwd(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    cwd = tmp_path / "repo" / "pkg"
    cwd.mkdir(parents=True)
    global_file = write(agent / "AGENTS.md", "global")
    repo_file = write(tmp_path / "repo" / "CLAUDE.md", "repo")
    pkg_file = write(cwd / "AGENTS.md", "pkg")
    files = load_context_files(cwd, agent)
    assert [(f.path, f.content) for f in files] == [
        (global_file, "global"),
        (repo_file, "repo"),
        (pkg_file, "pkg"),
    ]


def test_a_file_reached_twice_is_included_once(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "AGENTS.md", "global")
    files = load_context_files(agent, agent)
    assert [f.content for f in files] == ["global"]


def test_symlinked_directory_does_not_duplicate_a_file(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write(real / "AGENTS.md", "rules")
    os.symlink(real, tmp_path / "agent")
    files = load_context_files(real, tmp_path / "agent")
    assert [f.content for f in files] == ["rules"]


def test_a_directory_named_agents_md_falls_back_to_claude_md(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").mkdir()
    write(tmp_path / "CLAUDE.md", "fallback")
    diagnostics: list = []
    files = load_context_files(tmp_path, tmp_path / "agent", diagnostics)
    assert [f.content for f in files] == ["fallback"]
    assert diagnostics == []


def test_prompt_value_naming_a_file_is_read_from_disk(tmp_path: Path) -> None:
    write(tmp_path / "prompt.txt", "From file.")
    assert resolve_prompt_value("prompt.txt", tmp_path) == "From file."
    assert resolve_prompt_value(str(tmp_path / "prompt.txt"), Path("/")) == "From file."
    assert resolve_prompt_value("Just some text.", tmp_path) == "Just some text."
    assert resolve_prompt_value("x" * 5000, tmp_path) == "x" * 5000
    assert resolve_prompt_value(None, tmp_path) is None


def test_system_md_project_then_agent_dir_and_flag_wins(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    cwd = tmp_path / "cwd"
    write(agent / "SYSTEM.md", "agent system")
    assert load_prompt_override("SYSTEM.md", cwd, agent) == "agent system"
    write(cwd / ".pi" / "SYSTEM.md", "project system")
    assert load_prompt_override("SYSTEM.md", cwd, agent) == "project system"
    assert load_prompt_override("SYSTEM.md", cwd, agent, include_project=False) == "agent system"
    assert load_prompt_override("SYSTEM.md", cwd, agent, cli_value="flag text") == "flag text"


def test_append_system_md_uses_the_same_lookup(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    cwd = tmp_path / "cwd"
    assert load_prompt_override("APPEND_SYSTEM.md", cwd, agent) is None
    write(cwd / ".pi" / "APPEND_SYSTEM.md", "more")
    assert load_prompt_override("APPEND_SYSTEM.md", cwd, agent) == "more"
    write(cwd / "extra.md", "from flag file")
    assert load_prompt_override("APPEND_SYSTEM.md", cwd, agent, cli_value="extra.md") == "from flag file"
