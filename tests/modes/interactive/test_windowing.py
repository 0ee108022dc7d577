from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.modes.interactive.blocks import AssistantText, UserBlock
from pi_tui.modes.interactive.chat import ChatLog
from pi_tui.session import SessionManager

from .helpers import make_app, type_text, until


def _long_session(path: Path, cwd: Path, exchanges: int) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(exchanges):
        manager.append_message(UserMessage(content=f"question {i}"))
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"answer {i}")], provider="faux", model="faux-1")
        )
    manager.close()


async def test_a_long_session_mounts_only_its_end_and_older_items_on_demand(
    tmp_path: Path, agent_dir: Path
) -> None:
    session_file = tmp_path / "long.jsonl"
    _long_session(session_file, tmp_path, 300)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        assert len(app.chat.items) == 601  # the start-up header, then the session
        await until(
            pilot, lambda: app.chat.max_scroll_y > 0
        )  # short messages: mounted until they fill the view
        blocks = app.chat.mounted_blocks()
        mounted = len(blocks)
        assert ChatLog.INITIAL <= mounted < 100
        assert blocks[-1].text == "answer 299"  # type: ignore[attr-defined]
        hidden = 601 - app.chat.first_mounted
        assert "-visible" in app.chat.marker.classes
        assert (
            f"{app.chat.first_mounted} earlier items" in str(app.chat.marker.render()) and hidden == mounted
        )
        assert app.chat.load_earlier() == ChatLog.BATCH
        assert len(app.chat.mounted_blocks()) == mounted + ChatLog.BATCH
        first = app.chat.mounted_blocks()[0]
        assert (
            isinstance(first, UserBlock)
            and first.text == f"question {(601 - mounted - ChatLog.BATCH - 1) // 2}"
        )
        await pilot.pause()
        app.chat.scroll_home(animate=False)
        # At the top the next batch above is mounted (items far below the view may be unmounted meanwhile,
        # so the count of mounted blocks is not the measure: the first mounted item is).
        above = 601 - mounted - 2 * ChatLog.BATCH
        await until(pilot, lambda: app.chat.first_mounted == above)
        top = app.chat.mounted_blocks()[0]
        assert isinstance(top, UserBlock) and top.text == f"question {(above - 1) // 2}"


async def test_live_messages_beyond_the_window_unmount_the_oldest(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ChatLog, "WINDOW", 10)
    monkeypatch.setattr(ChatLog, "BATCH", 4)
    script = FauxScript(*[faux_reply(f"reply {i}") for i in range(8)])
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for i in range(8):
            await type_text(pilot, f"q{i}")
            await pilot.press("enter")
            await until(pilot, lambda n=i + 1: not app._busy and script.call_count == n)
        await until(pilot, lambda: any("reply 7" in b.text for b in app.chat.query(AssistantText)))
        assert len(app.chat.mounted_blocks()) <= 10 + 3
        assert app.chat.first_mounted > 0 and "-visible" in app.chat.marker.classes
        assert app.chat.load_earlier() > 0


async def test_wheel_up_keeps_going_through_earlier_items(tmp_path: Path, agent_dir: Path) -> None:
    session_file = tmp_path / "long.jsonl"
    _long_session(session_file, tmp_path, 300)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.max_scroll_y > 0)
        start = app.chat.first_mounted
        for _ in range(200):  # what a wheel notch does, no click on the marker
            app.chat.scroll_up(animate=False)
            await pilot.pause()
            if app.chat.first_mounted <= start - 2 * ChatLog.BATCH:
                break
        assert app.chat.first_mounted <= start - 2 * ChatLog.BATCH
        await until(pilot, lambda: app.chat.scroll_y > 0)  # the reader's place kept, the new items above it


async def test_reading_far_up_keeps_the_window_and_alt_home_jumps_to_the_start(
    tmp_path: Path, agent_dir: Path
) -> None:
    session_file = tmp_path / "long.jsonl"
    _long_session(session_file, tmp_path, 120)  # 240 items: six batches up still leave earlier ones above
    app = make_app(
        tmp_path, agent_dir, FauxScript(faux_reply("fresh answer")), argv=["--session", str(session_file)]
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.max_scroll_y > 0)
        for _ in range(6):  # going up 144 items, more than the window holds: it keeps its size, the newest go
            app.chat.load_earlier()
        assert app.chat.first_mounted > ChatLog.BATCH  # not yet at the start: Alt+Home below has a way to go
        await pilot.pause()
        assert len(app.chat.mounted_blocks()) <= ChatLog.WINDOW
        below = app.chat.last_mounted
        assert below is not None and below < len(app.chat.items)
        assert f"{len(app.chat.items) - below} later items" in str(app.chat.later.render())
        assert "-visible" in app.chat.later.classes
        assert app.chat.scroll_y == app.chat.max_scroll_y  # at the window's bottom: PageDown goes on below
        await pilot.press("pagedown")
        await until(pilot, lambda: app.chat.last_mounted is None or app.chat.last_mounted > below)
        assert len(app.chat.mounted_blocks()) <= ChatLog.WINDOW

        await pilot.press("alt+home")  # the conversation's start, in one step
        await until(pilot, lambda: app.chat.first_mounted == 0)
        blocks = app.chat.mounted_blocks()
        assert len(blocks) <= ChatLog.BATCH
        assert [b.text for b in blocks[1:3]] == ["question 0", "answer 0"]  # type: ignore[attr-defined]
        assert "-visible" not in app.chat.marker.classes and "-visible" in app.chat.later.classes

        await type_text(pilot, "hello")
        await pilot.press("enter")  # a prompt brings the end back, with the new answer
        await until(pilot, lambda: any(b.text == "fresh answer" for b in app.chat.query(AssistantText)))
        assert app.chat.last_mounted is None and "-visible" not in app.chat.later.classes
        texts = [getattr(b, "text", "") for b in app.chat.mounted_blocks()]
        assert "answer 119" in texts and "hello" in texts
