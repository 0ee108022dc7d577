"""A paste whose text holds escape characters (colour codes from a copied log) arrives whole."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from textual import events

from pi_tui.modes.interactive.paste_guard import PASTE_END, PASTE_START, PasteGuard
from pi_tui.modes.interactive.terminal_driver import install_paste_guard

COLOURED = "a\tb\nc\x1b[31mred\x1b[0m d\x1b"
INPUT = "x" + PASTE_START + COLOURED + PASTE_END + "\x1b[Ay"  # a key before, Up and a key after


def _through_guard(chunks: list[str]) -> str:
    guard = PasteGuard()
    return "".join(guard.feed(chunk) for chunk in chunks)


def test_escapes_inside_a_paste_are_dropped_and_outside_it_kept_however_the_input_is_cut() -> None:
    expected = "x" + PASTE_START + "a\tb\nc[31mred[0m d" + PASTE_END + "\x1b[Ay"
    assert _through_guard([INPUT]) == expected
    for cut in range(1, len(INPUT)):
        assert _through_guard([INPUT[:cut], INPUT[cut:]]) == expected, cut
    assert _through_guard(list(INPUT)) == expected


def test_a_lone_escape_outside_a_paste_is_passed_on_at_once() -> None:
    guard = PasteGuard()
    assert guard.feed("\x1b") == "\x1b"  # the Escape key: the parser times it out itself
    assert guard.feed("abc") == "abc"


def test_the_guarded_parser_reports_one_paste_and_only_the_keys_around_it() -> None:
    install_paste_guard()
    from textual.drivers import linux_driver

    for chunks in ([INPUT], [INPUT[:12], INPUT[12:30], INPUT[30:]]):
        parser = linux_driver.XTermParser()
        tokens = [token for chunk in chunks for token in parser.feed(chunk)]
        pastes = [t.text for t in tokens if isinstance(t, events.Paste)]
        keys = [t.key for t in tokens if isinstance(t, events.Key)]
        assert pastes == ["a\tb\nc[31mred[0m d"]
        assert keys == ["x", "up", "y"]


@pytest.mark.slow
def test_a_coloured_paste_in_a_terminal_lands_whole_in_the_editor(
    tmp_path: Path, isolated_home: Path
) -> None:
    from bench.pty_screen import PtyScreen

    env = {
        "HOME": str(isolated_home),
        "PI_CODING_AGENT_DIR": str(isolated_home / ".pi" / "agent"),
        "PI_OFFLINE": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    argv = [sys.executable, "-m", "pi_tui", "--provider", "faux"]
    with PtyScreen(argv, cwd=tmp_path, env=env, columns=80, lines=24) as term:
        term.wait_for("faux-1", timeout=30)
        term.send("before ")
        term.wait_for("before")
        term.send(PASTE_START + "one \x1b[1mbold\x1b[0m\x07 two\x1bd three" + PASTE_END)
        term.send(" after")
        term.wait_for("after")
        term.drain()
        line = next(row for row in term.text().splitlines() if "before" in row)
        assert "before one [1mbold[0m twod three after" in line
        term.send("\x03\x03")
        assert term.wait_exit(timeout=20) == 0
