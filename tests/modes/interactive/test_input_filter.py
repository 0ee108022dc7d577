"""A paste whose text holds escape characters (colour codes from a copied log) arrives whole, and xterm's
modifyOtherKeys form of Shift+Enter and Ctrl+Enter reaches the editor."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from textual import events

from pi_tui.modes.interactive.input_filter import PASTE_END, PASTE_START, InputFilter
from pi_tui.modes.interactive.terminal_driver import install_input_filter

COLOURED = "a\tb\nc\x1b[31mred\x1b[0m d\x1b"
INPUT = "x" + PASTE_START + COLOURED + PASTE_END + "\x1b[Ay"  # a key before, Up and a key after


def _through_guard(chunks: list[str]) -> str:
    guard = InputFilter()
    return "".join(guard.feed(chunk) for chunk in chunks)


def test_escapes_inside_a_paste_are_dropped_and_outside_it_kept_however_the_input_is_cut() -> None:
    expected = "x" + PASTE_START + "a\tb\nc[31mred[0m d" + PASTE_END + "\x1b[Ay"
    assert _through_guard([INPUT]) == expected
    for cut in range(1, len(INPUT)):
        assert _through_guard([INPUT[:cut], INPUT[cut:]]) == expected, cut
    assert _through_guard(list(INPUT)) == expected


def test_a_lone_escape_outside_a_paste_is_passed_on_at_once() -> None:
    guard = InputFilter()
    assert guard.feed("\x1b") == "\x1b"  # the Escape key: the parser times it out itself
    assert guard.feed("abc") == "abc"


def test_the_guarded_parser_reports_one_paste_and_only_the_keys_around_it() -> None:
    install_input_filter()
    from textual.drivers import linux_driver

    for chunks in ([INPUT], [INPUT[:12], INPUT[12:30], INPUT[30:]]):
        parser = linux_driver.XTermParser()
        tokens = [token for chunk in chunks for token in parser.feed(chunk)]
        pastes = [t.text for t in tokens if isinstance(t, events.Paste)]
        keys = [t.key for t in tokens if isinstance(t, events.Key)]
        assert pastes == ["a\tb\nc[31mred[0m d"]
        assert keys == ["x", "up", "y"]


def test_modify_other_keys_sequences_become_keys_textual_reads_however_the_input_is_cut() -> None:
    install_input_filter()
    from textual.drivers import linux_driver

    data = "a\x1b[27;2;13~b\x1b[27;5;13~c\x1b[27;3;13~d\x1b[27;5;127~"
    expected = ["a", "shift+enter", "b", "ctrl+enter", "c", "alt+enter", "d", "ctrl+backspace"]
    for cut in range(len(data) + 1):
        if data[:cut].endswith(("\x1b", "\x1b[")):
            continue  # that much may be the Escape key: it is passed on at once (see InputFilter)
        parser = linux_driver.XTermParser()
        chunks = [data[:cut], data[cut:]] if 0 < cut < len(data) else [data]
        keys = [t.key for chunk in chunks for t in parser.feed(chunk) if isinstance(t, events.Key)]
        assert keys == expected, cut


def test_inside_a_paste_a_modify_other_keys_lookalike_stays_text() -> None:
    assert (
        InputFilter().feed(PASTE_START + "x\x1b[27;2;13~" + PASTE_END)
        == PASTE_START + "x[27;2;13~" + PASTE_END
    )


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
        term.send("\x1b[27;2;13~next line")  # Shift+Enter as xterm and tmux 3.3 send it
        term.wait_for("next line")
        term.drain()
        rows = term.text().splitlines()
        assert any(row.strip("│ ").startswith("next line") for row in rows)  # a new line, not sent
        term.send("\x03\x03")
        assert term.wait_exit(timeout=20) == 0
        out = term.transcript_text()
    # modifyOtherKeys asked for (tmux sends modified Enter only then) and put back on the way out
    assert "\x1b[>4;1m" in out and out.rfind("\x1b[>4;0m") > out.rfind("\x1b[>4;1m")


def test_the_terminals_background_answer_is_taken_out_of_the_keys_however_the_input_is_cut() -> None:
    # The answer to the background query would be typed into the editor ("]11;rgb:…") as keys.
    install_input_filter()
    from textual.drivers import linux_driver

    from pi_tui.modes.interactive.terminal_driver import TerminalBackground

    data = "a\x1b]11;rgb:ffff/ffff/ffff\x1b\\b"
    for cut in range(len(data) + 1):
        if data[:cut].endswith(("\x1b", "\x1b]")):
            continue  # that much may be the Escape key or Alt+]: it is passed on at once
        parser = linux_driver.XTermParser()
        tokens = [token for chunk in (data[:cut], data[cut:]) if chunk for token in parser.feed(chunk)]
        keys = [t.key for t in tokens if isinstance(t, events.Key)]
        colours = [t.rgb for t in tokens if isinstance(t, TerminalBackground)]
        assert keys == ["a", "b"] and colours == [(255, 255, 255)], (cut, tokens)


def test_a_colour_scheme_report_is_taken_out_of_the_keys() -> None:
    install_input_filter()
    from textual.drivers import linux_driver

    from pi_tui.modes.interactive.terminal_driver import TerminalColorScheme

    parser = linux_driver.XTermParser()
    tokens = list(parser.feed("a\x1b[?997;2nb"))
    assert [t.key for t in tokens if isinstance(t, events.Key)] == ["a", "b"]
    assert [t.appearance for t in tokens if isinstance(t, TerminalColorScheme)] == ["light"]
