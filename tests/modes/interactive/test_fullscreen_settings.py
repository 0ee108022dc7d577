"""pi 0.87.1's full-screen settings ``fullscreenScrollbar`` (auto/always/hidden) and ``outputPad``
(``fullscreenCopyOnSelect`` is tested with the other copying, in test_copy_selection.py)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.geometry import Region

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.scrollbar import ChatScrollBar
from pi_tui.session import SessionManager

from .helpers import make_app, until


def _settings(agent_dir: Path, values: dict[str, object]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(values))


def _long_session(path: Path, cwd: Path) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(12):
        manager.append_message(UserMessage(content=f"question {i}"))
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"answer {i}\n\nmore\n\nand more")], provider="faux", model="faux-1")
        )
    manager.close()


def _bar(app: PiApp) -> ChatScrollBar:
    bar = app.chat.vertical_scrollbar
    assert isinstance(bar, ChatScrollBar)
    return bar


def _drawn(bar: ChatScrollBar) -> bool:
    """Whether the bar shows a thumb (its rows differ) rather than a blank column (all rows alike)."""
    rows = {tuple(strip) for strip in bar.render_lines(Region(0, 0, *bar.size))}
    return len(rows) > 1


async def _opened(tmp_path: Path, agent_dir: Path, values: dict[str, object]) -> PiApp:
    _settings(agent_dir, values)
    session_file = tmp_path / "long.jsonl"
    _long_session(session_file, tmp_path)
    return make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])


async def test_the_auto_scroll_bar_shows_while_the_reader_scrolls(tmp_path: Path, agent_dir: Path) -> None:
    app = await _opened(tmp_path, agent_dir, {})
    async with app.run_test(size=(80, 16)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.max_scroll_y > 5 and _bar(app).size.height > 5)
        bar = _bar(app)
        bar.SHOWN_AFTER_SCROLL = 0.2  # this bar only: the test need not wait pi's second
        assert not _drawn(bar)  # nothing scrolled yet: a blank column
        app.chat.reading()  # what a scroll key or the wheel tells the chat (checked in this same step)
        assert _drawn(bar)
        await until(pilot, lambda: not _drawn(bar))  # gone again once the reader stops


async def test_always_shows_the_bar_and_hidden_gives_its_column_to_the_chat(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = await _opened(tmp_path, agent_dir, {"fullscreenScrollbar": "always"})
    async with app.run_test(size=(80, 16)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.chat.max_scroll_y > 5 and _bar(app).size.height > 5)
        assert _drawn(_bar(app))
        width = app.chat.scrollable_content_region.width
        app.session.settings.set("fullscreenScrollbar", "hidden")  # type: ignore[union-attr]
        app.apply_settings()  # as /settings does after a change
        await until(pilot, lambda: app.chat.scrollable_content_region.width == width + 1)
        assert not app.chat.show_vertical_scrollbar or app.chat.styles.scrollbar_size_vertical == 0


async def test_output_pad_0_puts_messages_answers_and_thinking_against_the_chats_edge(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.blocks import ThinkingBlock, UserBlock
    from pi_tui.modes.interactive.markdown_block import AssistantText

    app = await _opened(tmp_path, agent_dir, {})
    async with app.run_test(size=(80, 16)) as pilot:
        await until(pilot, app.ready.is_set)
        user, answer = app.chat.query(UserBlock).last(), app.chat.query(AssistantText).last()
        await until(pilot, lambda: user.size.width > 0)
        edge = app.chat.content_region.x
        assert user.content_region.x == edge + 1  # pi's default: one column
        assert answer.styles.padding.left == answer.styles.padding.right == 1
        app.session.settings.set("outputPad", 0)  # type: ignore[union-attr]
        app.apply_settings()  # as /settings does after a change
        await until(pilot, lambda: user.content_region.x == edge)  # drawn against the edge
        assert answer.styles.padding.left == answer.styles.padding.right == 0
        thinking = ThinkingBlock("a thought")
        await app.chat.mount(thinking)
        assert thinking.styles.padding.left == 0
