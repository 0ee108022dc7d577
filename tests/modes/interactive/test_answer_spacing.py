"""One blank line between an answer and what follows it, as pi draws the chat: after the answer's last
paragraph, between the blocks a long streamed answer is split into, and between paragraphs while they
stream in."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.chat import ChatLog
from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.modes.interactive.theme import variable_defaults


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}

    def compose(self) -> ComposeResult:
        yield ChatLog()


def text_bottom(block: AssistantText) -> int:
    """The chat line below the answer's last drawn line."""
    return block.virtual_region.y + block.children[-1].virtual_region.bottom


def text_top(widget: Widget) -> int:
    """The chat line of a block's first drawn line."""
    if isinstance(widget, AssistantText):
        return widget.virtual_region.y + widget.children[0].virtual_region.y
    return widget.virtual_region.y


async def test_one_blank_line_between_an_answer_and_the_next_block() -> None:
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        chat = app.query_one(ChatLog)
        answer = chat.attach(AssistantText())
        assert isinstance(answer, AssistantText)
        answer.append_delta("First paragraph.\n\nLast paragraph.")
        await answer.finish()
        await pilot.pause()
        notice = chat.attach(NoticeBlock("after the answer"))
        await pilot.pause()
        await pilot.pause()
        assert text_top(notice) - text_bottom(answer) == 1


async def test_one_blank_line_where_a_long_answer_goes_on_in_a_new_block() -> None:
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        chat = app.query_one(ChatLog)
        first = chat.attach(AssistantText())
        assert isinstance(first, AssistantText)
        first.append_delta("Paragraph one.\n\nParagraph two.\n\n")
        await first.finish()
        second = chat.attach(AssistantText())
        assert isinstance(second, AssistantText)
        second.append_delta("Paragraph three.")
        await second.finish()
        await pilot.pause()
        await pilot.pause()
        assert text_top(second) - text_bottom(first) == 1


async def test_paragraphs_streamed_one_by_one_keep_one_blank_line_between_them() -> None:
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        chat = app.query_one(ChatLog)
        answer = chat.attach(AssistantText())
        assert isinstance(answer, AssistantText)
        for word in ("Alpha.", "\n\n", "Beta.", "\n\n", "Gamma."):
            answer.append_delta(word)
            await answer.finish()
            await pilot.pause()
        paragraphs = list(answer.query("MarkdownParagraph"))
        assert len(paragraphs) == 3
        tops = [p.virtual_region.y for p in paragraphs]
        bottoms = [p.virtual_region.bottom for p in paragraphs]
        assert [tops[1] - bottoms[0], tops[2] - bottoms[1]] == [1, 1]
