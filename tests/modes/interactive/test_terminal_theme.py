"""The automatic theme setting (``light/dark``) and how the terminal's background is read, as pi reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.modes.interactive.terminal_driver import TerminalBackground
from pi_tui.modes.interactive.terminal_theme import (
    appearance_from_env,
    appearance_of_rgb,
    parse_auto_theme,
    parse_background_reply,
    resolve_theme,
)

from .helpers import make_app, until


def test_a_pair_of_names_is_the_automatic_setting() -> None:
    assert parse_auto_theme("light/dark") == ("light", "dark")
    assert parse_auto_theme(" solarized / dark ") == ("solarized", "dark")
    assert parse_auto_theme("dark") is None
    assert parse_auto_theme("a/b/c") is None and parse_auto_theme("/dark") is None
    assert resolve_theme("light/dark", "light") == "light"
    assert resolve_theme("light/dark", "dark") == "dark"
    assert resolve_theme("nord", "light") == "nord"


def test_colorfgbg_names_the_background_by_its_last_number() -> None:
    assert appearance_from_env({"COLORFGBG": "0;15"}) == "light"
    assert appearance_from_env({"COLORFGBG": "15;0"}) == "dark"
    assert appearance_from_env({"COLORFGBG": "0;default;7"}) == "light"  # 7 is light grey
    assert appearance_from_env({"COLORFGBG": "15;default;0"}) == "dark"
    assert appearance_from_env({"COLORFGBG": "0;231"}) == "light"  # the colour cube's white
    assert appearance_from_env({}) is None and appearance_from_env({"COLORFGBG": "x;y"}) is None


def test_an_osc_11_answer_gives_the_colour_in_either_ending() -> None:
    found = parse_background_reply("ab\x1b]11;rgb:ffff/ffff/ffff\x07cd")
    assert found == ((255, 255, 255), 2, 26)
    found = parse_background_reply("\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\")
    assert found is not None and found[0] == (30, 30, 46)
    assert parse_background_reply("\x1b]11;rgb:ff/ff") is None  # not ended yet
    # the other forms pi reads: rgba:, #rrggbb, #rrrrggggbbbb; a colour it cannot read is still an answer
    assert parse_background_reply("\x1b]11;rgba:ffff/ffff/ffff/ffff\x07") == ((255, 255, 255), 0, 30)
    assert parse_background_reply("\x1b]11;#fdf6e3\x07") == ((253, 246, 227), 0, 13)
    found = parse_background_reply("\x1b]11;#00002b2b3636\x07")
    assert found is not None and found[0] == (0, 43, 54)
    assert parse_background_reply("\x1b]11;cyan\x07") == (None, 0, 10)
    assert appearance_of_rgb((255, 255, 255)) == "light" and appearance_of_rgb((30, 30, 46)) == "dark"


async def test_an_automatic_theme_follows_the_terminals_answer(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLORFGBG", "15;0")  # start-up: a dark background
    app = make_app(tmp_path, agent_dir, theme_name="light/dark")
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert app.theme == "pi-dark"
        app.post_message(TerminalBackground((250, 250, 250)))  # then the terminal says it is light
        await until(pilot, lambda: app.theme == "pi-light")
        app.post_message(TerminalBackground((0, 0, 0)))
        await until(pilot, lambda: app.theme == "pi-dark")
        assert app.set_pi_theme("light") is None  # a single theme stays whatever the terminal says
        app.post_message(TerminalBackground((250, 250, 250)))
        app.post_message(TerminalBackground((0, 0, 0)))
        await pilot.pause()
        assert app.theme == "pi-light"


async def test_with_no_theme_set_the_terminals_answer_picks_and_saves_one_as_pi_does(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.delenv("COLORFGBG", raising=False)
    # what `run_interactive` starts with when no theme is set: light or dark, by the background
    app = make_app(tmp_path, agent_dir, theme_name="light/dark")
    app.save_detected_theme = True
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert app.theme == "pi-dark"
        app.post_message(TerminalBackground((250, 250, 250)))
        await until(pilot, lambda: app.theme == "pi-light")
        await until(pilot, lambda: (agent_dir / "settings.json").exists())
        assert json.loads((agent_dir / "settings.json").read_text())["theme"] == "light"
        app.post_message(TerminalBackground((0, 0, 0)))  # saved: the theme is set now, and stays
        await pilot.pause()
        assert app.theme == "pi-light"


def test_a_colour_scheme_report_is_read_as_pi_reads_it() -> None:
    from pi_tui.modes.interactive.terminal_theme import parse_scheme_report

    assert parse_scheme_report("x\x1b[?997;1ny") == ("dark", 1, 10)
    assert parse_scheme_report("\x1b[?997;2n") == ("light", 0, 9)
    assert parse_scheme_report("\x1b[?997;3n") is None and parse_scheme_report("\x1b[?997;") is None


async def test_an_automatic_theme_prefers_the_terminals_colour_scheme_and_follows_its_changes(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pi asks for the colour scheme (CSI ? 996 n) as well as the background, prefers the scheme, and
    # with the terminal's change notifications (mode 2031) follows the system's light/dark switch.
    from pi_tui.modes.interactive.terminal_driver import TerminalColorScheme

    monkeypatch.delenv("COLORFGBG", raising=False)
    app = make_app(tmp_path, agent_dir, theme_name="light/dark")
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        app.post_message(TerminalColorScheme("light"))
        await until(pilot, lambda: app.theme == "pi-light")
        app.post_message(TerminalBackground((0, 0, 0)))  # the scheme said otherwise: it wins
        await pilot.pause()
        assert app.theme == "pi-light"
        app.post_message(TerminalColorScheme("dark"))  # the system switched to dark
        await until(pilot, lambda: app.theme == "pi-dark")
