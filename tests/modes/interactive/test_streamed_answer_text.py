"""Every part of a streamed answer's text reaches the screen: an answer whose blocks the chat builds
again while it streams (its window moved over it: the reader went to the top of a long chat and came
back, or sent a message meanwhile) goes on in the new blocks, and text that reaches the message without
a delta of its own (a stream function of the SDK that opens a block with text, or sends the answer
whole) is shown too."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.registry import stream
from pi_tui.ai.stream import (
    Done,
    StreamEvent,
    StreamStart,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
)
from pi_tui.ai.types import AssistantMessage, TextContent, ThinkingContent, UserMessage
from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.blocks import ThinkingBlock
from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import make_app, submit, type_text, until

ANSWER = "Start of the answer.\nIts second line\n\n" + " ".join(f"w{i}" for i in range(60)) + " END"


def long_session(path: Path, cwd: Path) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(100):
        manager.append_message(UserMessage(content=f"question {i}"))
        manager.append_message(
            AssistantMessage(
                content=[TextContent(text=f"answer {i}")], provider="fake-anthropic", model="claude-fake"
            )
        )
    manager.close()


def paused_stream(gate: asyncio.Event, after: str) -> Any:
    """The real provider's stream from the fake server, held after the text delta that brings ``after``
    until ``gate`` is set."""

    async def stream_fn(model: Any, request: Any, options: Any) -> AsyncIterator[StreamEvent]:
        held = False
        async for event in stream(model, request, options):
            yield event
            if not held and isinstance(event, TextDelta):
                part = event.partial.content[event.content_index]
                if isinstance(part, TextContent) and after in part.text:
                    held = True
                    await gate.wait()

    return stream_fn


def drawn(app: PiApp) -> str:
    """The lines the chat's answer blocks draw, as plain text."""
    lines: list[str] = []
    for block in app.chat.query(AssistantText):
        for widget in block.walk_children(with_self=False):
            if widget.children or not widget.region.height:
                continue
            lines += [strip.text.strip() for strip in widget.render_lines(widget.region.reset_offset)]
    return "\n".join(line for line in lines if line)


@pytest.mark.parametrize("back", ["end key", "a message sent meanwhile", "end key after the answer ended"])
async def test_an_answer_streaming_while_the_reader_went_to_the_top_and_back_is_shown_whole(
    tmp_path: Path, agent_dir: Path, fake: FakeLLM, back: str
) -> None:
    """The reader went to the top of a long chat (its answer's blocks unmounted) and came back while the
    answer still streamed: the chat built the answer again from what had streamed, and the rest of the
    answer went to the old, unmounted blocks, so it stopped where it was (its end never shown)."""
    session_file = tmp_path / "long.jsonl"
    long_session(session_file, tmp_path)
    fake.script([Reply([text(ANSWER)]), Reply([text("steered reply")])])
    gate = asyncio.Event()

    def create(_trust: bool | None) -> Any:
        args = parse_args(["--model", "fake-anthropic/claude-fake", "--session", str(session_file)])
        return create_session(args, tmp_path, stream_fn=paused_stream(gate, "second"))

    app = PiApp(create, cwd=tmp_path, agent_dir=agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await until(pilot, lambda: "Its second" in drawn(app))
        app.action_scroll_chat("top")
        await until(pilot, lambda: app.chat.last_mounted is not None and "Its second" not in drawn(app))
        if back == "end key after the answer ended":
            gate.set()  # the answer ends while its blocks are unmounted
            await until(pilot, lambda: not app._busy and not app.session.is_streaming)
            app.action_scroll_chat("bottom")
        elif back == "end key":
            app.action_scroll_chat("bottom")
        else:
            await submit(pilot, app, "steer")
        await until(pilot, lambda: "Its second" in drawn(app))
        gate.set()
        await until(pilot, lambda: not app._busy and not app.session.is_streaming)
        await until(pilot, lambda: "END" in drawn(app))
        shown = drawn(app)
        assert "Start of the answer." in shown and "Its second line" in shown
        assert shown.count("Start of the answer.") == 1
        assert fake.violations == []


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)] if text else [], provider="faux", model="faux-1", api="faux"
    )


async def test_text_a_block_opened_with_is_shown_with_the_deltas_after_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    """A stream that opens a text block with its first words already in the message and streams the
    rest as deltas: the answer showed only the deltas, without its opening words, until the block ended."""
    gate = asyncio.Event()

    async def stream_fn(_model: Any, _request: Any, _options: Any) -> AsyncIterator[StreamEvent]:
        yield StreamStart(partial=answer(""))
        yield TextStart(content_index=0, partial=answer("Opening words"))
        yield TextDelta(content_index=0, delta=" and more", partial=answer("Opening words and more"))
        await gate.wait()
        whole = "Opening words and more, then the end."
        yield TextDelta(content_index=0, delta=", then the end.", partial=answer(whole))
        yield TextEnd(content_index=0, content=whole, partial=answer(whole))
        yield Done(reason="stop", message=answer(whole))

    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        assert app.session is not None
        app.session.agent.stream_fn = stream_fn
        await type_text(pilot, "go")
        await pilot.press("enter")
        await until(pilot, lambda: "and more" in drawn(app))
        assert "Opening words and more" in drawn(app)
        gate.set()
        await until(pilot, lambda: not app._busy and "the end." in drawn(app))
        assert drawn(app).count("Opening words") == 1


async def test_an_answer_that_comes_whole_without_deltas_is_shown(tmp_path: Path, agent_dir: Path) -> None:
    """A stream function that sends only the finished answer: nothing was drawn (the chat drew text only
    from deltas)."""

    async def stream_fn(_model: Any, _request: Any, _options: Any) -> AsyncIterator[StreamEvent]:
        yield Done(reason="stop", message=answer("The whole answer at once."))

    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        assert app.session is not None
        app.session.agent.stream_fn = stream_fn
        await type_text(pilot, "go")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and app.session is not None and not app.session.is_streaming)
        await until(pilot, lambda: "The whole answer at once." in drawn(app))


def thought(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[ThinkingContent(thinking=text)] if text else [], provider="faux", model="faux-1", api="faux"
    )


async def test_thinking_a_block_opened_with_is_shown_with_the_deltas_after_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    """The same for thinking: a thought opened with its first words and streamed on showed only the
    words after them until the answer ended."""
    gate = asyncio.Event()

    async def stream_fn(_model: Any, _request: Any, _options: Any) -> AsyncIterator[StreamEvent]:
        yield StreamStart(partial=thought(""))
        yield ThinkingStart(content_index=0, partial=thought("First thought"))
        yield ThinkingDelta(content_index=0, delta=" goes on", partial=thought("First thought goes on"))
        await gate.wait()
        whole = "First thought goes on and ends."
        yield ThinkingEnd(content_index=0, content=whole, partial=thought(whole))
        yield Done(reason="stop", message=thought(whole))

    def drawn_thinking() -> str:
        lines: list[str] = []
        for block in app.chat.query(ThinkingBlock):
            lines += [strip.text.strip() for strip in block.render_lines(block.region.reset_offset)]
        return " ".join(line for line in lines if line)

    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        assert app.session is not None
        app.session.agent.stream_fn = stream_fn
        await type_text(pilot, "go")
        await pilot.press("enter")
        await until(pilot, lambda: "goes on" in drawn_thinking())
        assert "First thought goes on" in drawn_thinking()
        gate.set()
        await until(pilot, lambda: not app._busy and "and ends." in drawn_thinking())
