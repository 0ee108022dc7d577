from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.resources.templates import (
    PromptTemplate,
    expand_template,
    load_template_file,
    load_templates,
    parse_command_args,
    substitute_args,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("a b  c", ["a", "b", "c"]),
        ("a\tb", ["a", "b"]),
        ('"hello world" x', ["hello world", "x"]),
        ("'single quoted' \"double 'inner'\"", ["single quoted", "double 'inner'"]),
        ('pre"mid dle"post', ["premid dlepost"]),
        ('"" x', ["x"]),
        ('"unterminated rest', ["unterminated rest"]),
    ],
)
def test_parse_command_args_bash_style(text: str, expected: list[str]) -> None:
    assert parse_command_args(text) == expected


def test_positional_placeholders_with_missing_ones_empty() -> None:
    assert substitute_args("$1-$2-$3", ["a", "b"]) == "a-b-"
    assert substitute_args("$0|$10", [str(i) for i in range(1, 11)]) == "|10"


def test_all_arguments_placeholders() -> None:
    assert substitute_args("[$@] [$ARGUMENTS]", ["a", "b c"]) == "[a b c] [a b c]"
    assert substitute_args("[$@]", []) == "[]"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${@:2}", "b c d"),
        ("${@:2:2}", "b c"),
        ("${@:0}", "a b c d"),
        ("${@:1:1}", "a"),
        ("${@:9}", ""),
        ("${@:3:10}", "c d"),
        ("${@:2:0}", ""),
    ],
)
def test_slices(template: str, expected: str) -> None:
    assert substitute_args(template, ["a", "b", "c", "d"]) == expected


def test_substitution_is_not_recursive() -> None:
    args = ["$2", "$ARGUMENTS", "${@:1}", "$@"]
    assert substitute_args("$1 $2 $3", args) == "$2 $ARGUMENTS ${@:1}"
    assert substitute_args("$ARGUMENTS", ["$1", "x"]) == "$1 x"


def test_placeholders_are_case_sensitive_and_other_dollars_stay() -> None:
    assert substitute_args("$arguments $A $ $x ${@} cost $", ["v"]) == "$arguments $A $ $x ${@} cost $"


def test_template_file_description_from_frontmatter(tmp_path: Path) -> None:
    path = write(tmp_path / "review.md", "---\ndescription: Review the diff\n---\nReview $1 carefully.\n")
    template, diagnostics = load_template_file(path, "(user)")
    assert template == PromptTemplate(
        "review", "Review the diff (user)", "Review $1 carefully.", "(user)", path
    )
    assert diagnostics == []


def test_template_description_from_first_line_is_cut_to_sixty_chars(tmp_path: Path) -> None:
    long_line = "x" * 61
    short = write(tmp_path / "short.md", "\n\n  Fix the bug  \nmore\n")
    long = write(tmp_path / "long.md", f"{long_line}\n")
    short_template, _ = load_template_file(short, "(project)")
    long_template, _ = load_template_file(long, "(project)")
    assert short_template is not None and short_template.description == "Fix the bug (project)"
    assert long_template is not None and long_template.description == "x" * 60 + "... (project)"


def test_empty_template_description_is_just_the_source(tmp_path: Path) -> None:
    template, _ = load_template_file(write(tmp_path / "empty.md", ""), "(user)")
    assert template is not None and template.description == "(user)"


def test_template_with_invalid_frontmatter_is_skipped_with_a_warning(tmp_path: Path) -> None:
    template, diagnostics = load_template_file(write(tmp_path / "bad.md", "---\na: [x\n---\nBody"), "(user)")
    assert template is None
    assert diagnostics[0].message.startswith("prompt template skipped")


def test_directories_are_not_scanned_recursively(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "prompts" / "top.md", "Top")
    write(agent / "prompts" / "nested" / "deep.md", "Deep")
    write(agent / "prompts" / "notes.txt", "Not a template")
    result = load_templates(cwd=tmp_path / "cwd", agent_dir=agent)
    assert [template.name for template in result.templates] == ["top"]


def test_project_templates_win_over_user_ones(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    cwd = tmp_path / "cwd"
    user = write(agent / "prompts" / "fix.md", "User fix")
    project = write(cwd / ".pi" / "prompts" / "fix.md", "Project fix")
    write(agent / "prompts" / "only-user.md", "Only user")
    result = load_templates(cwd=cwd, agent_dir=agent)
    by_name = {template.name: template for template in result.templates}
    assert by_name["fix"].content == "Project fix"
    assert by_name["fix"].source == "(project)"
    assert by_name["only-user"].source == "(user)"
    [collision] = [d for d in result.diagnostics if d.kind == "collision"]
    assert collision.path == user and collision.winner_path == project


def test_untrusted_projects_skip_project_templates(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    write(cwd / ".pi" / "prompts" / "fix.md", "Project fix")
    result = load_templates(cwd=cwd, agent_dir=tmp_path / "agent", include_project=False)
    assert result.templates == []


def test_explicit_paths_get_a_path_label_and_load_without_defaults(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "prompts" / "default.md", "Default")
    write(tmp_path / "team" / "standup.md", "Standup notes")
    single = write(tmp_path / "one-off.md", "One off")
    result = load_templates(
        cwd=tmp_path,
        agent_dir=agent,
        include_defaults=False,
        explicit_paths=["team", single, "missing.md"],
    )
    assert [(t.name, t.source) for t in result.templates] == [
        ("standup", "(path:team)"),
        ("one-off", "(path:one-off)"),
    ]
    assert [d.message for d in result.diagnostics] == ["prompt template path does not exist"]


def test_expand_template_substitutes_parsed_arguments() -> None:
    template = PromptTemplate("greet", "", "Hello $1, all: $@, rest: ${@:2}", "(user)", Path("/t/greet.md"))
    assert (
        expand_template('/greet "Ada Lovelace" b c', [template])
        == "Hello Ada Lovelace, all: Ada Lovelace b c, rest: b c"
    )
    assert expand_template("/greet", [template]) == "Hello , all: , rest: "


def test_expand_template_returns_none_when_nothing_matches() -> None:
    template = PromptTemplate("greet", "", "Hi", "(user)", Path("/t/greet.md"))
    assert expand_template("greet x", [template]) is None
    assert expand_template("/greeting x", [template]) is None
    assert expand_template("/", [template]) is None
    assert expand_template("/ greet", [template]) is None
