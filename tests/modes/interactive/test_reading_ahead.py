"""Reading a long session upwards: earlier items are mounted ahead of the reader in small steps, the lines
on screen stay where they are while that happens, and the reader never waits at the top of the window."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widget import AwaitMount, Widget

from bench.big_sessions import big_session_lines
from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.blocks_base import Block
from pi_tui.modes.interactive.chat import ChatLog

from .helpers import make_app, until

ENTRIES = 2_000


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(big_session_lines(ENTRIES, tmp_path)) + "\n")
    return path


def _reading(chat: ChatLog) -> tuple[Widget, int]:
    """The first block at least partly in view, and how many lines below the view's top it starts."""
    top = round(chat.scroll_y)
    for widget in chat.mounted_blocks():
        region = widget.virtual_region
        if isinstance(widget, Block) and widget.display and region.bottom > top:
            return widget, region.y - top
    raise AssertionError("no block in view")


@asynccontextmanager
async def _opened(tmp_path: Path, agent_dir: Path) -> AsyncIterator[tuple[PiApp, Pilot[int]]]:
    """The app on the generated session at 100x30, loaded and with the chat taller than its view."""
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["--session", str(_session(tmp_path))])
    # The full collection held off while the reader scrolls waits until the test's presses are over, as
    # it does on a machine quick enough to press again within QUIET. On a loaded one each press came
    # later than that, a full collection of the test process (~65 ms, every object pytest holds) ran
    # after every press, and the tests took twice their CPU time and up to the 60 s timeout.
    app.chat.QUIET = 3600.0
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set, timeout=30)
        await until(pilot, lambda: app.chat.max_scroll_y > 0)
        yield app, pilot


async def test_page_up_finds_earlier_items_mounted_ahead_in_small_steps_with_the_view_kept(
    tmp_path: Path, agent_dir: Path
) -> None:
    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        mounted_above: list[int] = []
        mount_all = chat.mount_all

        def recording(
            widgets: Iterable[Widget],
            *,
            before: int | str | Widget | None = None,
            after: int | str | Widget | None = None,
        ) -> AwaitMount:
            widgets = list(widgets)
            if after is chat.marker:  # blocks going in above the others: how many at once
                mounted_above.append(len(widgets))
            return mount_all(widgets, before=before, after=after)

        chat.mount_all = recording  # type: ignore[method-assign]
        view = chat.scrollable_content_region.height
        start = chat.first_mounted
        for _ in range(40):
            await pilot.press("pageup")
            reader, offset = _reading(chat)
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
            # Items went in above while the reader read: the same line is still where it was.
            assert _reading(chat) == (reader, offset)
            # Enough is mounted above for the next presses: they scroll, they do not wait for a load.
            assert chat.scroll_y >= 2 * view or chat.first_mounted == 0
        assert start - chat.first_mounted > 150  # the reader went a long way up
        # A few blocks an item, a chunk at a time: never a whole batch in one step.
        assert mounted_above and max(mounted_above) <= 3 * ChatLog.CHUNK
        assert len(chat.mounted_blocks()) <= ChatLog.WINDOW + ChatLog.BATCH


async def test_ctrl_up_walks_to_earlier_prompts_through_items_mounted_ahead(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.blocks import UserBlock

    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        await until(pilot, lambda: not _shown_not_laid_out(chat))  # the session's end on screen, laid out
        await pilot.pause()
        seen: list[str] = []
        for _ in range(25):
            await pilot.press("ctrl+up")
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
            reader, offset = _reading(chat)
            # The previous prompt, at the top: from the first press on (the last prompt starts more than
            # a screen above the end here).
            assert isinstance(reader, UserBlock) and offset == 0
            assert chat.scroll_y < chat.max_scroll_y
            seen.append(reader.text)
        turns = [int(text.split(":")[0].removeprefix("Turn ")) for text in seen]
        # One prompt up per press, none skipped.
        assert turns == list(range(turns[0], turns[0] - len(turns), -1))


def _shown_not_laid_out(chat: ChatLog) -> bool:
    """Whether a block is shown that no layout has placed yet (reading ahead showed it, no frame since)."""
    return any(block.display and not block.virtual_region.height for block in chat.mounted_blocks())


def _turn(block: Widget) -> int:
    from pi_tui.modes.interactive.blocks import UserBlock

    assert isinstance(block, UserBlock)
    return int(block.text.split(":")[0].removeprefix("Turn "))


async def test_the_first_ctrl_up_from_the_bottom_goes_to_the_last_prompt(tmp_path: Path, agent_dir: Path) -> None:
    # The press scrolls up to the last prompt, and reading ahead then shows earlier items above with a
    # scroll down by their lines. That scroll went past the bottom of the log as laid out before them, so
    # it stopped there, Textual took the view for one following the end again, and the layout put it at
    # the new end: the first press ended where it started.
    from pi_tui.modes.interactive.blocks import UserBlock

    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        await until(pilot, lambda: not _shown_not_laid_out(chat))  # the session's end on screen, laid out
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y
        prompts = [block for block in chat.mounted_blocks() if isinstance(block, UserBlock)]
        last = prompts[-1]
        assert last.virtual_region.y < chat.scroll_y  # above the view: a press can bring it to the top
        for turn in (_turn(last), _turn(last) - 1):
            await pilot.press("ctrl+up")
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
            reader, offset = _reading(chat)
            assert (_turn(reader), offset) == (turn, 0)
            assert chat.scroll_y < chat.max_scroll_y


async def test_ctrl_up_pressed_before_items_mounted_ahead_are_laid_out_lands_on_the_previous_prompt(
    tmp_path: Path, agent_dir: Path
) -> None:
    # Reading ahead shows the items it mounted and scrolls by their lines at once; their places come
    # with the next layout, and no layout runs while the app batches its drawing (a streamed answer's
    # paragraphs, markdown being mounted). A Ctrl+Up pressed meanwhile went by the places of before:
    # the view landed on an answer above the prompt it was on. Every press is checked, the first ones
    # from the bottom too: each lands on the prompt before the last one's.
    from pi_tui.modes.interactive.blocks import UserBlock

    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        await until(pilot, lambda: not _shown_not_laid_out(chat))  # the session's end on screen, laid out
        await pilot.pause()
        expected = _turn([block for block in chat.mounted_blocks() if isinstance(block, UserBlock)][-1])
        twice = False
        for _ in range(30):
            with app.batch_update():
                await pilot.press("ctrl+up")
                await until(pilot, lambda: _shown_not_laid_out(chat) or not chat.reading_ahead)
                if _shown_not_laid_out(chat):
                    await pilot.press("ctrl+up")  # a second press before the shown blocks are placed
                    twice = True
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
            reader, offset = _reading(chat)
            # A prompt at the top (not the answer above it, nor the end of the session).
            assert isinstance(reader, UserBlock) and offset == 0
            assert chat.scroll_y < chat.max_scroll_y
            assert _turn(reader) == expected - (1 if twice else 0)  # one prompt up a press
            if twice:
                break
            expected = _turn(reader) - 1
        else:
            raise AssertionError("reading ahead never showed items while the drawing was batched")


async def test_ctrl_up_right_after_the_window_is_built_again_goes_to_the_last_prompt(
    tmp_path: Path, agent_dir: Path
) -> None:
    # The session shown at start-up (or after /resume, or back at the end) is a window built anew: its
    # blocks have no place until a layout, and their answers' markdown is mounted after them. A Ctrl+Up
    # pressed before that went by places the blocks did not have yet: the view ended at the end of the
    # session (or at the top of a window too short to fill the screen, with no prompt in it).
    from pi_tui.modes.interactive.blocks import UserBlock

    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        await until(pilot, lambda: not _shown_not_laid_out(chat))
        await pilot.pause()
        last = _turn([block for block in chat.mounted_blocks() if isinstance(block, UserBlock)][-1])
        with app.batch_update():  # no layout until the press was handled
            chat.load(list(chat.items))
            await pilot.press("ctrl+up")

        def on_a_prompt() -> bool:
            if chat.reading_ahead or not any(block.region for block in chat.mounted_blocks()):
                return False  # the new window not laid out yet
            reader, offset = _reading(chat)
            return isinstance(reader, UserBlock) and offset == 0

        await until(pilot, on_a_prompt)
        reader, _offset = _reading(chat)
        assert _turn(reader) == last
        assert chat.scroll_y < chat.max_scroll_y


async def test_ctrl_up_right_after_earlier_items_filled_a_short_window_goes_to_the_last_prompt(
    tmp_path: Path, agent_dir: Path
) -> None:
    # A session's last items may not fill the screen: once its window is placed, earlier items are
    # mounted above until they do. A Ctrl+Up pressed before the layout that places those went by the
    # places of before: the view stopped as many lines above the last prompt as they took, an earlier
    # answer (or prompts further up) at the top instead of the last prompt.
    from pi_tui.modes.interactive.blocks import UserBlock

    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        await until(pilot, lambda: not _shown_not_laid_out(chat))
        await pilot.pause()
        last = _turn([block for block in chat.mounted_blocks() if isinstance(block, UserBlock)][-1])
        with app.batch_update():  # no layout until the press was handled
            assert chat.load_earlier(6) == 6  # as filling a short window mounts them
            await pilot.press("ctrl+up")

        def on_a_prompt() -> bool:
            if chat.reading_ahead or _shown_not_laid_out(chat):
                return False
            reader, offset = _reading(chat)
            return isinstance(reader, UserBlock) and offset == 0

        await until(pilot, lambda: not chat.reading_ahead and not _shown_not_laid_out(chat))
        await pilot.pause()
        reader, offset = _reading(chat)
        assert (_turn(reader) if isinstance(reader, UserBlock) else reader, offset) == (last, 0)
        assert on_a_prompt()


async def test_blocks_scrolled_out_of_the_window_leave_no_rendered_lines_behind(
    tmp_path: Path, agent_dir: Path
) -> None:
    import gc

    from textual.strip import Strip

    # Lines earlier tests in this process left alive are not this test's: they are held (so their ids
    # stay theirs) and left out of the count.
    gc.collect()
    earlier = [thing for thing in gc.get_objects() if isinstance(thing, Strip)]
    known = {id(strip) for strip in earlier}
    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        for _ in range(60):  # far enough up that hundreds of blocks were mounted, drawn and unmounted
            await pilot.press("pageup")
            await until(pilot, lambda: not chat.reading_ahead)
        await pilot.pause()
        gc.collect()
        alive = sum(1 for thing in gc.get_objects() if isinstance(thing, Strip) and id(thing) not in known)
        del earlier
        # What the mounted window and the rest of the screen draw (~3,200 here), not also the lines of the
        # blocks seen on the way, which Textual's caches kept alive (~8,000 here before).
        assert alive < 5_000


async def test_reading_up_keeps_only_a_few_screens_below_the_view_mounted_and_page_down_brings_them_back(
    tmp_path: Path, agent_dir: Path
) -> None:
    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        view = chat.scrollable_content_region.height
        below: list[int] = []
        for _ in range(40):
            await pilot.press("pageup")
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
            bottom = round(chat.scroll_y) + view
            below.append(sum(1 for b in chat.mounted_blocks() if b.display and b.virtual_region.y >= bottom))
            lines_below = chat.virtual_size.height - bottom
            # Every layout and every full collection walks each mounted widget: what lies more than a few
            # screens below the reader is not kept mounted (it is built again on the way down).
            assert lines_below <= (ChatLog.BELOW_SCREENS + 2) * view
        assert chat.last_mounted is not None and max(below) > 0
        # Back down to the end with PageDown: every item comes back, in order, nothing skipped.
        reader, _ = _reading(chat)
        seen = [reader.source_index] if isinstance(reader, Block) else []
        for _ in range(400):
            if chat.last_mounted is None and chat.scroll_y >= chat.max_scroll_y:
                break
            await pilot.press("pagedown")
            await pilot.pause()
            reader, _ = _reading(chat)
            if isinstance(reader, Block):
                seen.append(reader.source_index)
        assert chat.last_mounted is None
        assert seen == sorted(seen)


async def test_paging_up_draws_no_line_of_the_log_and_each_line_of_a_tool_card_once(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The log is a container: what it shows is its blocks' lines on its background. Drawn as one blank
    # strip, its lines are not rendered, cached and composed again each time the window's size changes
    # (every step of reading ahead, and Textual's second layout after it). A tool card draws its own lines
    # (title, output, hints: one widget): each is drawn when first shown and kept while the window around
    # it changes.
    from pi_tui.modes.interactive.blocks import ToolBlock

    log_lines: list[int] = []
    card_lines: dict[tuple[int, int], int] = {}
    original_log = ChatLog.render_line
    original_card = ToolBlock.render_line

    def log_drawing(self: ChatLog, y: int) -> Strip:
        log_lines.append(y)
        return original_log(self, y)

    def card_drawing(self: ToolBlock, y: int) -> Strip:
        key = (id(self), y)
        card_lines[key] = card_lines.get(key, 0) + 1
        return original_card(self, y)

    monkeypatch.setattr(ChatLog, "render_line", log_drawing)
    monkeypatch.setattr(ToolBlock, "render_line", card_drawing)
    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        card_lines.clear()  # from the first page paged up on
        for _ in range(10):
            await pilot.press("pageup")
            await until(pilot, lambda: not chat.reading_ahead)
        await pilot.pause()
        cards = [block for block in chat.mounted_blocks() if isinstance(block, ToolBlock) and block.display]
        assert cards and any(card.region for card in cards)  # tool cards were on screen
        assert log_lines == []
        assert card_lines  # the cards paged into view drew their lines
        assert max(card_lines.values()) == 1, sorted(card_lines.values())[-10:]


async def test_ctrl_up_pressed_many_times_at_once_walks_as_many_prompts_up(
    tmp_path: Path, agent_dir: Path
) -> None:
    # A key held down, or presses read from the terminal together, are handled one after another with no
    # frame between: the later presses found no prompt mounted above (reading ahead had not mounted the
    # earlier items yet) and went to the top of the window, an answer or a tool card; the presses after
    # that were lost.
    from pi_tui.modes.interactive.blocks import UserBlock

    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        await pilot.press("ctrl+up", "ctrl+up")  # away from the last prompts, which cannot reach the top
        await until(pilot, lambda: not chat.reading_ahead)
        await pilot.pause()
        reader, offset = _reading(chat)
        assert isinstance(reader, UserBlock) and offset == 0
        for _ in range(4):
            start = _turn(reader)
            for _ in range(4):
                app.action_scroll_chat("prompt_up")  # four presses handled back to back
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
            reader, offset = _reading(chat)
            assert isinstance(reader, UserBlock) and offset == 0
            assert _turn(reader) == start - 4


async def test_a_scroll_key_is_drawn_before_reading_ahead_mounts_anything(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key's scroll starts reading ahead; its first chunk (built, then mounted with the drawing held
    # until it is) ran before the frame that shows the scroll, so the key waited for it.
    async with _opened(tmp_path, agent_dir) as (app, pilot):
        chat = app.chat
        order: list[str] = []
        mount_all = chat.mount_all

        def recording(
            widgets: Iterable[Widget],
            *,
            before: int | str | Widget | None = None,
            after: int | str | Widget | None = None,
        ) -> AwaitMount:
            if after is chat.marker:
                order.append("mount")
            return mount_all(widgets, before=before, after=after)

        chat.mount_all = recording  # type: ignore[method-assign]
        scroll_chat = PiApp.action_scroll_chat

        def scrolled(self: PiApp, how: str) -> None:
            order.append("key")
            scroll_chat(self, how)
            self.call_after_refresh(lambda: order.append("frame"))

        monkeypatch.setattr(PiApp, "action_scroll_chat", scrolled)
        for _ in range(12):
            await pilot.press("pageup")
            await until(pilot, lambda: not chat.reading_ahead)
            await pilot.pause()
        assert "mount" in order
        after_keys = ["".join(order[at + 1 : at + 2]) for at, step in enumerate(order) if step == "key"]
        assert after_keys == ["frame"] * 12
