from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.modes.commands import BuiltinCommands
from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import run_cli

from .conftest import MODEL, open_session, user_entry


async def test_undo_and_diff_commands(fake: FakeLLM, project: Path) -> None:
    (project / "a.txt").write_text("one\ntwo\n")
    fake.script(
        [
            Reply([tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]})]),
            Reply([tool_call("write", {"path": "b.txt", "content": "new\n"})]),
            Reply([text("done")]),
        ]
    )
    out: list[str] = []
    async with open_session(project) as session:
        commands = BuiltinCommands(session, out.append)
        await session.prompt("change things")
        assert await commands("/diff")
        report = out[-1]
        assert "Prompt 1: change things" in report
        assert "a.txt  [edit] modified +1 -1" in report and "b.txt  [write] created +1 -0" in report
        assert "-two\n+TWO" in report and "+++ b/b.txt" in report
        assert await commands("/diff b.txt")
        assert "a.txt" not in out[-1]

        assert await commands("/undo")
        assert "Reverted the last prompt's changes" in out[-1]
        assert (project / "a.txt").read_text() == "one\ntwo\n" and not (project / "b.txt").exists()
        assert await commands("/undo")
        assert "Undid the previous restore" in out[-1]
        assert (project / "a.txt").read_text() == "one\nTWO\n" and (project / "b.txt").read_text() == "new\n"


async def test_undo_stops_on_a_file_the_user_edited(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "agent\n"})]), Reply([text("ok")])])
    out: list[str] = []
    async with open_session(project) as session:
        commands = BuiltinCommands(session, out.append)
        await session.prompt("write")
        (project / "a.txt").write_text("user\n")
        await commands("/undo")
        assert "Nothing was changed" in out[-1] and "+agent" not in out[-1]
        assert (project / "a.txt").read_text() == "user\n"
        await commands("/undo --force")
        assert not (project / "a.txt").exists()


@pytest.mark.slow
def test_print_mode_rewind_flag(fake: FakeLLM, project: Path) -> None:
    (project / "a.txt").write_text("before\n")
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "after\n"})]), Reply([text("ok")])])
    first = run_cli(["--model", MODEL, "-p", "go"], project)
    assert first.returncode == 0, first.stderr
    assert (project / "a.txt").read_text() == "after\n"

    (project / "a.txt").write_text("edited by me\n")
    stopped = run_cli(["--model", MODEL, "-c", "--rewind", "root", "--rewind-mode", "code"], project)
    assert stopped.returncode == 1 and "changed since the agent last wrote" in stopped.stderr
    assert "-edited by me" in stopped.stderr
    assert (project / "a.txt").read_text() == "edited by me\n"

    forced = run_cli(["--model", MODEL, "-c", "--rewind", "root", "--rewind-force"], project)
    assert forced.returncode == 0, forced.stderr
    assert "Restored 1 file(s): a.txt" in forced.stderr
    assert (project / "a.txt").read_text() == "before\n"

    undo = run_cli(["--model", MODEL, "-c", "-p", "/undo"], project)  # the forced restore is undone
    assert undo.returncode == 0, undo.stderr
    assert "Undid the previous restore" in undo.stdout
    assert (project / "a.txt").read_text() == "edited by me\n"


async def test_rewind_entry_prefix_is_resolved(fake: FakeLLM, project: Path) -> None:
    from pi_tui.modes.rewind_cli import find_entry

    fake.script([Reply([text("hi")])])
    async with open_session(project) as session:
        await session.prompt("hello")
        entry = user_entry(session, "hello")
        assert find_entry(session.session_manager, entry.id[:6]) == entry.id
        with pytest.raises(ValueError, match="No entry"):
            find_entry(session.session_manager, "zzzz")
