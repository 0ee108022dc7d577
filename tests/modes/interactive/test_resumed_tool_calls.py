"""A finished tool call is shown finished (✓ and its output) however the chat's mounted window falls:
its result may be processed before its call's block exists (a resumed session, blocks mounted on scroll)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call
from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_tui.modes.interactive.blocks import ToolBlock
from pi_tui.modes.interactive.chat import ChatLog
from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.session import SessionManager

from .helpers import card_lines, make_app, type_text, until


def write_session(project: Path) -> Path:
    """A session whose tool result is the first of the last ``ChatLog.INITIAL`` items once loaded."""
    manager = SessionManager.create(project.resolve(), session_dir=None)
    manager.append_message(UserMessage(content="run echo hi"))
    manager.append_message(
        AssistantMessage(
            content=[ToolCall(id="call_echo", name="bash", arguments={"command": "echo hi"})],
            provider="faux",
            model="faux-1",
            stop_reason="toolUse",
        )
    )
    manager.append_message(
        ToolResultMessage(tool_call_id="call_echo", tool_name="bash", content=[TextContent(text="hi\n")])
    )
    for word in ("done", "second", "third"):
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"ANSWER {word}")], provider="faux", model="faux-1")
        )
        if word != "third":
            manager.append_message(UserMessage(content=f"and {word}?"))
    path = Path(manager.path)
    manager.close()
    return path


def all_mounted(chat: ChatLog) -> bool:
    while chat.first_mounted > 0:
        chat.load_earlier()
    return True


async def test_a_resumed_tool_call_whose_result_starts_the_window_is_shown_finished(
    tmp_path: Path, agent_dir: Path
) -> None:
    path = write_session(tmp_path)
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        items = app.chat.items
        first = items[len(items) - ChatLog.INITIAL]
        assert isinstance(first, ToolResultMessage)  # the case: the result opens the mounted window
        all_mounted(app.chat)
        await until(pilot, lambda: "call_echo" in app.chat.tools and app.chat.tools["call_echo"].is_mounted)
        tool = app.chat.tools["call_echo"]
        assert tool.done and not tool.is_error and tool.result_text == "hi\n"
        assert "-success" in tool.classes and "-running" not in tool.classes


async def test_a_tool_block_pruned_and_mounted_again_keeps_its_result(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ChatLog, "WINDOW", 4)
    monkeypatch.setattr(ChatLog, "BATCH", 2)
    script = FauxScript(
        faux_reply(faux_tool_call("bash", {"command": "echo live"}, id="call_live")),
        faux_reply("ran it"),
        *[faux_reply(f"answer {i}") for i in range(4)],
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for prompt in ("run echo live", "one", "two", "three", "four"):
            await type_text(pilot, prompt)
            await pilot.press("enter")
            await until(pilot, lambda: not app._busy and not app.session.is_streaming)
        assert "call_live" not in app.chat.tools  # pruned from the window
        all_mounted(app.chat)
        await until(pilot, lambda: "call_live" in app.chat.tools and app.chat.tools["call_live"].is_mounted)
        tool = app.chat.tools["call_live"]
        assert tool.done and tool.result_text.strip() == "live"
        assert isinstance(tool, ToolBlock)
        # the answers mounted again show their text (the chat kept the ended message, not its start);
        # the window keeps its size going up, so the answer after the call may come back on the way down
        for _ in range(len(app.chat.items)):
            if any(block.text == "ran it" for block in app.chat.query(AssistantText)):
                break
            assert app.chat.load_later()
            await pilot.pause()
        assert any(block.text == "ran it" for block in app.chat.query(AssistantText))


@pytest.mark.slow
def test_a_resumed_finished_tool_call_shows_its_mark_and_output_in_a_terminal(
    tmp_path: Path, isolated_home: Path
) -> None:
    agent_dir = isolated_home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "faux"}))
    project = tmp_path / "project"
    project.mkdir()
    path = write_session(project)
    env = {
        "HOME": str(isolated_home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    argv = [sys.executable, "-m", "pi_tui", "--provider", "faux", "--session", str(path)]
    with PtyScreen(argv, cwd=project, env=env, columns=100, lines=40) as term:
        term.wait_for(lambda s: "ANSWER third" in s and "$ echo hi" in s, timeout=30)
        term.drain(0.3)
        screen = term.text()
        term.send("\x03\x03")
        assert term.wait_exit(timeout=20) == 0
    line = next(row for row in screen.splitlines() if "$ echo hi" in row)
    assert "✓" in line and "…" not in line, screen


async def test_a_card_finished_before_it_is_mounted_is_styled_when_mounted_not_before(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading a long session up builds finished cards from history before mounting them: their class
    # changes (running -> success) restyled each one twice for nothing; they are styled once, as mounted.
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        live = ToolBlock("call_live", "bash", {"command": "echo hi"})
        await app.chat.mount(live)
        live.set_result("hi", False)  # a card finishing on screen, as before
        styled: list[object] = []
        update_nodes = app.stylesheet.update_nodes

        def counting(nodes: Any, animate: bool = False) -> None:
            nodes = list(nodes)
            styled.extend(nodes)
            update_nodes(nodes, animate=animate)

        monkeypatch.setattr(app.stylesheet, "update_nodes", counting)
        card = ToolBlock("call_history", "bash", {"command": "echo hi"})
        card.set_result("hi", False)
        assert styled == []
        await app.chat.mount(card)
        await pilot.pause()
        assert card.has_class("-success") and not card.has_class("-running")
        assert card.styles.background == live.styles.background != app.chat.styles.background


async def test_a_resumed_tool_call_that_never_got_a_result_is_not_shown_running(
    tmp_path: Path, agent_dir: Path
) -> None:
    manager = SessionManager.create(tmp_path.resolve(), session_dir=None)
    manager.append_message(UserMessage(content="clean the build"))
    manager.append_message(
        AssistantMessage(
            content=[ToolCall(id="call_rm", name="bash", arguments={"command": "rm -rf build"})],
            provider="faux",
            model="faux-1",
            stop_reason="toolUse",
        )
    )  # the terminal was closed while the tool waited (a permission question): no result was written
    path = Path(manager.path)
    manager.close()
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: "call_rm" in app.chat.tools and app.chat.tools["call_rm"].is_mounted)
        tool = app.chat.tools["call_rm"]
        assert tool.done and tool.is_error and "-running" not in tool.classes
        assert "interrupted" in tool.result_text


async def test_a_card_is_one_widget_drawing_its_title_output_hints_and_timing(
    tmp_path: Path, agent_dir: Path
) -> None:
    # A long chat's window is mostly tool cards, and every layout and collection walks each mounted
    # widget: a card draws its title, its output, the dim hint around cut output and bash's timing
    # itself (a title and an output widget inside each card before, and a widget for each dim line).
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        card = ToolBlock("call_short", "write", {"path": "a.txt", "content": "one line"})
        card.set_result("ok", False)
        await app.chat.mount(card)
        await pilot.pause()
        assert not card.children
        assert card_lines(card) == ["✓ write a.txt", "+one line"]
        assert card.size.height == 2
        card.args = {"path": "a.txt", "content": "".join(f"line {n}\n" for n in range(30))}
        card.refresh_expansion()  # now cut: the hint below the output
        await pilot.pause()
        lines = card_lines(card)
        assert lines[1:3] == ["+line 0", "+line 1"] and lines[10:] == [
            "+line 9",
            "... (20 more lines, 30 total, ctrl+o to expand)",
        ]
        assert card.size.height == 12 and not card.children
        bash = ToolBlock("call_bash", "bash", {"command": "seq 1 30"})
        await app.chat.mount(bash)
        bash.mark_started()
        bash.set_result("".join(f"{n}\n" for n in range(1, 31)), False)
        await pilot.pause()
        lines = card_lines(bash)
        assert lines[:3] == ["✓ $ seq 1 30", "... (25 earlier lines, ctrl+o to expand)", "26"], lines
        assert lines[6] == "30" and lines[7].startswith("Took ") and len(lines) == 8
        assert bash.size.height == 8 and not bash.children
