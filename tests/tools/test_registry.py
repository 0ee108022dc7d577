from __future__ import annotations

import re
from pathlib import Path

import pi_tui.tools as tools
from pi_tui.tools import ALL_TOOL_NAMES, DEFAULT_TOOL_NAMES, create_coding_tools

SNIPPETS = {
    "read": "Read file contents",
    "bash": "Execute bash commands (ls, grep, find, etc.)",
    "edit": "Make surgical edits to files (find exact text and replace)",
    "write": "Create or overwrite files",
    "grep": "Search file contents for patterns (respects .gitignore)",
    "find": "Find files by glob pattern (respects .gitignore)",
    "ls": "List directory contents",
}


def test_all_seven_tools_are_created(tmp_path: Path) -> None:
    created = create_coding_tools(tmp_path)
    assert tuple(created) == ALL_TOOL_NAMES
    assert DEFAULT_TOOL_NAMES == ("read", "bash", "edit", "write")
    assert set(DEFAULT_TOOL_NAMES) < set(ALL_TOOL_NAMES)


def test_each_tool_has_pis_prompt_snippet_and_a_valid_definition(tmp_path: Path) -> None:
    for name, tool in create_coding_tools(tmp_path).items():
        assert tool.name == name
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name)
        assert tool.prompt_snippet == SNIPPETS[name]
        assert tool.description
        definition = tool.definition()
        assert definition.parameters["type"] == "object"
        for required in definition.parameters.get("required", []):
            assert required in definition.parameters["properties"]


def test_required_parameters_match_pi(tmp_path: Path) -> None:
    required = {
        name: tuple(t.parameters.get("required", ())) for name, t in create_coding_tools(tmp_path).items()
    }
    assert required == {
        "read": ("path",),
        "bash": ("command",),
        "edit": ("path", "edits"),
        "write": ("path", "content"),
        "grep": ("pattern",),
        "find": ("pattern",),
        "ls": (),
    }


def test_only_edit_rewrites_its_arguments(tmp_path: Path) -> None:
    prepared = {name for name, t in create_coding_tools(tmp_path).items() if t.prepare_arguments}
    assert prepared == {"edit"}


def test_public_names_are_exported() -> None:
    for name in tools.__all__:
        assert hasattr(tools, name), name
