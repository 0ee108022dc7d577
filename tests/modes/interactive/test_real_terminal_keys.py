"""Keys between a real terminal and the app: the ``/`` menu by arrows, Alt+Enter as ESC CR, PageUp."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text

from .test_real_terminal import _env as terminal_env
from .test_tmux_warning import fake_tmux

pytestmark = pytest.mark.slow

ARGV = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]


def test_arrow_keys_reach_the_last_command_of_the_slash_menu(tmp_path: Path, isolated_home: Path) -> None:
    from pi_tui.modes.commands import BUILTIN_COMMANDS
    from pi_tui.modes.interactive.commands import APP_COMMANDS, MENU_ORDER, load_screen_commands

    names = list(dict.fromkeys([*APP_COMMANDS, *BUILTIN_COMMANDS, *load_screen_commands()[0]]))
    names.sort(key=lambda name: MENU_ORDER.index(name) if name in MENU_ORDER else len(MENU_ORDER))
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    with fake.serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("/")
            term.wait_for(f"(1/{len(names)})")
            for _ in range(len(names) - 1):
                term.send("\x1b[B")  # Down
            term.wait_for(f"({len(names)}/{len(names)})")
            assert names[-1] in term.text()
            term.send("\t")
            term.wait_for(f"/{names[-1]} ")
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def test_in_tmux_without_extended_keys_alt_enter_queues_a_follow_up_and_the_app_warns(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("Counting " + " ".join(f"w{i}" for i in range(300)))], frame_delay=0.1),
            Reply([text("FOLLOWUPANSWER")]),
        ]
    )
    with fake.serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        env.update(fake_tmux(tmp_path, "off"))  # a tmux whose extended-keys option is off
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.wait_for("tmux extended-keys is off")
            term.send("count slowly\r")
            term.wait_for("Counting", timeout=30)
            term.send("afterwards")
            term.wait_for("afterwards")
            term.send("\x1b\r")  # Alt+Enter as xterm and tmux (without extended keys) send it
            term.wait_for("Follow-up: afterwards")
            assert "Steering:" not in term.text()
            term.send("\x1b")  # Escape: abort; the queued follow-up comes back to the editor
            term.wait_for(lambda s: "Follow-up:" not in s and "afterwards" in s, timeout=30)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def test_page_up_scrolls_the_chat_and_sending_goes_back_to_the_end(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("\n\n".join(f"LINE{i:03d}" for i in range(1, 151)))]),
            Reply([text("SECONDANSWER")]),
        ]
    )
    with fake.serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("many lines\r")
            term.wait_for("LINE150", timeout=30)
            term.send("\x1b[5~")  # PageUp
            term.wait_for(lambda s: "LINE150" not in s and "LINE135" in s)
            term.send("\x1b[5~")
            term.wait_for(lambda s: "LINE135" not in s and "LINE125" in s)
            term.send("\x1b[6~")  # PageDown
            term.wait_for(lambda s: "LINE135" in s and "LINE150" not in s)
            term.send("next\r")
            term.wait_for("SECONDANSWER", timeout=30)  # the view went back to the end
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def test_the_transcript_search_key_finds_an_earlier_line_in_a_real_terminal(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    fake.script(
        [Reply([text("\n\n".join(f"ROW{i:03d}" for i in range(1, 121)) + "\n\nfind the Walrus here")])]
    )
    with fake.serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("many rows\r")
            term.wait_for("ROW120", timeout=30)
            term.send("\x1b[102;6u")  # Ctrl+Shift+F as a terminal with the kitty keyboard protocol sends it
            term.wait_for("Find in transcript")
            term.send("row007")
            term.wait_for(lambda s: "1/1" in s and "ROW007" in s and "ROW120" not in s)
            term.send("\x1b[102;6u")  # the search key again closes the box
            term.wait_for(lambda s: "1/1" not in s and "ROW007" in s)
            term.send("\x1b[102;6u")
            term.wait_for("Find in transcript")
            term.send("walrus")
            term.wait_for(lambda s: "1/1" in s and "Walrus" in s)
            term.send("\x1b")  # Escape closes it; typing goes to the editor again
            term.wait_for(lambda s: "1/1" not in s)
            term.send("typed after")
            term.wait_for("typed after")
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
