from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from pi_tui.modes.plain import cannot_host_fullscreen
from pi_tui.modes.plain.completion import PlainCompleter, command_items
from pi_tui.modes.plain.render import tool_summary
from pi_tui.modes.prompt_history import PromptHistory, history_path


def _complete(completer: PlainCompleter, text: str) -> list[str]:
    return [
        c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    ]


def _session() -> SimpleNamespace:
    templates = [SimpleNamespace(name="review", description="Review code (user)")]
    skills = [SimpleNamespace(name="pdf-tools", description="Work with PDFs")]
    command = SimpleNamespace(description="Deploy the app", source="deployer")
    registry = SimpleNamespace(commands={"deploy": command})
    return SimpleNamespace(
        resources=SimpleNamespace(templates=templates, skills=skills),
        extensions=SimpleNamespace(registry=registry),
        settings=None,
    )


def test_slash_completion_lists_builtins_templates_extension_commands_and_skills(tmp_path: Path) -> None:
    session = _session()
    names = [name for name, _ in command_items(session)]
    assert {"session", "compact", "quit", "review", "deploy", "skill:pdf-tools"} <= set(names)
    completer = PlainCompleter(tmp_path, lambda: command_items(session))
    assert _complete(completer, "/dep") == ["/deploy"]
    assert _complete(completer, "/skill:p") == ["/skill:pdf-tools"]
    assert _complete(completer, "/rev")[0] == "/review"
    assert _complete(completer, "/sess")[0] == "/session"
    assert _complete(completer, "hello /sess") == []  # only at the start of the line


def test_argument_completion_comes_from_the_command(tmp_path: Path) -> None:
    completer = PlainCompleter(
        tmp_path, lambda: [], lambda name, prefix: [f"{name}-{prefix}x"] if name == "deploy" else None
    )
    assert _complete(completer, "/deploy st") == ["deploy-stx"]
    assert _complete(completer, "/other st") == []


def test_at_completion_ranks_paths_as_pi_and_skips_gitignored(tmp_path: Path) -> None:
    """pi 0.87.1 offers ``src/main_app.py`` for ``@main`` but nothing for ``@mainapp`` (the name must
    hold what was typed: its file finder matches names, not scattered letters); the line mode found it
    fuzzily."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main_app.py").write_text("")
    (tmp_path / "main.md").write_text("")
    (tmp_path / "my notes.md").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "main_app.py").write_text("")
    completer = PlainCompleter(tmp_path, lambda: [])
    assert _complete(completer, "look at @mainapp") == []
    assert _complete(completer, "look at @main") == ["@main.md", "@src/main_app.py"]
    assert _complete(completer, "@Main") == []  # a capital letter must be matched as typed
    assert _complete(completer, "@notes") == ['@"my notes.md"']
    shown = list(completer.get_completions(Document("@main_"), CompleteEvent(completion_requested=True)))
    assert [(c.display_text, c.display_meta_text) for c in shown] == [("main_app.py", "src/main_app.py")]


def test_history_keeps_order_skips_repeats_and_survives_a_torn_line(tmp_path: Path) -> None:
    path = history_path(tmp_path / "proj", tmp_path / "agent")
    history = PromptHistory(path, limit=3)
    for text in ["one", "two", "two", "  ", "three", "four"]:
        history.add(text)
    assert history.entries == ["two", "three", "four"]
    with path.open("a") as f:
        f.write('{"text": "torn')  # a crash mid-write
    assert PromptHistory(path, limit=3).entries == ["two", "three", "four"]


def test_history_file_is_trimmed_when_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path, limit=2)
    for n in range(10):
        history.add(f"p{n}")
    lines = path.read_text().splitlines()
    assert len(lines) <= 4
    assert [json.loads(line) for line in lines][-2:] == ["p8", "p9"]
    assert PromptHistory(path, limit=2).entries == ["p8", "p9"]


def test_tool_summary_is_one_line_with_the_telling_argument() -> None:
    assert tool_summary("bash", {"command": "ls -la\n| wc"}) == "bash $ ls -la | wc"
    assert tool_summary("read", {"path": "a.py", "offset": 3}) == "read a.py"
    assert tool_summary("mine", {}) == "mine"
    assert len(tool_summary("mine", {"data": "x" * 500})) == 100


def test_cannot_host_fullscreen_when_term_is_dumb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    assert cannot_host_fullscreen()


def test_no_terminal_and_no_prompt_is_not_an_error(tmp_path: Path) -> None:
    """A stdin that is not a terminal is print mode, as in pi: with no prompt, nothing is written and the
    exit is 0. ``--plain`` asks for the line mode, which then opens (plain text only) and ends at EOF."""

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pi_tui", "--provider", "faux", *flags],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )

    quiet = run()
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    line_mode = run("--plain")
    assert line_mode.returncode == 0, line_mode.stderr
    assert "line mode" in line_mode.stdout and "\x1b[" not in line_mode.stdout


def test_plain_mode_does_not_import_textual(tmp_path: Path) -> None:
    code = (
        "import sys; import pi_tui.modes.plain.app, pi_tui.modes.plain.terminal; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "False", out.stderr
