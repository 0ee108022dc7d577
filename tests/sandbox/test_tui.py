"""The full-screen app: the footer names the sandbox, and a refusal asks the user in a dialog."""

from __future__ import annotations

from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call
from tests.modes.interactive.helpers import make_app, type_text, until


async def test_footer_shows_the_sandbox_mode(tmp_path: Path, agent_dir: Path) -> None:
    for argv, shown in (([], "sandbox: workspace-write"), (["--sandbox", "off"], "sandbox: off")):
        app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("hi")), argv=argv)
        async with app.run_test() as pilot:
            await until(pilot, app.ready.is_set)
            app.refresh_footer()
            footer = app.footer
            await until(pilot, lambda footer=footer, shown=shown: shown in footer.plain(120))


async def test_a_refused_write_asks_and_run_once_outside_writes(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    command = f"echo hello > {outside}/note.txt"
    script = FauxScript(faux_reply(faux_tool_call("bash", {"command": command}, id="c1")), faux_reply("done"))
    app = make_app(project, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "write the note")
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "SelectDialog")
        assert not (outside / "note.txt").exists()  # refused first
        await pilot.press("enter")  # the first choice: run this once outside the sandbox
        await until(pilot, lambda: not app._busy and script.call_count == 2)
    assert (outside / "note.txt").read_text() == "hello\n"
