"""Keys typed right after a command that opens a screen (``/model⏎small``) reach that screen, as in pi:
they went into the editor hidden behind it (the picker's search stayed empty, and the words turned up in
the next prompt)."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import Input

from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.screens.model_screen import ModelScreen

from .helpers import make_app, until

_NAMES = {" ": "space", "/": "slash", "-": "minus"}


def type_ahead(app: PiApp, text: str) -> None:
    """Keys as a fast typist sends them: all queued before the app handles the first (``\n`` is Enter)."""
    for char in text:
        if char == "\n":
            app.post_message(events.Key("enter", "\r"))
        else:
            app.post_message(events.Key(_NAMES.get(char, char), char))


async def test_keys_typed_after_enter_on_slash_model_go_to_the_picker_search(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.pause()
        type_ahead(app, "/model\nfaux")
        await until(pilot, lambda: isinstance(app.screen, ModelScreen))
        search = app.screen.query_one("#model-search", Input)
        await until(pilot, lambda: search.value == "faux" or bool(app.editor.text))
        assert (search.value, app.editor.text) == ("faux", "")


async def test_keys_typed_after_a_command_that_opens_nothing_stay_in_the_editor(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.pause()
        type_ahead(app, "/model faux/faux-1\n\nnext words")  # the first Enter takes the completion
        await until(pilot, lambda: app.editor.text == "next words")
        assert not isinstance(app.screen, ModelScreen)
