"""A file the agent just wrote is offered by the very next ``@``, not only after a later walk."""

from __future__ import annotations

from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call

from .helpers import make_app, type_text, until


async def test_the_next_mention_offers_the_file_a_tool_just_wrote(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "old.txt").write_text("x")
    script = FauxScript(
        faux_reply(faux_tool_call("write", {"path": "notes/fresh.md", "content": "hi\n"}, id="w1")),
        faux_reply("written"),
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)  # the project was listed before the file existed
        await type_text(pilot, "write notes")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        assert (tmp_path / "notes" / "fresh.md").read_text() == "hi\n"
        # Listed at once, with no walk of the project since the write (the bare "@" typed next starts one,
        # which used to be what the list waited for).
        assert "notes/fresh.md" in app.files.paths, app.files.paths
        await type_text(pilot, "@fresh")
        assert app.menu.is_shown
        assert "@notes/fresh.md" in [c.value for c in app.menu.candidates]


def test_a_noted_file_outside_the_project_or_gone_is_not_offered(tmp_path: Path) -> None:
    from pi_tui.modes.interactive.completion import FileIndex

    index = FileIndex(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.py").write_text("x")
    index.note_written(str(tmp_path / "a" / "b.py"))
    index.note_written("../elsewhere.py")
    index.note_written("missing.py")
    assert index.paths == ["a/", "a/b.py"]


async def test_files_a_shell_command_made_are_listed_before_the_next_mention(
    tmp_path: Path, agent_dir: Path
) -> None:
    # A command reports no paths: the project is listed again once the agent's turn (or the user's
    # `!command`) is over, so the next `@` offers what it made (it offered them only after that `@`'s walk).
    script = FauxScript(
        faux_reply(faux_tool_call("bash", {"command": "touch made_by_agent.txt"}, id="b1")),
        faux_reply("made"),
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        assert (tmp_path / "made_by_agent.txt").exists()
        await until(pilot, lambda: "made_by_agent.txt" in app.files.paths)
        await type_text(pilot, "!touch made_by_me.txt")
        await pilot.press("enter")
        await until(pilot, lambda: "made_by_me.txt" in app.files.paths)
        assert app.editor.text == ""  # listed with no `@` typed
