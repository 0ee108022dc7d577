"""Transcript search (pi's ``tui.altScreen.search``): the box, its keys, the matches on screen, and a
match far above the chat's mounted window."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.search_marks import CURRENT_STYLE, Highlighted, highlights_for
from pi_tui.modes.interactive.transcript_search import SearchBar
from pi_tui.session import SessionManager

from .helpers import make_app, type_text, until


def _session(path: Path, cwd: Path, exchanges: int, special: dict[int, str] | None = None) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(exchanges):
        manager.append_message(UserMessage(content=f"question {i}"))
        text = (special or {}).get(i, f"answer number {i}")
        manager.append_message(
            AssistantMessage(content=[TextContent(text=text)], provider="faux", model="faux-1")
        )
    manager.close()


def _search(app: PiApp):  # type: ignore[no-untyped-def]
    search = app.transcript_search
    assert search is not None
    return search


def _count(app: PiApp) -> str:
    return str(app.screen.query_one(SearchBar).count.render())


def _current_line(app: PiApp) -> str:
    """The text of the line that draws the selected match (as the widget draws it)."""
    current = highlights_for(app).current
    assert current is not None
    widget = current[0]()
    assert isinstance(widget, Highlighted)
    match = highlights_for(app).matches_of(widget)[current[1]]
    row = match[0][0]
    return widget.render_lines(widget.region.reset_offset)[row].text


async def _open(pilot, app: PiApp, query: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+shift+f")
    await until(pilot, lambda: app.transcript_search is not None and app.transcript_search.has_focus)
    await type_text(pilot, query)
    await until(pilot, lambda: _search(app).located and _search(app).query == query.lower())


async def test_search_opens_counts_moves_and_closes(tmp_path: Path, agent_dir: Path) -> None:
    session_file = tmp_path / "s.jsonl"
    _session(
        session_file, tmp_path, 6, {1: "the Needle is here", 3: "a needle again\n\nand NEEDLE", 4: "nothing"}
    )
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _open(pilot, app, "needle")
        assert _count(app) in ("1/3", "2/3", "3/3")
        first = _search(app).number
        assert "needle" in _current_line(app).lower()
        await pilot.press("enter")
        await until(pilot, lambda: _search(app).located)
        assert _search(app).number == (first + 1) % 3
        assert _count(app) == f"{(first + 1) % 3 + 1}/3"
        await pilot.press("shift+enter")
        await until(pilot, lambda: _search(app).located)
        assert _search(app).number == first
        await pilot.press("ctrl+g", "ctrl+g", "ctrl+g")  # around to the same one
        await until(pilot, lambda: _search(app).located)
        assert _search(app).number == first
        # The selected match is drawn bold and reversed on screen.
        current = highlights_for(app).current
        assert current is not None
        widget = current[0]()
        assert isinstance(widget, Highlighted)
        strips = widget.render_lines(widget.region.reset_offset)
        row, first_cell, _ = highlights_for(app).matches_of(widget)[current[1]][0]
        styles = [seg.style for seg in strips[row].crop(first_cell, first_cell + 1)]
        assert styles and all(s is not None and s.bold and s.reverse for s in styles)
        assert CURRENT_STYLE.reverse
        # Escape closes the box, clears the marks and gives the keys back to the editor.
        await pilot.press("escape")
        await until(pilot, lambda: not app.screen.query(SearchBar))
        assert app.focused is app.editor and not highlights_for(app).query
        await type_text(pilot, "hello")
        assert app.editor.text == "hello"


async def test_no_matches_and_the_search_key_closes_the_box_again(tmp_path: Path, agent_dir: Path) -> None:
    session_file = tmp_path / "s.jsonl"
    _session(session_file, tmp_path, 3)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _open(pilot, app, "zebra")
        assert _count(app) == "No matches"
        await pilot.press("ctrl+shift+f")
        await until(pilot, lambda: not app.screen.query(SearchBar))
        assert app.focused is app.editor


async def test_a_match_far_above_the_mounted_window_is_reached(tmp_path: Path, agent_dir: Path) -> None:
    session_file = tmp_path / "long.jsonl"
    _session(session_file, tmp_path, 1500, {3: "the rare walrus lives at the top"})
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.first_mounted > 2000)
        await _open(pilot, app, "walrus")
        assert _count(app) == "1/1"
        chat = app.chat
        assert chat.first_mounted <= 8  # the item (index 8: header, then pairs) is mounted now
        assert "rare walrus" in _current_line(app)
        current = highlights_for(app).current
        assert current is not None
        widget = current[0]()
        assert widget is not None
        top = chat.region.y
        assert top <= widget.region.y < top + chat.size.height  # in view


async def test_search_keys_are_rebindable(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "keybindings.json").write_text(
        json.dumps(
            {
                "tui.altScreen.search": "ctrl+f",
                "tui.altScreen.searchNext": "down",
                "tui.altScreen.searchPrevious": "up",
                "tui.altScreen.searchClose": ["ctrl+q"],
            }
        )
    )
    session_file = tmp_path / "s.jsonl"
    _session(session_file, tmp_path, 4, {0: "x needle", 2: "y needle"})
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.transcript_search is not None and app.transcript_search.has_focus)
        await type_text(pilot, "needle")
        await until(pilot, lambda: _search(app).located and _search(app).total == 2)
        first = _search(app).number
        await pilot.press("down")
        await until(pilot, lambda: _search(app).number == 1 - first)
        await pilot.press("up")
        await until(pilot, lambda: _search(app).number == first)
        await pilot.press("enter")  # no longer a search key: nothing moves
        assert _search(app).number == first
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.screen.query(SearchBar))
