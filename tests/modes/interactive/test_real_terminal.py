"""The real ``pi-tui`` in a pseudo-terminal against the fake server, its screen read through pyte."""

from __future__ import annotations

import json
import os
import sys
import termios
import time
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text, tool_call

pytestmark = pytest.mark.slow


def _env(home: Path, agent_dir: Path, server: object) -> dict[str, str]:
    config = {
        "providers": {
            "fake": {
                "baseUrl": server.anthropic_base_url,  # type: ignore[attr-defined]
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [{"id": "claude-fake", "contextWindow": 200_000, "maxTokens": 8192}],
            }
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(config))
    return {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }


def test_prompt_answer_tool_call_steer_abort_and_quit_in_a_terminal(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the secret word is PAPAYA\n")
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("Let me look. "), tool_call("read", {"path": "notes.txt"})]),
            Reply([text("The file says PAPAYA, so the answer is STREAMEDANSWER.")]),
            # A slow answer: one word every 0.2 s, so a steering message can be queued and Escape pressed.
            Reply([text("Counting " + " ".join(f"w{i}" for i in range(200)))], frame_delay=0.2),
        ]
    )
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)  # the footer shows the model: the session is ready
            term.send("what does notes.txt say?")
            term.wait_for("what does notes.txt say?")
            term.send("\r")
            term.wait_for("STREAMEDANSWER", timeout=30)
            screen = term.text()
            assert "read" in screen and "notes.txt" in screen and "✓" in screen  # the tool call block
            term.send("count slowly\r")
            term.wait_for("Counting", timeout=30)
            term.send("and faster\r")  # Enter while the answer streams: a steering message
            term.wait_for("Steering: and faster")
            term.send("\x1b")  # Escape: abort; the queued text comes back to the editor
            term.wait_for(lambda s: "Operation aborted" in s or "aborted" in s.lower(), timeout=30)
            term.wait_for(lambda s: "Steering:" not in s and "and faster" in s)  # back in the editor
            term.send("\x03")  # Ctrl+C clears the editor …
            term.send("\x03")  # … and a second one quits
            code = term.wait_exit(timeout=20)
            after = termios.tcgetattr(term.fd)
        out = term.transcript_text()
    assert code == 0
    assert "\x1b[?1049h" in out and out.rfind("\x1b[?1049l") > out.rfind("\x1b[?1049h")  # alt screen left
    assert out.rfind("\x1b[?25h") > out.rfind("\x1b[?25l")  # cursor shown again
    assert after[3] & termios.ICANON and after[3] & termios.ECHO  # line editing and echo restored
    assert "To resume this session: pi-tui --session" in out
    assert len(fake.requests) == 3


def test_sigterm_quits_cleanly_and_restores_the_terminal(tmp_path: Path, isolated_home: Path) -> None:
    import signal

    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    fake.script([Reply([text("SAVEDANSWER")])])
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("hello\r")
            term.wait_for("SAVEDANSWER", timeout=30)
            os.kill(term.pid, signal.SIGTERM)
            code = term.wait_exit(timeout=20)
            after = termios.tcgetattr(term.fd)
        out = term.transcript_text()
    assert code == 143  # 128 + SIGTERM, as print and rpc modes exit
    assert out.rfind("\x1b[?1049l") > out.rfind("\x1b[?1049h")
    assert after[3] & termios.ICANON and after[3] & termios.ECHO
    sessions = list((isolated_home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1
    lines = [json.loads(line) for line in sessions[0].read_text().splitlines()]
    assert any("SAVEDANSWER" in json.dumps(entry) for entry in lines)


def test_ctrl_g_edits_the_prompt_in_the_external_editor(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    editor = tmp_path / "fake-editor.sh"
    editor.write_text('#!/bin/sh\nprintf "%s plus EXTERNALTEXT\\n" "$(cat "$1")" > "$1"\n')
    editor.chmod(0o755)
    fake = FakeLLM()
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        env["EDITOR"] = str(editor)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("draft")
            term.wait_for("draft")
            term.send("\x07")  # Ctrl+G
            term.wait_for("draft plus EXTERNALTEXT", timeout=20)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def test_ctrl_g_with_a_missing_editor_says_so_and_the_app_keeps_running(
    tmp_path: Path, isolated_home: Path
) -> None:
    """An editor command that does not exist must not leave the app suspended (blank screen, keys echoed
    by the terminal): the app comes back, says why, and the draft is still there."""
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        env["EDITOR"] = str(tmp_path / "no-such-editor")
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("draft")
            term.wait_for("draft")
            term.send("\x07")  # Ctrl+G
            term.wait_for("Cannot run the external editor", timeout=20)
            term.send(" more")
            term.wait_for("draft more")  # typed into the editor, not echoed by a suspended terminal
            term.wait_for("claude-fake")  # the footer is drawn again
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def _write_old_session(project: Path) -> None:
    """One earlier session of ``project``: a question (OLDSESSIONQUESTION) and its answer ("old answer")."""
    from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
    from pi_tui.session import SessionManager

    old = SessionManager.create(project.resolve(), session_dir=None)
    old.append_message(UserMessage(content="OLDSESSIONQUESTION"))
    old.append_message(
        AssistantMessage(content=[TextContent(text="old answer")], provider="fake", model="claude-fake")
    )
    old.close()


def test_dash_r_in_a_terminal_opens_the_resume_picker(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent_dir = isolated_home / ".pi" / "agent"
    fake = FakeLLM()
    with fake.serve() as server:
        env = _env(isolated_home, agent_dir, server)
        _write_old_session(project)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake", "-r"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("OLDSESSIONQUESTION", timeout=30)  # listed, not loaded: the new session is empty
            term.send("\x1b")  # no choice: leave, as pi does, saying so and keeping nothing
            assert term.wait_exit(timeout=20) == 0
            assert "No session selected" in term.transcript_text()
    assert len(list((agent_dir / "sessions").rglob("*.jsonl"))) == 1  # only the old one


def test_dash_r_then_a_later_resume_closed_does_not_leave(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent_dir = isolated_home / ".pi" / "agent"
    fake = FakeLLM()
    with fake.serve() as server:
        env = _env(isolated_home, agent_dir, server)
        _write_old_session(project)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake", "-r"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("OLDSESSIONQUESTION", timeout=30)
            term.send("\r")  # resume it: the -r picker did its job
            term.wait_for(lambda s: "Esc close" not in s and "old answer" in s, timeout=20)
            term.send("/resume\r")
            term.wait_for("Esc close", timeout=20)
            term.send("\x1b")  # a /resume of one's own: closing it only closes it
            term.wait_for(lambda s: "Esc close" not in s)
            term.send("STILLHERE")
            term.wait_for("STILLHERE")
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
            assert "No session selected" not in term.transcript_text()


def test_context_and_tree_in_a_terminal_jump_back_and_branch(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    fake.script([Reply([text("FIRSTA")]), Reply([text("SECONDA")]), Reply([text("THIRDA")])])
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("FIRSTQ\r")
            term.wait_for("FIRSTA", timeout=30)
            term.send("SECONDQ\r")
            term.wait_for("SECONDA", timeout=30)
            term.send("/context\r")
            term.wait_for(lambda s: "Next request" in s and "cache breakpoint" in s, timeout=20)
            term.send("\x1b")
            term.wait_for(lambda s: "cache breakpoint" not in s)
            term.send("/tree\r")
            term.wait_for("Session Tree", timeout=20)
            term.send("firstq")  # type to search (capitals are keys here: Shift+T, Shift+L)
            term.wait_for(lambda s: "SECONDQ" not in s.split("Session Tree", 1)[-1])
            term.send("\r")  # jump to the first question: its text comes back to the editor
            term.wait_for("Summarize branch?", timeout=20)
            term.send("\r")  # "No summary"
            # Back on the chat, which now ends before the first question: its text is in the editor.
            term.wait_for(
                lambda s: (
                    "Summarize branch?" not in s
                    and "Session Tree" not in s
                    and "FIRSTQ" in s
                    and "FIRSTA" not in s
                )
            )
            term.send("\x03")  # clear the prefilled editor
            term.send("THIRDQ\r")
            term.wait_for("THIRDA", timeout=30)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
    assert len(fake.requests) == 3
    sessions = list((isolated_home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1
    entries = [json.loads(line) for line in sessions[0].read_text().splitlines()]

    def user(word: str) -> dict:
        return next(e for e in entries if e.get("type") == "message" and word in json.dumps(e.get("message")))

    assert any("SECONDA" in json.dumps(e) for e in entries)  # the first branch is kept …
    assert user("THIRDQ")["parentId"] == user("FIRSTQ")["parentId"]  # … and the new one starts beside it


def test_a_prompt_typed_while_the_interface_loads_is_sent_by_its_enter(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Textual takes most of a second to put the terminal in raw mode; the terminal's line mode turned
    an Enter typed meanwhile into a line feed, which reached the editor as Ctrl+J: the prompt stayed in
    the editor with a new line after it. The terminal is held from the moment the interface is chosen
    (Enter stays a carriage return, nothing echoes), and afterwards it is as it was before, in full."""
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    fake.script([Reply([text("EARLYANSWER")])])
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            before = termios.tcgetattr(term.fd)

            def typed_ahead() -> bool:
                """Line mode is off but Textual's raw mode (which also stops Ctrl+C signals) is not on."""
                lflag = termios.tcgetattr(term.fd)[3]
                return not lflag & termios.ICANON and bool(lflag & termios.ISIG)

            deadline = time.monotonic() + 30
            while not typed_ahead():  # polled: nothing is drawn while Textual loads
                assert time.monotonic() < deadline, "the terminal never left line mode before raw mode"
                term.pump(0.001)
            term.send("typed ahead\r")
            term.wait_for("EARLYANSWER", timeout=30)
            term.send("\x04")  # Ctrl+D on the empty editor: quit
            assert term.wait_exit(timeout=20) == 0
            after = termios.tcgetattr(term.fd)
    assert [m["content"] for m in fake.requests[0].messages if m["role"] == "user"][-1][-1]["text"] == (
        "typed ahead"
    )
    assert after[:3] == before[:3] and after[3] == before[3]  # iflag, oflag, cflag, lflag all back
