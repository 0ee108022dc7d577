from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import Input, Static

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive import project_needs_trust, project_trust_files
from pi_tui.modes.interactive.dialogs import SelectDialog

from .helpers import make_app, type_text, until


def _project(root: Path, extensions: int = 1) -> None:
    (root / ".pi" / "extensions").mkdir(parents=True)
    (root / ".pi" / "settings.json").write_text("{}")
    for i in range(extensions):
        (root / ".pi" / "extensions" / f"ext{i:02}.py").write_text("def register(pi):\n    pass\n")


async def test_the_trust_question_lists_what_would_run_and_has_no_empty_box(
    tmp_path: Path, agent_dir: Path
) -> None:
    _project(tmp_path)
    app = make_app(
        tmp_path, agent_dir, FauxScript(), needs_trust=lambda where: project_needs_trust(where, agent_dir)
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.pause()
        dialog = app.screen
        shown = "\n".join(str(s.render()) for s in dialog.query(Static))
        assert ".pi/settings.json" in shown and ".pi/extensions/ext00.py" in shown
        assert not dialog.query(Input)  # two fixed answers: no filter line
        await pilot.press("enter")  # "Trust"
        await until(pilot, app.ready.is_set)


def test_a_long_list_of_files_is_cut_with_a_count(tmp_path: Path) -> None:
    _project(tmp_path, extensions=20)
    files = project_trust_files(tmp_path, limit=5)
    assert files == [
        ".pi/settings.json",
        *[f".pi/extensions/ext{i:02}.py" for i in range(3)],
        "… and 17 more",
    ]


async def test_a_select_dialogs_filter_is_one_line_without_a_box(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        app.push_screen(SelectDialog("Pick", ["a", "b"]))
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.pause()
        field = app.screen.query_one(Input)
        assert field.has_focus and field.region.height == 1


async def test_a_select_dialog_says_its_keys_and_when_nothing_matches(
    tmp_path: Path, agent_dir: Path
) -> None:
    def shown(dialog: SelectDialog) -> str:
        return "\n".join(str(s.render()) for s in dialog.query(Static) if s.display)

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        dialog = SelectDialog("Pick", ["alpha", "beta"], saveable=True)
        app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog)
        await pilot.pause()
        assert "↑/↓ move · Enter select · Ctrl+S save as default · Esc cancel" in shown(dialog)
        assert "No match" not in shown(dialog)
        await type_text(pilot, "zzz")
        await until(pilot, lambda: "No match" in shown(dialog))
        await pilot.press("backspace", "backspace", "backspace")
        await until(pilot, lambda: "No match" not in shown(dialog))


async def test_ctrl_c_cancels_dialogs_and_pickers_as_in_pi(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.dialogs import InputDialog
    from pi_tui.modes.interactive.screens.model_screen import ModelScreen
    from pi_tui.modes.interactive.screens.settings_screen import SettingsScreen

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        answers: list[object] = []
        for dialog in (SelectDialog("Pick", ["a", "b"]), InputDialog("Key")):
            app.push_screen(dialog, answers.append)
            await until(pilot, lambda dialog=dialog: app.screen is dialog)
            await pilot.press("ctrl+c")
            await until(pilot, lambda dialog=dialog: app.screen is not dialog)
        assert answers == [None, None]
        for command, screen_type in (("/model", ModelScreen), ("/settings", SettingsScreen)):
            await type_text(pilot, command)
            app.menu.hide()
            await pilot.press("enter")
            await until(pilot, lambda screen_type=screen_type: isinstance(app.screen, screen_type))
            await pilot.press("ctrl+c")
            await until(pilot, lambda screen_type=screen_type: not isinstance(app.screen, screen_type))
        assert app.is_running  # Ctrl+C closed them; it did not count towards quitting


async def test_trust_for_this_session_only_loads_the_project_and_records_nothing(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.args import parse_args
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.factory import create_session

    (tmp_path / ".pi" / "prompts").mkdir(parents=True)
    (tmp_path / ".pi" / "prompts" / "review.md").write_text("---\ndescription: Review\n---\nReview $1")
    this_run: list[bool] = []

    def create(trust: bool | None) -> object:
        parsed = parse_args(["--provider", "faux"])
        if this_run:
            parsed.approve = True  # what pi-tui's start-up does for the answer: --approve
        if trust:
            parsed.trust_project = True
        return create_session(parsed, tmp_path)

    app = PiApp(
        create,  # type: ignore[arg-type]
        cwd=tmp_path,
        agent_dir=agent_dir,
        needs_trust=lambda where: project_needs_trust(where, agent_dir),
        trust_for_this_run=lambda: this_run.append(True),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        assert app.screen.options == [  # type: ignore[attr-defined]
            "Trust",
            f"Trust parent folder ({os.path.dirname(os.path.realpath(tmp_path))})",
            "Trust (this session only)",
            "Do not trust",
            "Do not trust (this session only)",
        ]
        await pilot.press("down", "down", "enter")
        await until(pilot, app.ready.is_set)
        assert "review" in [c.value for c in app.router.candidates()]  # the project's prompt loaded
    settings = agent_dir / "settings.json"
    assert this_run == [True]
    assert not settings.exists() or "trustedProjects" not in settings.read_text()  # nothing recorded
    assert not (agent_dir / "trust.json").exists()
    assert project_needs_trust(tmp_path, agent_dir)  # asked again next time
