"""The line mode in a real pseudo-terminal, read through pyte, against the fake LLM server."""

from __future__ import annotations

import json
import os
import signal
import sys
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.modes.prompt_history import history_path
from pi_tui.testing import FakeLLM, Fault, Reply, text, tool_call
from tests.e2e.helpers import write_models_json

pytestmark = pytest.mark.slow

MODEL = "fake-openai/gpt-fake"


def _env(term: str = "xterm-256color") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_CURRENT_TEST", "NO_COLOR", "COLUMNS", "LINES")
    }
    env["TERM"] = term
    return env


def _prompt_shown(screen: str) -> bool:
    """A ``>`` prompt with nothing typed after it on the last non-empty line."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return bool(lines) and lines[-1] == ">"


@contextmanager
def _plain(repo: Path, *extra: str, term: str = "xterm-256color") -> Iterator[PtyScreen]:
    argv = [sys.executable, "-m", "pi_tui", "--model", MODEL, *extra]
    with PtyScreen(argv, cwd=repo, env=_env(term), columns=100, lines=40) as screen:
        yield screen


def test_prompt_tool_call_answer_slash_command_and_quit(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "notes.txt").write_text("the secret word is lemon\n")
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("Let me read it."), tool_call("read", {"path": "notes.txt"})]),
            Reply([text("The secret word is lemon.")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            assert "line mode" in term.text()
            term.send("what does notes.txt say?\r")
            term.wait_for("→ read notes.txt")
            term.wait_for("The secret word is lemon.")
            term.wait_for(_prompt_shown)
            # Tab completes a built-in command from its first letters, then it runs.
            term.send("/sess")
            term.wait_for("Session file, id")
            term.send("\t")
            term.wait_for(lambda s: "> /session" in s)
            term.send("\r")
            term.wait_for("Messages: 1 user, 2 assistant, 1 tool calls, 1 tool results")
            term.wait_for(_prompt_shown)
            term.send("\x04")  # Ctrl+D on an empty line quits
            assert term.wait_exit() == 0
    fake.assert_script_consumed()
    assert fake.violations == []
    assert "lemon" in json.dumps(fake.requests[-1].body)  # the tool result reached the model
    screen = term.text()
    assert (
        screen.index("what does notes.txt say?")
        < screen.index("→ read notes.txt")
        < screen.index("The secret word is lemon.")
    )


def test_answer_streams_and_escape_aborts_it(tmp_path: Path, agent_dir: Path) -> None:
    words = " ".join(f"word{i}" for i in range(40))
    fake = FakeLLM()
    fake.script(
        [
            Fault("stall", after_frames=6, stall_seconds=30, reply=Reply([text(words)])),
            Reply([text("Second answer.")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            term.send("count\r")
            # The first words are on screen while the server holds back the rest: the answer streams.
            term.wait_for("word1 word2")
            assert "word39" not in term.text()
            term.send("\x1b")  # Escape
            term.wait_for("Aborted.")
            term.wait_for(_prompt_shown)
            term.send("again\r")
            term.wait_for("Second answer.")
            term.wait_for(_prompt_shown)
            term.send("\x03")  # Ctrl+C on an empty line: a hint, twice quits
            term.wait_for("Ctrl+C again")
            term.send("\x03")
            assert term.wait_exit() == 0


def test_history_is_saved_per_project_and_recalled_with_up(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("First.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            term.send("remember this prompt\r")
            term.wait_for("First.")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
        lines = history_path(tmp_path.resolve(), agent_dir).read_text().splitlines()
        assert [json.loads(line) for line in lines] == ["remember this prompt"]
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            term.send("\x1b[A")  # Up
            term.wait_for("> remember this prompt")
            term.send("\x03\x04")
            assert term.wait_exit() == 0


def test_dumb_terminal_gets_the_line_mode_without_the_flag(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("Plain answer.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, term="dumb") as term:
            term.wait_for("line mode")
            term.send("hi\r")
            term.wait_for("Plain answer.")
            term.send("/quit\r")
            assert term.wait_exit() == 0
    assert "\x1b[2m" not in term.transcript_text()  # no colours for a dumb terminal


def test_permission_gate_asks_on_a_line_and_no_blocks_the_command(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "keep.txt").write_text("x")
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("bash", {"command": "rm -rf build"})]),
            Reply([text("Understood, I left it.")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain", "-e", "permission_gate") as term:
            term.wait_for(_prompt_shown)
            term.send("clean up\r")
            term.wait_for("[y/N]")
            term.send("n\r")
            term.wait_for("Understood, I left it.")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
    assert (tmp_path / "build" / "keep.txt").exists()
    tool_result = json.dumps(fake.requests[-1].body)
    assert "rm -rf build" in tool_result and "keep.txt" not in tool_result


def test_sigterm_while_streaming_restores_the_terminal_and_keeps_the_session(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script(
        [Fault("stall", after_frames=4, stall_seconds=30, reply=Reply([text("alpha beta gamma delta")]))]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            term.send("go\r")
            term.wait_for("alpha")
            # The answer streams: stdin is in raw mode (no echo, no line editing) to catch Escape.
            assert not termios.tcgetattr(term.fd)[3] & termios.ICANON
            os.kill(term.pid, signal.SIGTERM)
            assert term.wait_exit() == 128 + signal.SIGTERM
            cooked = termios.ICANON | termios.ECHO | termios.ISIG  # what a fresh terminal has
            assert termios.tcgetattr(term.fd)[3] & cooked == cooked
            assert "Stopped by SIGTERM" in term.text()
    sessions = list((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1
    entries = [json.loads(line) for line in sessions[0].read_text().splitlines()]
    assert any(e.get("message", {}).get("role") == "user" for e in entries)


def test_model_switch_by_text_and_thinking_picked_from_a_numbered_list(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("From the Anthropic side.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:  # starts on fake-openai/gpt-fake
            term.wait_for(_prompt_shown)
            term.send("/model fake-anthropic/claude-fake\r")
            term.wait_for("Model: fake-anthropic/claude-fake")
            term.send("/thinking\r")
            term.wait_for("1. off")
            term.send("1\r")
            term.wait_for("Thinking level: off")
            term.send("hello\r")  # typed ahead: the prompt may not be back yet, Enter must still send
            term.wait_for("From the Anthropic side.")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
    assert [r.api for r in fake.requests] == ["anthropic"]


def test_model_with_a_partial_name_opens_the_picker_as_the_tui_does(tmp_path: Path, agent_dir: Path) -> None:
    """``/model ARG`` is the TUI's (and pi's) rule in the line mode too: an exact ``provider/id`` or unique
    id (``:level`` may follow) switches at once, anything else is the picker's search, never a guess."""
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:  # starts on fake-openai/gpt-fake
            term.wait_for(_prompt_shown)
            term.send("/model claude\r")
            term.wait_for("Choose 1-")
            screen = term.text()
            assert "Select model" in screen and "1. fake-anthropic/claude-fake" in screen
            assert "Model: fake-anthropic/claude-fake" not in screen  # not switched by a guess
            term.send("1\r")
            term.wait_for("Model: fake-anthropic/claude-fake")
            term.wait_for(_prompt_shown)
            term.send("/model gpt-fake-r:low\r")  # a unique id with a level: at once
            term.wait_for("Model: fake-responses/gpt-fake-r")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
    assert fake.requests == []


def test_bang_command_output_reaches_the_model_and_double_bang_does_not(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("Seen.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            term.send("!echo shared-$((40 + 2))\r")
            term.wait_for("shared-42")
            term.wait_for(_prompt_shown)
            term.send("!!echo private-$((1 + 1))\r")
            term.wait_for("private-2")
            term.wait_for(_prompt_shown)
            term.send("what did the shell say?\r")
            term.wait_for("Seen.")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
    body = json.dumps(fake.requests[-1].body)
    assert "shared-42" in body and "private-2" not in body


def test_continuing_a_session_shows_its_last_exchange(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("The capital of France is Paris.")]), Reply([text("Berlin.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            term.send("capital of france?\r")
            term.wait_for("Paris.")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
        with _plain(tmp_path, "--plain", "-c") as term:
            term.wait_for(_prompt_shown)
            screen = term.text()
            assert "Resumed a session of 2 messages." in screen
            assert "> capital of france?" in screen and "The capital of France is Paris." in screen
            term.send("and germany?\r")
            term.wait_for("Berlin.")
            term.wait_for(_prompt_shown)
            term.send("\x04")
            assert term.wait_exit() == 0
    assert "capital of france?" in json.dumps(fake.requests[-1].body)


def test_dumb_terminal_ctrl_c_aborts_a_running_answer(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script(
        [
            Fault("stall", after_frames=4, stall_seconds=30, reply=Reply([text("one two three four five")])),
            Reply([text("Still here.")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, term="dumb") as term:
            term.wait_for("line mode")
            term.send("go\r")
            term.wait_for("one two")
            term.send("\x03")  # the terminal turns it into SIGINT (cooked mode)
            term.wait_for("Aborted.")
            term.send("again\r")
            term.wait_for("Still here.")
            term.send("/quit\r")
            assert term.wait_exit() == 0



def test_ctrl_c_is_never_the_terminals_interrupt_while_the_line_mode_runs(tmp_path: Path, agent_dir: Path) -> None:
    # prompt-toolkit leaves raw mode each time a prompt returns; until the next prompt or abort watcher
    # starts, the terminal is in its ordinary mode. A Ctrl+C typed in that gap (a quick second one to quit,
    # one while the quit hint is printed) was SIGINT and ended the process with 130. The line mode switches
    # the terminal's interrupt character off for its whole run, so the key waits for the next reader, and
    # puts it back on the way out.
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        with _plain(tmp_path, "--plain") as term:
            term.wait_for(_prompt_shown)
            slave = os.open(os.readlink(f"/proc/{term.pid}/fd/0"), os.O_RDWR | os.O_NOCTTY)
            try:
                assert termios.tcgetattr(slave)[6][termios.VINTR] == b"\x00"
                term.send("/quit\r")
                assert term.wait_exit() == 0
                assert termios.tcgetattr(slave)[6][termios.VINTR] == b"\x03"
            finally:
                os.close(slave)
