"""A short choice (a setting's values, the branch-summary question) looks as pi's select lists do."""

from __future__ import annotations

from textual.app import App
from textual.widgets import OptionList

from pi_tui.modes.interactive.screens._dialogs import ChoiceScreen


async def test_the_choices_have_no_box_of_their_own_and_the_highlighted_one_is_marked() -> None:
    # pi draws the list bare inside the dialog, "→ " before the highlighted row; the list was boxed
    # (Textual's own border for an option list) and marked only by colour.
    answers: list[int | None] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(ChoiceScreen("Steering mode", ["one-at-a-time", "all"]), answers.append)
        await pilot.pause()
        listing = app.screen.query_one(OptionList)
        assert not any(edge for edge, _ in listing.styles.border), listing.styles.border
        rows = [str(listing.get_option_at_index(n).prompt) for n in range(listing.option_count)]
        assert rows == ["→ one-at-a-time", "  all"]
        await pilot.press("down", "enter")
        await pilot.pause()
    assert answers == [1]
