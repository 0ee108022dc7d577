from __future__ import annotations

import json
from pathlib import Path

from ..e2e.helpers import run_cli


def _session_lines(agent_dir: Path) -> list[dict]:
    (path,) = list((agent_dir / "sessions").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_context_command_prints_the_view_without_calling_the_model(tmp_path: Path, agent_dir: Path) -> None:
    assert run_cli(["--provider", "faux", "-p", "hello"], tmp_path).returncode == 0
    before = _session_lines(agent_dir)
    run = run_cli(["-c", "--provider", "faux", "-p", "/context"], tmp_path)
    assert run.returncode == 0, run.stderr
    for heading in (
        "# Context",
        "## System prompt",
        "## Tools",
        "## Cached messages (2)",
        "## Cache",
        "Session so far",
    ):
        assert heading in run.stdout
    assert "Next request: reads" in run.stdout  # baseline rebuilt from the file
    assert _session_lines(agent_dir) == before  # nothing was sent, nothing was appended


def test_session_and_name_commands(tmp_path: Path, agent_dir: Path) -> None:
    assert run_cli(["--provider", "faux", "-p", "hello"], tmp_path).returncode == 0
    run = run_cli(["-c", "--provider", "faux", "-p", "/name refactor", "/session"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Session name set: refactor" in run.stdout
    assert "Session: refactor" in run.stdout and "Messages: 1 user, 1 assistant" in run.stdout
    assert any(e["type"] == "session_info" and e["name"] == "refactor" for e in _session_lines(agent_dir))


def test_unknown_slash_word_goes_to_the_model(tmp_path: Path, agent_dir: Path) -> None:
    run = run_cli(["--provider", "faux", "-p", "/frobnicate now"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "/frobnicate now" in run.stdout


def test_context_shows_the_panels_of_the_next_request_without_persisting_anything(
    tmp_path: Path, agent_dir: Path
) -> None:
    ext = tmp_path / "notes.py"
    ext.write_text(
        "def register(pi):\n    pi.register_panel('Notes', lambda: 'remember the tests', placement='tail')\n"
    )
    assert run_cli(["--provider", "faux", "-e", str(ext), "-p", "hello"], tmp_path).returncode == 0
    before = _session_lines(agent_dir)
    run = run_cli(["-c", "--provider", "faux", "-e", str(ext), "-p", "/context"], tmp_path)
    assert run.returncode == 0, run.stderr
    panels = run.stdout.split("## Panels", 1)[1]
    assert "[P1] Notes" in panels and "| tail |" in panels
    assert "======= [P1] Notes" in run.stdout.split("## Uncached tail", 1)[1]
    assert _session_lines(agent_dir) == before


def test_summary_prints_the_latest_compaction_summary_in_full(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
    from pi_tui.session import SessionManager

    path = tmp_path / "s.jsonl"
    manager = SessionManager.open(path, cwd=tmp_path)
    manager.append_message(UserMessage(content="q"))
    manager.append_message(AssistantMessage(content=[TextContent(text="a")]))
    long_summary = "## Goal\n" + "keep every detail. " * 40 + "\n## Next Steps\n1. finish"
    op = {
        "op": "compaction_apply",
        "scope": "cached",
        "summary": long_summary,
        "firstKeptEntryId": None,
        "tokensBefore": 12345,
        "invalidateCacheReason": "compaction",
    }
    manager.append_context_transform("compaction", [op])
    manager.close()
    run = run_cli(["--session", str(path), "--provider", "faux", "-p", "/summary"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Compaction of 12k tokens" in run.stdout and long_summary in run.stdout
    empty = run_cli(["--provider", "faux", "-p", "/summary"], tmp_path)
    assert "No compaction on this branch yet." in empty.stdout


async def test_name_with_line_breaks_is_stored_on_one_line_and_says_so(tmp_path: Path) -> None:
    """As pi: line breaks in a session name become spaces, and ``/name`` tells how it changed it."""
    from pi_tui.args import parse_args
    from pi_tui.modes.commands import BuiltinCommands
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    said: list[str] = []
    commands = BuiltinCommands(session, said.append)
    assert await commands("/name parser\nwork ")
    assert session.session_manager.name == "parser work"
    assert said == [
        'Session name was normalized from "parser\\nwork" to "parser work"',
        "Session name set: parser work",
    ]
    await session.close()


async def test_export_to_a_jsonl_file_writes_the_active_branch_as_a_session(tmp_path: Path) -> None:
    """As pi: ``/export x.jsonl`` writes the branch from the root to the leaf, re-linked in a line, under
    a fresh header; any other name (or none) is the HTML page."""
    import json

    from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
    from pi_tui.args import parse_args
    from pi_tui.modes.commands import BuiltinCommands
    from pi_tui.runtime.factory import create_session
    from pi_tui.session import SessionManager

    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    manager = session.session_manager
    first = manager.append_message(UserMessage(content="left"))
    manager.append_message(
        AssistantMessage(content=[TextContent(text="L")], stop_reason="stop", model="m", provider="p")
    )
    manager.branch(first.id)
    manager.append_message(UserMessage(content="right"))
    manager.append_message(
        AssistantMessage(content=[TextContent(text="R")], stop_reason="stop", model="m", provider="p")
    )
    said: list[str] = []
    commands = BuiltinCommands(session, said.append)
    out = tmp_path / "out dir" / "branch.jsonl"
    assert await commands(f'/export "{out}" ignored')
    assert said == [f"Session exported to: {out}"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == manager.id and lines[0]["cwd"] == manager.cwd
    branch = manager.get_branch()
    assert [e["id"] for e in lines[1:]] == [e.id for e in branch]
    assert [e["parentId"] for e in lines[1:]] == [None, *[e.id for e in branch[:-1]]]
    texts = [e["message"]["content"] for e in lines[1:] if e["type"] == "message"]
    assert "left" in texts and "right" in texts and len(texts) == 3  # left, right, R: not L
    with SessionManager.open(out, read_only=True) as copy:  # it reads back as a session
        assert [e.id for e in copy.get_branch()] == [e.id for e in branch]
    await session.close()


async def test_an_export_into_a_missing_folder_names_the_file_asked_for(tmp_path: Path) -> None:
    """The HTML page is written through a temporary file beside it; the error names the page the user
    asked for (it named the hidden temporary file) and no temporary file is left anywhere."""
    from pi_tui.ai.types import UserMessage
    from pi_tui.args import parse_args
    from pi_tui.modes.commands import BuiltinCommands
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    session.session_manager.append_message(UserMessage(content="something to export"))
    said: list[str] = []
    commands = BuiltinCommands(session, said.append)
    page = tmp_path / "missing" / "x.html"
    assert await commands(f"/export {page}")
    assert said == [f"Failed to export session: No such file or directory: {page}"]
    assert not (tmp_path / "missing").exists()


async def test_an_html_export_before_any_message_writes_nothing_and_says_so(tmp_path: Path) -> None:
    """As pi: a page of an empty conversation is refused ('Nothing to export yet'), not written."""
    from pi_tui.args import parse_args
    from pi_tui.modes.commands import BuiltinCommands
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    said: list[str] = []
    commands = BuiltinCommands(session, said.append)
    page = tmp_path / "empty.html"
    assert await commands(f"/export {page}")
    assert said == ["Failed to export session: Nothing to export yet: start a conversation first"]
    assert not page.exists() and not list(tmp_path.glob("*.html"))
