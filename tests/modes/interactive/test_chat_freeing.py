"""Blocks the chat unmounts are freed by reference counting, not left to the cycle collector.

Reading a long session up unmounts ~19 widgets a PageUp; left in reference cycles, they were freed by
full garbage collections of tens of thousands of objects in the middle of a held key. These tests run
with the collector off: a widget that is still alive once nothing refers to it is held by a cycle.
"""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.dom import DOMNode

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.modes.interactive import chat as chat_module
from pi_tui.modes.interactive.textual_private import with_component_nodes
from pi_tui.session import SessionManager

from .helpers import make_app, until


@pytest.fixture
def no_cycle_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def _session(path: Path, cwd: Path, exchanges: int) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(exchanges):
        manager.append_message(UserMessage(content=f"question {i}"))
        manager.append_message(
            AssistantMessage(
                content=[
                    ThinkingContent(thinking=f"Thinking about *{i}*: `read` it."),  # a Rich renderable
                    TextContent(
                        text=f"Answer **{i}**, in `code`.\n\nA second paragraph.\n\n```python\nprint({i})\n```"
                    ),
                    ToolCall(id=f"call-{i}", name="read", arguments={"path": f"file{i}.txt"}),
                ],
                provider="faux",
                model="faux-1",
            )
        )
        manager.append_message(
            ToolResultMessage(
                tool_call_id=f"call-{i}", tool_name="read", content=[TextContent(text=f"contents {i}")]
            )
        )
    manager.close()


@pytest.mark.usefixtures("no_cycle_collector")
async def test_blocks_leaving_the_window_are_freed_without_the_cycle_collector(
    tmp_path: Path, agent_dir: Path
) -> None:
    session_file = tmp_path / "long.jsonl"
    _session(session_file, tmp_path, 60)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.max_scroll_y > 0)
        await pilot.pause()
        chat = app.chat
        blocks = chat.mounted_blocks()
        nodes: list[DOMNode] = [node for block in blocks for node in block.walk_children(with_self=True)]
        kinds = {type(node).__name__ for node in nodes}
        assert {
            "UserBlock",
            "ThinkingBlock",
            "AssistantText",
            "ToolBlock",
        } <= kinds  # markdown with its paragraphs, tool cards
        # With the virtual nodes Markdown's component classes (em, strong, ...) are styled through.
        styled = with_component_nodes(nodes)
        assert len(styled) > len(nodes)
        gone = [weakref.ref(node) for node in styled]
        del styled
        del blocks, nodes
        chat.show_start()  # Alt+Home: the whole window is replaced by the conversation's first items
        await pilot.pause()

        def alive() -> list[str]:
            return [type(node).__name__ for ref in gone if (node := ref()) is not None]

        # Freed once the removal is done and the next layouts have replaced the old placements (before:
        # every one of them stayed until a full collection).
        await until(pilot, lambda: not alive())
        assert chat.first_mounted == 0


class _ChatClock:
    """The chat's clock (its ``time`` module), moved on only by the test: what counts as quiet is the time
    the test says passed, not the wall time of a busy machine (more than 2 s between two presses seen at
    load 16)."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now


async def test_full_collections_wait_while_the_reader_pages_up_and_run_once_it_stops(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_file = tmp_path / "long.jsonl"
    _session(session_file, tmp_path, 60)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    clock = _ChatClock()
    monkeypatch.setattr(chat_module, "time", clock)
    normal = gc.get_threshold()
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.max_scroll_y > 0)
        # The work ahead for the big screens runs with the collector off, and a press while it is off
        # holds nothing (no full collection can come then): the presses come once it is done (the first
        # press came while it ran on a loaded machine).
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
        assert gc.isenabled()
        full = gc.get_stats()[2]["collections"]
        await pilot.press("pageup")
        held = gc.get_threshold()
        clock.now += app.chat.QUIET / 2
        await pilot.press("pageup")
        clock.now += app.chat.QUIET / 2
        await pilot.pause(app.chat.QUIET * 1.5)  # the chat looks again once QUIET has passed since a press
        assert held[2] > normal[2] and gc.get_threshold() == held  # still held: quiet only since the second
        clock.now += app.chat.QUIET
        await until(pilot, lambda: gc.get_threshold() == normal)  # quiet: back to normal
        assert gc.get_stats()[2]["collections"] > full
