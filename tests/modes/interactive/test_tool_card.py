"""A tool call's card draws its lines itself: the colours follow the theme, streamed output is drawn once
a frame."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.text import Text

from pi_tui.modes.interactive.blocks import BashBlock, ToolBlock
from pi_tui.modes.interactive.theme import builtin_theme_dir

from .helpers import card_lines, make_app, until


def _colours(card: ToolBlock, y: int) -> set[str]:
    """The foreground colours of the text the card draws on its line ``y`` (``#rrggbb``)."""
    colours: set[str] = set()
    for segment in card.render_line(y):
        style = segment.style
        if segment.text.strip() and style is not None and style.color is not None:
            colours.add(style.color.get_truecolor().hex)
    return colours


async def test_a_new_theme_redraws_the_title_the_hint_and_the_diff_in_its_colours(
    tmp_path: Path, agent_dir: Path
) -> None:
    # The diff's colours were read from the theme once, when the output was set: a card kept the old
    # theme's red and green after /settings changed the theme.
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        content = "".join(f"line {n}\n" for n in range(12))
        card = ToolBlock("call_write", "write", {"path": "a.txt", "content": content})
        card.set_result("ok", False)
        await app.chat.mount(card)
        await pilot.pause()
        lines = card_lines(card)
        assert (
            lines[0] == "✓ write a.txt"
            and lines[1] == "+line 0"
            and lines[-1].startswith("... (2 more lines, 12 total, ")
        )

        def expected(*tokens: str) -> set[str]:
            return {app.theme_variables[token].lower() for token in tokens}

        def drawn() -> tuple[set[str], set[str], set[str]]:
            return _colours(card, 0), _colours(card, 1), _colours(card, len(lines) - 1)

        dark = drawn()
        # the hint as pi's: its words muted, the key dim
        assert dark == (
            expected("pi-tool-title"),
            expected("pi-tool-diff-added"),
            expected("pi-muted", "pi-dim"),
        )
        assert app.set_pi_theme("light") is None
        await until(pilot, lambda: app.theme == "pi-light")
        await pilot.pause()
        light = (expected("pi-tool-title"), expected("pi-tool-diff-added"), expected("pi-muted", "pi-dim"))
        assert light != dark
        await until(pilot, lambda: drawn() == light)


async def test_streamed_output_is_drawn_once_a_frame_and_shows_its_tail(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A command's output streams into its card many times a frame: each update only notes the text, and
    # the card's lines are made when the frame draws it (the output was split into lines on every update).
    app = make_app(tmp_path, agent_dir)
    made: list[int] = []
    render = ToolBlock.render

    def counting(self: ToolBlock) -> Text:
        made.append(1)
        return render(self)

    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        card = ToolBlock("call_bash", "bash", {"command": "seq 1 5000"})
        await app.chat.mount(card)
        card.mark_started()
        await pilot.pause()
        monkeypatch.setattr(ToolBlock, "render", counting)
        output = ""
        for n in range(1, 5001):
            output += f"{n}\n"
            card.set_partial(output)
        assert made == []
        await until(pilot, lambda: made)  # the next frame draws the card
        await pilot.pause()
        assert len(made) <= 5, len(
            made
        )  # a frame or a few (a timing tick on a slow machine), not one an update
        lines = card_lines(card)
        assert lines[:2] == ["… $ seq 1 5000", "... (4995 earlier lines, ctrl+o to expand)"], lines
        assert lines[2:7] == ["4996", "4997", "4998", "4999", "5000"] and lines[7].startswith("Elapsed ")


async def test_a_click_expands_that_card_alone_and_a_second_click_cuts_it_again(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        content = "".join(f"line {n}\n" for n in range(30))
        cards = [ToolBlock(f"call_{n}", "write", {"path": f"{n}.txt", "content": content}) for n in range(2)]
        for card in cards:
            card.set_result("ok", False)
        await app.chat.mount_all(cards)
        await pilot.pause()
        assert [len(card_lines(card)) for card in cards] == [12, 12]
        cards[0].scroll_visible(animate=False, top=True)
        await pilot.pause()
        await pilot.click(cards[0], offset=(2, 0))
        await pilot.pause()
        assert [len(card_lines(card)) for card in cards] == [31, 12]
        assert cards[0].size.height == 31  # laid out at its new height
        cards[0].scroll_visible(animate=False, top=True)
        await pilot.pause()
        await pilot.click(cards[0], offset=(2, 0))
        await pilot.pause()
        assert [len(card_lines(card)) for card in cards] == [12, 12]


async def test_text_selected_in_a_card_is_what_it_draws(tmp_path: Path, agent_dir: Path) -> None:
    # The card draws its lines itself: a drag over it selects them (title and output), as it selected
    # the title or output widget inside it before.
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        card = ToolBlock("call_bash", "bash", {"command": "printf 'alpha\\nbeta\\n'"})
        card.set_result("alpha\nbeta", False)
        await app.chat.mount(card)
        card.scroll_visible(animate=False, top=True)
        await pilot.pause()
        await pilot.mouse_down(card, offset=(1, 0))
        await pilot.hover(card, offset=(5, 2))
        await pilot.mouse_up(card, offset=(5, 2))
        await until(pilot, lambda: bool(app.screen.get_selected_text()))
        assert app.screen.get_selected_text() == "✓ $ printf 'alpha\\nbeta\\n'\nalpha\nbeta"


async def test_a_reloaded_theme_that_changes_only_the_title_colour_redraws_the_title(
    tmp_path: Path, agent_dir: Path
) -> None:
    # The card's own rules (background, output colour) stay the same, so Textual has no reason of its
    # own to draw it again: the card notices the theme's new variables.
    data = json.loads((builtin_theme_dir() / "dark.json").read_text())
    data["name"] = "mine"
    data["colors"]["toolTitle"] = "#ff0000"
    themes = agent_dir / "themes"
    themes.mkdir()
    (themes / "mine.json").write_text(json.dumps(data))
    app = make_app(tmp_path, agent_dir, theme_name="mine")
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        card = ToolBlock("call_ls", "ls", {"path": "."})
        card.set_result("a.txt", False)
        await app.chat.mount(card)
        await pilot.pause()
        assert _colours(card, 0) == {"#ff0000"}
        background = card.styles.background
        data["colors"]["toolTitle"] = "#00ff00"
        (themes / "mine.json").write_text(json.dumps(data))
        os.utime(themes / "mine.json", (1, 1))  # a new mtime even within the same second
        await until(pilot, lambda: app.theme_variables.get("pi-tool-title") == "#00ff00")
        await until(pilot, lambda: _colours(card, 0) == {"#00ff00"})
        assert card.styles.background == background


def _drawn(card: ToolBlock) -> list[str]:
    """The rows the card shows on screen, without its side padding."""
    return [card.render_line(y).text.strip() for y in range(card.size.height)]


async def test_a_bash_preview_shows_and_counts_screen_rows_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    # pi's collapsed bash card shows the last five rows as wrapped on screen and counts the rows above
    # them: a 500-character line filled the card with many rows and counted as one line.
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(60, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        numbers = "\n".join(str(n) for n in range(12))
        first = ToolBlock("call_1", "bash", {"command": "long first"})
        first.set_result("x" * 500 + "\n" + numbers, False)
        last = ToolBlock("call_2", "bash", {"command": "long last"})
        last.set_result(numbers + "\n" + "y" * 500, False)
        user = BashBlock("long user", exclude=False)  # a command the user ran keeps 20 lines, 20 rows at most
        user.set_outcome("z" * 2000 + "\n" + numbers, 0, False)
        other = ToolBlock("call_3", "lookup", {"query": "q"})  # a tool with no preview of its own: 10 lines
        other.set_result("\n".join(f"row {n}" for n in range(30)), False)
        await app.chat.mount_all([first, last, user, other])
        await pilot.pause()
        width = first.content_region.width
        rows = -(-500 // width)
        assert _drawn(first) == [
            "✓ $ long first",
            f"... ({rows + 12 - 5} earlier lines, ctrl+o to expand)",
            *[str(n) for n in range(7, 12)],
        ]
        tail = 500 - (rows - 1) * width
        assert _drawn(last) == [
            "✓ $ long last",
            f"... ({12 + rows - 5} earlier lines, ctrl+o to expand)",
            *["y" * width] * 4,
            "y" * tail,
        ]
        assert _drawn(other)[10:] == ["row 9", "... (20 more lines, ctrl+o to expand)"]
        assert len(_drawn(user)) == 21 and _drawn(user)[-1] == "11" and _drawn(user)[1].startswith("z")
        await pilot.resize_terminal(80, 40)  # a new width wraps (and counts) again
        await pilot.pause()
        width = first.content_region.width
        rows = -(-500 // width)
        assert _drawn(first)[1] == f"... ({rows + 12 - 5} earlier lines, ctrl+o to expand)"
        assert len(_drawn(last)) == 7
