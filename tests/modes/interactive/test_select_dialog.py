from __future__ import annotations

from pathlib import Path

from textual.containers import Vertical
from textual.widgets import OptionList, Static

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.dialogs import SelectDialog

from .helpers import make_app, type_text, until


def _position(dialog: SelectDialog[str]) -> str | None:
    line = dialog.query_one("#position", Static)
    return str(line.render()) if line.display else None


async def test_a_list_longer_than_the_dialog_says_where_the_highlight_is_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        dialog = SelectDialog("Select provider to configure:", [f"Provider {i}" for i in range(1, 44)])
        await app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog and _position(dialog) == "(1/43)")
        await pilot.press("down", "down")
        await until(pilot, lambda: _position(dialog) == "(3/43)")
        await pilot.press("up", "up", "up")  # wraps to the last
        await until(pilot, lambda: _position(dialog) == "(43/43)")
        await type_text(pilot, "43")  # what matches fits: no count
        await until(pilot, lambda: dialog.query_one("#options", OptionList).option_count == 1)
        await until(pilot, lambda: _position(dialog) is None)
        await pilot.press("backspace", "backspace")  # all again, from the first
        await until(pilot, lambda: _position(dialog) == "(1/43)")


async def test_a_short_list_shows_no_position(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        dialog = SelectDialog("Select authentication method:", ["Sign in with an account", "API key"])
        await app.push_screen(dialog)
        await until(pilot, lambda: app.screen is dialog)
        await pilot.pause()
        assert _position(dialog) is None


def _in_view(dialog: SelectDialog[str]) -> bool:
    frame = dialog.query_one(Vertical).content_region
    lines = (dialog.query_one("#position"), dialog.query_one(".dialog-hint"))
    return all(line.region.height == 1 and frame.contains_region(line.region) for line in lines)


async def test_a_long_list_in_a_short_terminal_leaves_the_hint_and_position_in_view(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        dialog = SelectDialog("Select provider to configure:", [f"Provider {i}" for i in range(1, 44)])
        await app.push_screen(dialog)
        await until(pilot, lambda: _position(dialog) == "(1/43)" and _in_view(dialog))
        await pilot.resize_terminal(100, 16)  # smaller still: the list gives up rows, not the hint
        await until(pilot, lambda: dialog.query_one(Vertical).region.height <= 12 and _in_view(dialog))
        assert _position(dialog) == "(1/43)"


async def test_the_highlighted_option_carries_pis_arrow_through_moves_and_filtering(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        dialog = SelectDialog("Select authentication method:", ["Sign in with an account", "API key", "Other"])
        await app.push_screen(dialog)
        options = dialog.query_one("#options", OptionList)

        def marks() -> list[str]:
            return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]

        await until(pilot, lambda: marks() == ["→ Sign in with an account", "  API key", "  Other"])
        await pilot.press("down")
        await until(pilot, lambda: marks() == ["  Sign in with an account", "→ API key", "  Other"])
        await type_text(pilot, "oth")
        await until(pilot, lambda: marks() == ["→ Other"])
