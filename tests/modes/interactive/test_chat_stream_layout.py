"""The chat's ``layout: stream`` keeps each block's place between frames and measures again only the blocks
that asked: a block grown from inside (an answer's markdown gaining paragraphs) must be measured again in
the very frame it grew, or the block after it is drawn over its new lines."""

from __future__ import annotations

from textual.app import App, ComposeResult

from pi_tui.modes.interactive.chat import ChatLog
from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.modes.interactive.theme import variable_defaults


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}

    def compose(self) -> ComposeResult:
        yield ChatLog()


def paragraphs(first: int, last: int) -> str:
    return "".join(f"LINE{i:03d}\n\n" for i in range(first, last + 1))


def text_end(block: AssistantText) -> int:
    """The chat line below the block's last paragraph."""
    return block.virtual_region.y + block.children[-1].virtual_region.bottom


async def test_an_answer_that_grew_and_its_continuation_in_one_frame_do_not_overlap() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        chat = app.query_one(ChatLog)
        first = chat.attach(AssistantText())
        first.append_delta(paragraphs(1, 10))
        await pilot.pause()
        drawn: list[tuple[int, int, int]] = []
        # What a loaded machine does between two frames: the answer's block takes 30 more paragraphs and
        # the long answer goes on in a new block.
        with app.batch_update():
            first.append_delta(paragraphs(11, 40))
            await first.finish()
            second = chat.attach(AssistantText())
            second.append_delta(paragraphs(41, 45))
            await pilot.pause()
            chat.call_after_refresh(
                lambda: drawn.append((text_end(first), first.virtual_region.bottom, second.virtual_region.y))
            )
        await pilot.pause()
        # In the first frame after it: the first block holds all its lines and the second starts below.
        (end, bottom, second_top) = drawn[0]
        assert end <= bottom <= second_top, drawn
