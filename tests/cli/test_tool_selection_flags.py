"""pi's tool-selection options: ``-t``/``--tools``, ``-xt``/``--exclude-tools``, ``-nbt``/``--no-builtin-tools``,
``-nt``/``--no-tools`` and the ``defaultTools`` setting, for built-in and extension tools alike."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.args import ArgsError, parse_args

from ..extensions.helpers import open_session, write_extension

GREET = """
def register(pi):
    pi.register_tool(name="greet", description="Say hello.", parameters={"type": "object"},
                     execute=lambda *a: "hello")
"""


def _ext(tmp_path: Path) -> list[str]:
    return ["-e", str(write_extension(tmp_path / "exts", "greet", GREET))]


def test_short_and_long_spellings_parse() -> None:
    args = parse_args(["-t", "read,ls", "-xt", "ls", "-nbt", "-nt", "-nc", "--use-theme", "light"])
    assert args.tools == ["read", "ls"] and args.exclude_tools == ["ls"]
    assert args.no_builtin_tools and args.no_tools and args.no_context_files
    assert args.use_theme == "light"
    args = parse_args(["--exclude-tools", "bash, edit", "--no-builtin-tools", "--no-context-files"])
    assert args.exclude_tools == ["bash", "edit"] and args.no_builtin_tools and args.no_context_files


def test_double_dash_ends_options() -> None:
    args = parse_args(["-p", "--", "--not-a-flag", "@notes.md", "-c"])
    assert args.print_mode and not args.continue_session
    assert args.messages == ["--not-a-flag", "-c"] and args.files == ["notes.md"]
    assert args.unknown_flags == {}


async def test_exclude_tools_removes_from_the_default_set(tmp_path: Path) -> None:
    async with open_session(["-xt", "bash,edit"], tmp_path) as session:
        assert session.active_tools == ["read", "write"]
        assert "bash" not in session.tools  # not even available to switch on later


async def test_tools_allowlist_also_limits_extension_tools(tmp_path: Path) -> None:
    async with open_session(["-t", "read", *_ext(tmp_path)], tmp_path) as session:
        assert session.active_tools == ["read"]
    async with open_session(["-t", "read,greet", *_ext(tmp_path)], tmp_path) as session:
        assert sorted(session.active_tools) == ["greet", "read"]


async def test_no_builtin_tools_keeps_extension_tools_and_no_tools_drops_them(tmp_path: Path) -> None:
    async with open_session(["-nbt", *_ext(tmp_path)], tmp_path) as session:
        assert session.active_tools == ["greet"]
    async with open_session(["-nt", *_ext(tmp_path)], tmp_path) as session:
        assert session.active_tools == []


async def test_default_tools_setting_picks_the_start_up_built_ins(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"defaultTools": ["read", "grep", "ls"]}))
    async with open_session([], tmp_path) as session:
        assert session.active_tools == ["read", "grep", "ls"]
        assert "bash" in session.tools  # still there for /tools or an extension to switch on
    async with open_session(["--tools", "bash"], tmp_path) as session:
        assert session.active_tools == ["bash"]  # the command line wins for this run


async def test_no_context_files_skips_agents_md_everywhere(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "AGENTS.md").write_text("GLOBAL-RULES")
    (tmp_path / "AGENTS.md").write_text("PROJECT-RULES")
    async with open_session([], tmp_path) as session:
        assert "GLOBAL-RULES" in session.system_prompt() and "PROJECT-RULES" in session.system_prompt()
    async with open_session(["-nc"], tmp_path) as session:
        prompt = session.system_prompt()
        assert "GLOBAL-RULES" not in prompt and "PROJECT-RULES" not in prompt


async def test_append_system_prompt_is_repeatable_text_or_file(tmp_path: Path) -> None:
    (tmp_path / "extra.md").write_text("FROM-FILE")
    args = parse_args(["--append-system-prompt", "FIRST-TEXT", "--append-system-prompt", "extra.md"])
    assert args.append_system_prompt == ["FIRST-TEXT", "extra.md"]
    async with open_session(
        ["--append-system-prompt", "FIRST-TEXT", "--append-system-prompt", "extra.md"], tmp_path
    ) as session:
        prompt = session.system_prompt()
        assert "FIRST-TEXT\n\nFROM-FILE" in prompt


def test_tui_mode_is_accepted_and_regular_says_it_is_full_screen_anyway() -> None:
    assert parse_args(["--tui-mode", "fullscreen"]).warnings == []
    args = parse_args(["--tui-mode", "regular"])
    assert args.unknown_flags == {} and "runs full-screen" in args.warnings[0]
    try:
        parse_args(["--tui-mode", "inline"])
    except ArgsError as exc:
        assert "regular or fullscreen" in str(exc)
    else:
        raise AssertionError("--tui-mode inline was accepted")


def test_config_sub_command_is_refused_and_no_prompt_is_sent(tmp_path: Path, agent_dir: Path) -> None:
    from ..e2e.helpers import run_cli

    run = run_cli(["config", "--provider", "faux"], tmp_path)
    assert run.returncode == 1
    assert 'pi-tui has no "config" command' in run.stderr and "pi-tui -- config" in run.stderr
    assert run.stdout == ""
    assert not list((agent_dir / "sessions").rglob("*.jsonl"))  # nothing went to the model
    run = run_cli(["--provider", "faux", "-p", "--", "config"], tmp_path)  # the word as a prompt
    assert run.returncode == 0 and "config" in run.stdout
