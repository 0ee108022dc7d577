from __future__ import annotations

from pathlib import Path

from rich.segment import Segment
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.scrollbar import ChatScrollBar, row_kinds
from pi_tui.session import SessionManager

from .helpers import make_app, until


def _long_session(path: Path, cwd: Path, exchanges: int) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(exchanges):
        manager.append_message(UserMessage(content=f"question {i}\n\nwith a second paragraph"))
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"answer {i}")], provider="faux", model="faux-1")
        )
    manager.close()


def _lines(bar: ScrollBar, drawn: bool) -> list[list[Segment]]:
    crop = Region(0, 0, *bar.size)
    if drawn:  # as Textual draws it: every row styled anew
        bar.refresh()
        strips = ScrollBar.render_lines(bar, crop)
    else:
        strips = bar.render_lines(crop)
    return [list(strip) for strip in strips]


async def _same_at_every_place(app: PiApp, pilot: object) -> ChatScrollBar:
    chat = app.chat
    bar = chat.vertical_scrollbar
    assert isinstance(bar, ChatScrollBar)
    top = int(chat.max_scroll_y)
    for y in [*range(top, max(0, top - 90), -3), 0, 1, 2, 5]:
        # the bar takes the chat's offset at once (Textual's scroll_y watcher): no frame needed in between,
        # and none drawn, each of which laid out and painted the whole chat (nine tenths of the test's CPU)
        chat.scroll_to(y=y, animate=False, immediate=True)
        assert bar.position == chat.scroll_y
        assert _lines(bar, drawn=False) == _lines(bar, drawn=True), f"scroll_y={chat.scroll_y}"
    await pilot.pause()  # type: ignore[attr-defined]
    return bar


async def test_the_chat_scroll_bar_shows_every_place_of_the_thumb_as_textual_draws_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    session_file = tmp_path / "long.jsonl"
    _long_session(session_file, tmp_path, 120)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(session_file)])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        app.chat.set_scrollbar_mode("always")  # drawn at every place ("auto" draws it while one scrolls)
        app.chat.load_earlier(60)
        await until(pilot, lambda: app.chat.max_scroll_y > 100)
        bar = await _same_at_every_place(app, pilot)
        assert bar.reused > 10  # most places were put together from rows drawn before
        bar.mouse_over = True  # another look: the rows are drawn again in it
        await _same_at_every_place(app, pilot)
        bar.mouse_over = False
        app.theme = "textual-light"
        await pilot.pause()
        await _same_at_every_place(app, pilot)


def test_row_kinds_place_the_thumb_where_textuals_renderer_puts_its_segments() -> None:
    glyphs = ScrollBarRender.VERTICAL_BARS
    for size, virtual, window in [(30, 500, 30), (30, 31, 30), (7, 1000, 7), (40, 41, 40), (30, 30, 30)]:
        for position in [0, 0.125, 1, 2.5, 7, virtual - window - 0.5, virtual - window, virtual]:
            segments = ScrollBarRender.render_bar(
                size=size, virtual_size=virtual, window_size=window, position=position, thickness=1
            ).segments
            rows = [segment for segment in segments if segment.text != "\n"][:size]
            kinds = row_kinds(size, virtual, window, position, glyphs)
            assert len(kinds) == len(rows) == size
            by_kind: dict[tuple[str, str], Segment] = {}
            for kind, segment in zip(kinds, rows, strict=True):
                # One kind of row is always the same segment, and different kinds are different segments.
                assert by_kind.setdefault(kind, segment) == segment, (size, virtual, window, position)
            assert len(set(by_kind.values())) == len(by_kind)
