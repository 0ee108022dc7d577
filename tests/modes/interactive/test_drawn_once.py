from __future__ import annotations

from pathlib import Path

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.blocks import ThinkingBlock
from pi_tui.modes.interactive.drawn_once import DrawnOnce
from pi_tui.modes.interactive.rich_markdown import PiMarkdown

from .helpers import make_app, until

THOUGHT = "Let me **check** the file first.\n\n- one `item`\n- another item that is long enough to wrap " * 3


class _Counted:
    def __init__(self) -> None:
        self.markdown = PiMarkdown(THOUGHT, style="none", code_theme="ansi_dark")
        self.drawings = 0

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self.drawings += 1
        yield from console.render(self.markdown, options)


def test_a_renderable_drawn_once_gives_the_same_segments_and_is_drawn_again_only_for_a_new_width() -> None:
    console = Console(width=60, color_system="truecolor")
    counted = _Counted()
    once = DrawnOnce(counted)
    direct = list(console.render(counted.markdown, console.options))
    first = list(console.render(once, console.options))
    again = list(console.render(once, console.options.update(height=7)))  # as Textual draws it
    assert first == again == direct and counted.drawings == 1
    narrow = console.options.update_width(30)
    assert list(console.render(once, narrow)) == list(console.render(counted.markdown, narrow))
    assert counted.drawings == 2 and once.drawings == 2
    assert all(isinstance(segment, Segment) for segment in first)


async def test_a_thought_shown_in_the_chat_is_drawn_once_for_its_height_and_its_lines(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(80, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        block = ThinkingBlock(THOUGHT)
        app.chat.attach(block)
        await until(pilot, lambda: block.is_mounted and block.size.height > 3)
        await pilot.pause()
        shown = block.visual
        assert shown is not None
        assert "check the file first" in "\n".join(
            "".join(segment.text for segment in strip)
            for strip in block.render_lines(block.region.reset_offset)
        )
        renderable = block.content
        assert isinstance(renderable, DrawnOnce) and renderable.drawings == 1
