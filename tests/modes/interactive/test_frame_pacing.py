"""Frame pacing: a change is drawn one frame period after the last frame at most, and the first text
of an answer is drawn at once (not after the batch timer or a gap in typing)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.events import MessageEnd
from pi_tui.ai.types import AssistantMessage, TextContent
from pi_tui.modes.interactive import blocks
from pi_tui.modes.interactive.blocks import AssistantText
from pi_tui.modes.interactive.blocks_base import TypingClock
from pi_tui.modes.interactive.pacing import FramePacer, PacedScreen, frame_delay

from .helpers import make_app, until


def test_frame_delay_counts_from_the_last_frame() -> None:
    assert frame_delay(10.0, float("-inf"), 0.5) == 0.0  # never drawn: now
    assert frame_delay(10.0, 9.0, 0.5) == 0.0  # last frame long ago: now
    assert frame_delay(10.0, 9.75, 0.5) == pytest.approx(0.25)  # the rest of the period, no more


async def test_pacer_draws_an_idle_screen_at_once_and_a_busy_one_a_period_after_its_last_frame() -> None:
    loop = asyncio.get_running_loop()
    frames: list[float] = []
    errors: list[Exception] = []
    pacer = FramePacer(lambda: frames.append(loop.time()), 60.0, errors.append)

    pacer.resume()  # nothing drawn yet: at once
    due = pacer.due
    assert due is not None and due <= loop.time()
    await asyncio.sleep(0)
    assert len(frames) == 1 and pacer.due is None

    pacer.resume()  # right after a frame: one period after it, not a grid point later
    assert pacer.due == pytest.approx(frames[0] + 60.0, abs=0.05)
    pacer.resume()  # a second change joins the pending frame
    assert pacer.due == pytest.approx(frames[0] + 60.0, abs=0.05)

    pacer.hurry()  # the first text of an answer: the pending frame runs now
    due = pacer.due
    assert due is not None and due <= loop.time()
    await asyncio.sleep(0)
    assert len(frames) == 2

    pacer.resume()  # the hurry is spent: rate-limited again
    assert pacer.due == pytest.approx(frames[1] + 60.0, abs=0.05)
    pacer.pause()
    assert pacer.due is None
    await asyncio.sleep(0)
    assert len(frames) == 2 and not errors


async def test_a_hurry_before_the_change_makes_only_the_next_change_immediate() -> None:
    loop = asyncio.get_running_loop()
    frames: list[float] = []
    pacer = FramePacer(lambda: frames.append(loop.time()), 60.0, lambda error: None)
    pacer.resume()
    await asyncio.sleep(0)
    pacer.resume()  # a streamed write: waits for the period
    waiting = pacer.due
    pacer.hurry(pending=False)  # a key arrives: its echo is not drawn yet, the frame stays put
    assert pacer.due == waiting
    pacer.resume()  # the echo: drawn at once, with the streamed write
    due = pacer.due
    assert due is not None and due <= loop.time()
    await asyncio.sleep(0)
    assert len(frames) == 2


async def test_a_key_is_drawn_without_waiting_for_the_frame_period(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert isinstance(app.screen, PacedScreen)
        await pilot.pause()
        pacer = app.screen._update_timer
        pacer.pause()  # nothing already scheduled may draw the key
        # As if a frame had just been drawn with a period of an hour: only a hurried frame can come now.
        held_until = asyncio.get_running_loop().time() + 3600.0
        pacer.last_frame = held_until
        await pilot.press("x")
        await until(pilot, lambda: pacer.last_frame < held_until)
        assert app.editor.text == "x"


async def test_pacer_hands_a_failing_update_to_the_error_handler() -> None:
    errors: list[Exception] = []

    def fail() -> None:
        raise ValueError("broken frame")

    pacer = FramePacer(fail, 1.0, errors.append)
    pacer.resume()
    await asyncio.sleep(0)
    assert [str(e) for e in errors] == ["broken frame"] and pacer.due is None


async def test_first_text_of_an_answer_is_written_at_once_even_right_after_a_key(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Enter that sent the prompt counts as a key press: batched writes wait for a gap in typing
    # (here: for good), but the first text must not.
    monkeypatch.setattr(blocks, "MAX_TYPING_DELAY", 3600.0)
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert isinstance(app.screen, PacedScreen)
        block = AssistantText()
        await app.chat.mount(block)
        monkeypatch.setattr(TypingClock, "last_key", time.monotonic() + 3600.0)
        await pilot.pause()
        pacer = app.screen._update_timer
        pacer.pause()  # nothing already scheduled may draw the text
        held_until = asyncio.get_running_loop().time() + 3600.0  # as if the last frame held the next back
        pacer.last_frame = held_until
        block.append_delta("Hello")
        await until(pilot, lambda: block.source == "Hello")
        await until(pilot, lambda: pacer.last_frame < held_until)  # drawn, the frame period notwithstanding
        block.append_delta(" world")  # later text is batched: held while the user types
        await pilot.pause()
        assert block.source == "Hello"
        await block.finish()  # the message ended: everything is written
        assert block.source == "Hello world"


async def test_text_arriving_while_the_first_text_is_written_joins_the_first_frame(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fast stream: the rest of a short answer arrives while its first text is being written. It is
    written in the same round, before the hurried frame, not a batch (and a frame) later."""
    monkeypatch.setattr(blocks, "MAX_TYPING_DELAY", 3600.0)
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        block = AssistantText()
        await app.chat.mount(block)
        await pilot.pause()
        monkeypatch.setattr(TypingClock, "last_key", time.monotonic() + 3600.0)  # later batches held
        write = block.append

        def write_while_more_arrives(markdown: str) -> Any:
            written = write(markdown)
            if markdown == "Hello":
                block.append_delta(" world")  # arrives while the first write is in flight
            return written

        monkeypatch.setattr(block, "append", write_while_more_arrives)
        pacer = app.screen._update_timer
        pacer.pause()
        held_until = asyncio.get_running_loop().time() + 3600.0
        pacer.last_frame = held_until
        block.append_delta("Hello")
        await until(pilot, lambda: pacer.last_frame < held_until)  # the hurried first frame
        assert block.source == "Hello world"


async def test_the_end_of_an_answer_is_drawn_without_waiting_for_the_frame_period(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        pacer = app.screen._update_timer
        await pilot.pause()
        pacer.pause()
        held_until = asyncio.get_running_loop().time() + 3600.0  # as if the last frame held the next back
        pacer.last_frame = held_until
        calling = AssistantMessage(content=[TextContent(text="let me look")], stop_reason="toolUse")
        await app.adapter.on_event(MessageEnd(calling))
        await pilot.pause()
        assert pacer.last_frame == held_until  # a tool runs next: the frame waits its turn
        answer = AssistantMessage(content=[TextContent(text="done")], stop_reason="stop")
        await app.adapter.on_event(MessageEnd(answer))
        await until(pilot, lambda: pacer.last_frame < held_until)


async def test_continuation_of_a_long_answer_is_batched_like_any_later_text(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(blocks, "MAX_TYPING_DELAY", 3600.0)
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        block = AssistantText()
        block.eager_first_write = False  # what the adapter sets for the blocks after a split
        await app.chat.mount(block)
        monkeypatch.setattr(TypingClock, "last_key", time.monotonic() + 3600.0)
        block.append_delta("more")
        await pilot.pause()
        assert block.source == ""
        await block.finish()
        assert block.source == "more"


_READY_WITHOUT_MARKDOWN = """
import asyncio, sys, threading
from pathlib import Path

seen = {}

class WhoImports:  # notes whether the runtime's factory was first imported by the UI (main) thread
    def find_spec(self, name, path=None, target=None):
        if name == "pi_tui.runtime.factory":
            seen.setdefault("factory", threading.current_thread() is threading.main_thread())
        return None

sys.meta_path.insert(0, WhoImports())

from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp

cwd, agent_dir = Path(sys.argv[1]), Path(sys.argv[2])

def create(trust):
    from pi_tui.runtime.factory import create_session

    return create_session(parse_args(["--provider", "faux"]), cwd)

class App(PiApp):
    def _after_first_frame(self):
        seen["agent"] = "pi_tui.agent" in sys.modules  # what did the first frame load?
        super()._after_first_frame()

    async def attach_startup(self, startup):
        await super().attach_startup(startup)
        # the warm-up worker has been started, but has not run yet: what did getting ready load?
        seen["markdown"] = "textual.widgets._markdown" in sys.modules

async def main():
    app = App(create, cwd=cwd, agent_dir=agent_dir)
    async with app.run_test() as pilot:
        while not app.ready.is_set():
            await pilot.pause(0.01)
        from pi_tui.modes.interactive.blocks import AssistantText  # still there for whoever needs it
        assert AssistantText.__module__.endswith("markdown_block")
    print("markdown loaded when ready:", seen["markdown"])
    print("agent loaded by the first frame:", seen["agent"])
    print("runtime imported by the UI thread:", seen["factory"])

asyncio.run(main())
"""


def test_a_new_session_gets_ready_without_importing_textual_markdown(tmp_path: Path, agent_dir: Path) -> None:
    # A fresh process: other tests in this one have long imported Markdown and the agent package.
    # It also checks that the first frame, drawn before the session exists, does not import the agent
    # package (~35 ms of CPU before the first frame; the session's creation imports it right after).
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _READY_WITHOUT_MARKDOWN, str(tmp_path), str(agent_dir)],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert out.returncode == 0, out.stderr
    assert "markdown loaded when ready: False" in out.stdout
    assert "agent loaded by the first frame: False" in out.stdout
    # nor does the UI thread import the runtime after it: the start-up thread does, while keys are handled
    assert "runtime imported by the UI thread: False" in out.stdout
