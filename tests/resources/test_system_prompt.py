from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from pi_tui.resources.context_files import ContextFile
from pi_tui.resources.skills import Skill
from pi_tui.resources.system_prompt import (
    ToolPromptInfo,
    build_guidelines,
    build_system_prompt,
    build_system_prompt_parts,
    default_docs_paths,
)

DAY = datetime.date(2026, 3, 4)


def guidelines_of(prompt: str) -> list[str]:
    section = prompt.split("Guidelines:\n", 1)[1].split("\n\n", 1)[0].split("\nCurrent date:", 1)[0]
    return [line[2:] for line in section.split("\n")]


def tools_section(prompt: str) -> str:
    return prompt.split("Available tools:\n", 1)[1].split("\n\n", 1)[0]


def skill(name: str = "pdf", *, hidden: bool = False) -> Skill:
    path = Path(f"/skills/{name}/SKILL.md")
    return Skill(name, f"{name} things", path, path.parent, "user", hidden)


def build(**kwargs: object) -> str:
    kwargs.setdefault("cwd", "/work/project")
    kwargs.setdefault("date", DAY)
    kwargs.setdefault("docs_paths", [])
    return build_system_prompt(**kwargs)  # type: ignore[arg-type]


def test_default_prompt_names_the_product_and_lists_default_tools() -> None:
    prompt = build()
    assert prompt.startswith(
        "You are an expert coding assistant operating inside pi-tui, a coding agent harness. "
        "You help users by reading files, executing commands, editing code, and writing new files.\n\n"
    )
    assert tools_section(prompt) == (
        "- read: Read file contents\n"
        "- bash: Execute bash commands (ls, grep, find, etc.)\n"
        "- edit: Make surgical edits to files (find exact text and replace)\n"
        "- write: Create or overwrite files"
    )
    assert (
        "In addition to the tools above, you may have access to other custom tools depending on the project."
        in prompt
    )


def test_no_tools_lists_none_and_keeps_the_fixed_guidelines() -> None:
    prompt = build(tools=[])
    assert tools_section(prompt) == "(none)"
    assert guidelines_of(prompt) == [
        "Be concise in your responses",
        "Show file paths clearly when working with files",
    ]


def test_date_and_cwd_come_last_with_day_precision_and_forward_slashes() -> None:
    prompt = build(cwd="C:\\work\\project")
    assert prompt.endswith("\nCurrent date: 2026-03-04\nCurrent working directory: C:/work/project")


def test_bash_without_explorer_tools_guideline() -> None:
    assert guidelines_of(build(tools=["bash"]))[0] == "Use bash for file operations like ls, rg, find"


def test_bash_with_explorer_tools_guideline() -> None:
    lines = guidelines_of(build(tools=["bash", "grep"]))
    assert (
        lines[0] == "Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)"
    )
    assert "Use bash for file operations like ls, rg, find" not in lines


def test_read_only_tools_get_no_edit_or_write_guidelines() -> None:
    assert guidelines_of(build(tools=["read", "grep", "find", "ls"])) == [
        "Be concise in your responses",
        "Show file paths clearly when working with files",
    ]


def test_edit_and_write_guidelines() -> None:
    assert guidelines_of(build(tools=["read", "edit", "write"])) == [
        "Use read to examine files before editing. You must use this tool instead of cat or sed.",
        "Use edit for precise changes (old text must match exactly)",
        "Use write only for new files or complete rewrites",
        "When summarizing your actions, output plain text directly - do NOT use cat or bash to display what you did",
        "Be concise in your responses",
        "Show file paths clearly when working with files",
    ]


def test_write_alone_gets_the_summary_guideline_but_not_read_before_edit() -> None:
    lines = guidelines_of(build(tools=["write"]))
    assert "Use write only for new files or complete rewrites" in lines
    assert any(line.startswith("When summarizing your actions") for line in lines)
    assert not any(line.startswith("Use read to examine") for line in lines)


def test_tool_guidelines_are_trimmed_deduplicated_and_come_before_the_fixed_two() -> None:
    tools = [
        ToolPromptInfo("read"),
        ToolPromptInfo(
            "todo", "Track todos", ("  Use todo for multi-step work  ", "", "Be concise in your responses")
        ),
        ("notes", None, ["Use todo for multi-step work", "Use notes to remember facts"]),
    ]
    assert build_guidelines([*tools[:2], ToolPromptInfo("notes", None, tuple(tools[2][2]))]) == [
        "Use todo for multi-step work",
        "Be concise in your responses",
        "Use notes to remember facts",
        "Show file paths clearly when working with files",
    ]
    assert guidelines_of(build(tools=tools))[-2:] == [
        "Use notes to remember facts",
        "Show file paths clearly when working with files",
    ]


def test_custom_snippets_replace_builtin_lines_and_are_one_line() -> None:
    prompt = build(
        tools=[("read", "Read a file\n  with care", ()), ("deploy", "Deploy the app", ()), "mystery"]
    )
    assert tools_section(prompt) == "- read: Read a file with care\n- deploy: Deploy the app"


def test_append_text_context_files_and_skills_follow_the_base_in_order() -> None:
    prompt = build(
        tools=["read"],
        append_system_prompt="APPENDED",
        context_files=[ContextFile(Path("/a/AGENTS.md"), "Global rules"), ("/a/b/CLAUDE.md", "Local rules")],
        skills=[skill()],
    )
    append_at = prompt.index("\n\nAPPENDED")
    context_at = prompt.index(
        "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
        "## /a/AGENTS.md\n\nGlobal rules\n\n## /a/b/CLAUDE.md\n\nLocal rules\n\n"
    )
    skills_at = prompt.index("<available_skills>")
    date_at = prompt.index("\nCurrent date:")
    assert append_at < context_at < skills_at < date_at


def test_skills_block_only_with_read_active() -> None:
    assert "<available_skills>" in build(tools=["read"], skills=[skill()])
    assert "<available_skills>" not in build(tools=["bash", "edit"], skills=[skill()])
    assert "<available_skills>" not in build(tools=["read"], skills=[skill(hidden=True)])


def test_custom_prompt_replaces_only_the_base() -> None:
    prompt = build(
        custom_prompt="You are a pirate.",
        tools=["read"],
        append_system_prompt="Arr.",
        context_files=[("/p/AGENTS.md", "Rules")],
        skills=[skill()],
    )
    assert prompt.startswith("You are a pirate.\n\nArr.\n\n# Project Context")
    assert "Available tools" not in prompt and "Guidelines:" not in prompt
    assert "<name>pdf</name>" in prompt
    assert prompt.endswith("\nCurrent date: 2026-03-04\nCurrent working directory: /work/project")


def test_custom_prompt_without_read_has_no_skills() -> None:
    assert "<available_skills>" not in build(custom_prompt="Custom.", tools=["bash"], skills=[skill()])


def test_several_append_texts_are_joined() -> None:
    prompt = build(append_system_prompt=["first", "", "second"])
    assert "\n\nfirst\n\nsecond\nCurrent date" in prompt


def test_docs_block_lists_given_paths(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# x", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    prompt = build(docs_paths=[readme, docs])
    assert f"- Main documentation: {readme}\n- Additional docs: {docs}\n" in prompt
    assert "pi-tui documentation (read only when the user asks about pi-tui itself" in prompt
    assert "pi-tui documentation" not in build(docs_paths=[])


def test_default_docs_paths_exist_and_belong_to_this_project() -> None:
    import pi_tui

    root = Path(pi_tui.__file__).resolve().parent.parent
    paths = default_docs_paths()
    assert all(path.exists() and path.parent == root for path in paths)


@pytest.mark.parametrize("custom", [None, "Custom base."])
def test_parts_concatenate_to_the_prompt_and_are_named(custom: str | None) -> None:
    kwargs = dict(
        tools=["read", "bash"],
        custom_prompt=custom,
        append_system_prompt="More.",
        context_files=[("/p/AGENTS.md", "Rules")],
        skills=[skill()],
        cwd="/p",
        date=DAY,
        docs_paths=[],
    )
    parts = build_system_prompt_parts(**kwargs)  # type: ignore[arg-type]
    assert [name for name, _ in parts] == ["base", "append", "project_context", "skills", "environment"]
    assert "".join(text for _, text in parts) == build_system_prompt(**kwargs)  # type: ignore[arg-type]


def test_empty_parts_are_left_out() -> None:
    parts = build_system_prompt_parts(tools=["bash"], cwd="/p", date=DAY, docs_paths=[], skills=[skill()])
    assert [part.name for part in parts] == ["base", "environment"]


def test_prompt_is_identical_within_a_day() -> None:
    assert build(date=datetime.date(2026, 1, 1)) == build(date=datetime.date(2026, 1, 1))
    assert build(date=datetime.date(2026, 1, 1)) != build(date=datetime.date(2026, 1, 2))
