"""Quitting leaves the conversation in the terminal, as pi does (its full-screen mode prints it, by default,
when it leaves the alternate screen; its regular mode leaves it in the scrollback)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.modes.interactive.exit_transcript import MAX_MESSAGES, transcript
from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

from .helpers import make_app, type_text, until
from .test_real_terminal import _env


def _exchange() -> list[object]:
    return [
        UserMessage(content="what is in a.py?"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="Better look."),
                TextContent(text="Reading it."),
                ToolCall(id="c1", name="read", arguments={"path": "a.py"}),
                ToolCall(id="c2", name="bash", arguments={"command": "cat nope"}),
            ],
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="x = 1")]),
        ToolResultMessage(
            tool_call_id="c2", tool_name="bash", content=[TextContent(text="no")], is_error=True
        ),
        AssistantMessage(content=[TextContent(text="It sets **x** to 1.")]),
    ]


def test_the_transcript_has_prompts_answers_thinking_and_one_line_per_tool_call() -> None:
    text_out = transcript(_exchange(), color=False)  # type: ignore[arg-type]
    assert text_out == (
        "what is in a.py?\n\nBetter look.\n\nReading it.\n\n✓ read a.py\n\n✗ bash $ cat nope\n\n"
        "It sets **x** to 1.\n"
    )
    assert transcript([], color=False) == ""


def test_hidden_thinking_leaves_pis_label_in_its_place() -> None:
    hidden = transcript(_exchange(), color=False, hide_thinking=True)  # type: ignore[arg-type]
    assert "Better look." not in hidden
    assert hidden.startswith("what is in a.py?\n\nThinking...\n\nReading it.\n\n")
    relabelled = transcript(_exchange(), color=False, hide_thinking=True, thinking_label="Pondering")  # type: ignore[arg-type]
    assert "\n\nPondering\n\n" in relabelled


def test_long_lines_are_wrapped_between_words_at_the_terminal_width() -> None:
    answer = (
        "The parser reads each token in turn and hands it to the checker.\n\n"
        "- a list item long enough to need a second line at this width\n"
        "- short\n"
        "  - a nested item that also runs past the width of the terminal"
    )
    messages = [
        UserMessage(content="explain the parser in some detail please, I have time"),
        AssistantMessage(content=[ThinkingContent(thinking="- first\n- a thought too long for one line here")]),
        AssistantMessage(content=[TextContent(text=answer), TextContent(text="x" * 70)]),
    ]
    out = transcript(messages, color=True, width=30)  # type: ignore[arg-type]
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    lines = plain.split("\n")
    assert all(len(line) <= 30 for line in lines), lines
    assert lines[:2] == ["explain the parser in some", "detail please, I have time"]
    assert "- a list item long enough to" in lines and "  need a second line at this" in lines
    assert "  - a nested item that also" in lines and "    runs past the width of the" in lines
    assert "- a thought too long for one" in lines and "  line here" in lines
    assert ["x" * 30, "x" * 30, "x" * 10] == [line for line in lines if line.startswith("x")]
    # each line styled on its own: no style runs on past a line's end into the terminal's next row
    assert all(line.endswith("\x1b[0m") for line in out.split("\n") if line.startswith("\x1b["))


def test_a_tool_call_that_never_got_a_result_is_marked_failed_not_done() -> None:
    stopped = [
        UserMessage(content="clean up"),
        AssistantMessage(
            content=[ToolCall(id="c9", name="bash", arguments={"command": "rm -rf build"})],
            stop_reason="toolUse",
        ),
    ]  # the run was stopped while the tool waited: no result
    assert transcript(stopped, color=False) == "clean up\n\n✗ bash $ rm -rf build\n"  # type: ignore[arg-type]


def test_a_long_session_writes_its_last_messages_and_says_how_many_came_before() -> None:
    messages = [UserMessage(content=f"prompt {i}") for i in range(MAX_MESSAGES + 5)]
    lines = transcript(messages, color=False).split("\n\n")  # type: ignore[arg-type]
    assert lines[0] == "… 5 earlier messages" and lines[1] == "prompt 5" and len(lines) == MAX_MESSAGES + 1


async def test_resume_hint_setting_leaves_only_the_resume_line(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"fullscreenExitOutput": "resume-hint"}))
    script = FauxScript(faux_reply("the answer"), faux_reply("the answer"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 1 and not app._busy)
        await app.action_quit()
    assert app.exit_message is not None and app.exit_message.startswith("To resume this session")
    assert app.exit_transcript(color=False) == ""


@pytest.mark.slow
def test_after_quitting_the_conversation_is_on_the_normal_screen_above_the_resume_line(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("PAPAYA\n")
    fake = FakeLLM()
    fake.script([Reply([tool_call("read", {"path": "notes.txt"})]), Reply([text("The word is **PAPAYA**.")])])
    with fake.serve() as server:
        env = _env(isolated_home, isolated_home / ".pi" / "agent", server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("what does notes.txt say?")
            term.wait_for("what does notes.txt say?")
            term.send("\r")
            term.wait_for("PAPAYA.", timeout=30)
            term.send("\x04")  # Ctrl+D on the empty editor quits
            assert term.wait_exit(timeout=20) == 0
            out = term.transcript_text()
    after = out[out.rfind("\x1b[?1049l") :]  # written once the alternate screen was left
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", after)  # a terminal: styled, so drop the styles
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    assert lines[:3] == ["what does notes.txt say?", "✓ read notes.txt", "The word is **PAPAYA**."], lines
    assert lines[3].startswith("To resume this session: pi-tui --session ") and len(lines) == 4
    assert "\x1b[1mwhat does notes.txt say?\x1b[0m" in after  # the prompt in bold


@pytest.mark.slow
def test_the_conversation_left_after_quitting_is_wrapped_by_the_app_not_the_terminal(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent_dir = isolated_home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"hideThinkingBlock": True}))
    answer = "The checker walks every branch of the tree and reports each unreachable statement it finds."
    fake = FakeLLM()
    fake.script([Reply([thinking("a private thought"), text(answer)])])
    with fake.serve() as server:
        env = _env(isolated_home, agent_dir, server)
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=60, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("check it")
            term.wait_for("check it")
            term.send("\r")
            term.wait_for("statement it", timeout=30)
            term.send("\x04")
            assert term.wait_exit(timeout=20) == 0
            out = term.transcript_text()
    after = out[out.rfind("\x1b[?1049l") :]
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", after).replace("\r", "")
    rows = [row for row in plain.split("\n") if row.strip()]
    assert rows[:2] == ["check it", "Thinking..."], rows  # the hidden thought keeps its place, as in pi
    assert all(len(row) <= 60 for row in rows[:-1]), rows  # (the resume line is the app's last word)
    assert " ".join(rows[2:-1]) == answer  # broken between words only
