"""`AssistantText`, the streamed answer block: every streamed character ends up on screen exactly once,
however the stream's messages and the block's mount interleave."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App
from textual.widget import Widget

from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.modes.interactive.theme import variable_defaults


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}


def shown(block: AssistantText) -> str:
    """The text the block's rendered markdown holds (what the user sees, without styling)."""
    return block.source.strip()


async def test_text_streamed_and_finished_before_the_block_is_mounted_is_shown() -> None:
    """A fast answer: its deltas and its end arrive before the block's mount has run. Markdown's own
    mount draws its initial text: it must not wipe what was streamed meanwhile (the answer was blank)."""
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText()
        app.screen.mount(block)  # not awaited: the deltas come in the same tick
        assert not block.is_mounted
        block.append_delta("first ")
        block.append_delta("answer")
        await block.finish("first answer")
        await pilot.pause()
        assert block.is_mounted
        await pilot.pause()
        assert shown(block) == "first answer"


async def test_deltas_before_the_mount_then_more_after_it_are_all_shown_in_order() -> None:
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText()
        app.screen.mount(block)
        block.append_delta("one ")
        await pilot.pause()
        block.append_delta("two")
        await block.finish()
        await pilot.pause()
        assert shown(block) == "one two"


async def test_finish_while_a_flush_is_writing_neither_raises_nor_loses_text() -> None:
    """The block's own flush has started writing (its first write in progress) when the message ends:
    finish must wait for it and show everything, not cancel anything (it raised CancelledError into the
    agent's run, which then never sent the queued follow-up)."""
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText()
        await app.screen.mount(block)
        block.append_delta("streamed")
        flushing = asyncio.ensure_future(block._flush())
        await asyncio.sleep(0)  # the flush takes the text and starts writing; nothing else has run yet
        await block.finish("streamed and final")
        await flushing
        await pilot.pause()
        assert shown(block) == "streamed and final"


async def test_a_long_stream_is_shown_whole() -> None:
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText()
        await app.screen.mount(block)
        words = [f"w{i} " for i in range(300)]
        for i, word in enumerate(words):
            block.append_delta(word)
            if i % 7 == 0:
                await asyncio.sleep(0)
        await block.finish()
        await pilot.pause()
        assert shown(block) == "".join(words).strip()


def rendered(block: AssistantText) -> str:
    """What the block's markdown widgets draw, as plain text (what the user reads)."""
    from textual.widgets.markdown import MarkdownBlock

    return "\n".join(str(getattr(w.render(), "plain", w.render())) for w in block.query(MarkdownBlock))


ANGLES = "what is List<String> and <div>?\n\n<div>\n  <b>JSX</b> like <App prop={1} />\n</div>\n"


async def test_text_in_angle_brackets_survives_when_streamed_and_finished() -> None:
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText()
        await app.screen.mount(block)
        for piece in (
            "what is List<Str",
            "ing> and <d",
            "iv>?\n\n<div>\n  <b>JSX</b> like <App prop={1} />\n</div>\n",
        ):
            block.append_delta(piece)
            await pilot.pause()
        deadline = asyncio.get_running_loop().time() + 30
        while "</div>" not in rendered(block):  # streamed writes are batched: wait for the last one
            assert asyncio.get_running_loop().time() < deadline, rendered(block)
            await pilot.pause(0.01)
        assert "List<String> and <div>?" in rendered(block)  # streamed, before the message ended
        await block.finish(ANGLES)
        await pilot.pause()
        shown_text = rendered(block)
    assert "List<String> and <div>?" in shown_text
    assert "<b>JSX</b> like <App prop={1} />" in shown_text and "</div>" in shown_text


async def test_text_in_angle_brackets_survives_in_a_block_built_with_its_text() -> None:
    """The path a loaded session's answers take (the chat builds the block with the whole text)."""
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText(ANGLES)
        await app.screen.mount(block)
        await pilot.pause()
        shown_text = rendered(block)
    assert "List<String> and <div>?" in shown_text and "<App prop={1} />" in shown_text


async def test_autolinks_and_code_keep_working_without_html() -> None:
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText("see <https://example.com> and `<T>`\n")
        await app.screen.mount(block)
        await pilot.pause()
        shown_text = rendered(block)
    assert "see https://example.com and <T>" in shown_text


async def test_a_code_line_wider_than_the_chat_wraps_instead_of_being_cut() -> None:
    """As in pi, a long line in a fenced code block wraps to the next lines; it was cut at the chat's
    edge (a fence scrolls sideways without a scrollbar, and the editor keeps the focus, so the rest
    could not be reached)."""
    from textual.geometry import Region
    from textual.widgets import Label
    from textual.widgets.markdown import MarkdownFence

    line = " ".join(f"word{i}" for i in range(30))
    app = Host()
    async with app.run_test(size=(50, 30)) as pilot:
        block = AssistantText(f"Before.\n\n```\n{line}\n    indented_end = True\n```\n\nAfter.")
        await app.screen.mount(block)
        await pilot.pause()
        fence = block.query_one(MarkdownFence)
        label = fence.query_one("#code-content", Label)
        assert label.region.right <= fence.region.right
        strips = label.render_lines(Region(0, 0, label.outer_size.width, label.outer_size.height))
        text = " ".join(strip.text.strip() for strip in strips)
        assert " ".join(text.split()).find(line) >= 0
        assert "indented_end = True" in text


async def test_thinking_is_shown_whole_as_italic_markdown_and_a_click_hides_it() -> None:
    """As pi 0.87.1 draws thinking: every line of it, its markdown rendered (no ``**``), in italic; a
    click turns that block into pi's one "Thinking..." line and back. It was folded to one line."""
    from textual.geometry import Region

    from pi_tui.modes.interactive.blocks import ThinkingBlock

    def shown(block: ThinkingBlock) -> list[str]:
        lines = block.render_lines(Region(0, 0, block.outer_size.width, block.outer_size.height))
        return [strip.text.strip() for strip in lines if strip.text.strip()]

    app = Host()
    async with app.run_test(size=(40, 20)) as pilot:
        block = ThinkingBlock("Let me weigh the **question**.\n\nA second thought, long enough to wrap here.")
        await app.screen.mount(block)
        await pilot.pause()
        lines = shown(block)
        assert lines[0] == "Let me weigh the question."
        assert " ".join(lines[1:]) == "A second thought, long enough to wrap here."
        first = block.render_lines(Region(0, 0, block.outer_size.width, 1))[0]
        assert all(seg.style is not None and seg.style.italic for seg in first if seg.text.strip())
        block.toggle()
        await pilot.pause()
        assert shown(block) == ["Thinking..."]
        block.toggle()
        await pilot.pause()
        assert shown(block)[0] == "Let me weigh the question."


async def test_headings_sit_at_the_left_with_one_blank_line_around() -> None:
    """As pi draws them: every heading starts at the left edge (Textual centred a `#` heading), one
    blank line before and after it (Textual left two before), and `###` and deeper keep their marks
    (`### Sub`)."""
    from textual.geometry import Region

    app = Host()
    async with app.run_test(size=(80, 40)) as pilot:
        block = AssistantText("Intro.\n\n# Title\n\nBody.\n\n### Sub\n\nMore.\n")
        await app.screen.mount(block)
        await pilot.pause()
        h1, h3 = block.query_one("MarkdownH1"), block.query_one("MarkdownH3")
        intro, body, more = list(block.query("MarkdownParagraph"))[:3]

        def text(widget: Widget) -> str:
            strips = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
            return "\n".join(strip.text for strip in strips).strip("\n")

        assert text(h1).startswith("Title") and text(h3).startswith("### Sub")
        assert h1.region.x == intro.region.x and h3.region.x == intro.region.x
        assert h1.region.y - intro.region.bottom == 1 and body.region.y - h1.region.bottom == 1
        assert h3.region.y - body.region.bottom == 1 and more.region.y - h3.region.bottom == 1


async def test_a_code_block_is_drawn_between_fence_lines_naming_its_language() -> None:
    """As pi draws it: a ```python line (the fence's language), the code indented by two, a ``` line;
    the language shows while the answer streams, too."""
    from textual.widgets import Label
    from textual.widgets.markdown import MarkdownFence

    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        block = AssistantText()
        await app.screen.mount(block)
        for piece in ("Code:\n\n```pyt", "hon\nprint(1)\n", "x = 2\n```\n\nDone."):
            block.append_delta(piece)
            await pilot.pause()
        await block.finish()
        await pilot.pause()
        fence = block.query_one(MarkdownFence)
        labels = list(fence.query(Label))
        texts = [str(label.render()).rstrip() for label in labels]
        assert [t.strip() for t in texts[1].splitlines()] == ["print(1)", "x = 2"]
        assert (texts[0], texts[-1]) == ("```python", "```")
        assert labels[1].content_region.x == labels[0].content_region.x + 2
        assert labels[0].region.y + 1 == labels[1].region.y


def drawn_lines(widget: Widget) -> list[str]:
    """What ``widget`` draws (its own lines: a table's keylines, a block's text), right-stripped."""
    from textual.geometry import Region

    strips = widget.render_lines(Region(0, 0, widget.outer_size.width, widget.outer_size.height))
    return [strip.text.rstrip() for strip in strips]


async def test_a_table_is_as_wide_as_its_cells_not_the_chat() -> None:
    """As pi draws it: each column as wide as its widest cell (Textual stretched a two-column table of
    short words across the whole width)."""
    app = Host()
    async with app.run_test(size=(100, 20)) as pilot:
        block = AssistantText("| Name | Age |\n|------|-----|\n| Al | 3 |\n| Bo | 44 |\n\nafter")
        await app.screen.mount(block)
        await pilot.pause()
        lines = drawn_lines(block.query_one("MarkdownTableContent"))
    assert lines[0] == "┌──────┬─────┐" and lines[2] == "├──────┼─────┤" and lines[-1] == "└──────┴─────┘"


async def test_a_table_wider_than_the_chat_wraps_its_cells_within_it() -> None:
    long_cell = "a very long description that will not fit in forty columns at all"
    app = Host()
    async with app.run_test(size=(40, 20)) as pilot:
        block = AssistantText(f"| Name | About |\n|---|---|\n| Al | {long_cell} |\n")
        await app.screen.mount(block)
        await pilot.pause()
        table = block.query_one("MarkdownTableContent")
        lines = drawn_lines(table)
        cell = table.query(".cell").last()
        cell_text = " ".join(" ".join(line.split()) for line in drawn_lines(cell))
    assert lines[0].startswith("┌") and lines[0].endswith("┐") and len(lines[0]) <= 40 - 2
    assert cell_text.strip() == long_cell and cell.outer_size.height > 1


async def test_a_link_shows_its_address_after_its_text() -> None:
    """pi prints ``text (url)`` where the terminal cannot take a clickable link; the address was lost.
    A link that is its own address is shown once."""
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText(
            "See [the docs](https://example.com/docs), <https://a.example> and <me@example.org>.\n\n"
            "- [`code` link](https://b.example)\n"
        )
        await app.screen.mount(block)
        await pilot.pause()
        shown_text = rendered(block)
    assert "See the docs (https://example.com/docs), https://a.example and me@example.org." in shown_text
    assert "code link (https://b.example)" in shown_text


async def test_a_single_line_break_in_a_paragraph_is_kept_as_pi_keeps_it() -> None:
    """pi draws each line a model wrote on a line of its own; markdown would join them into one line."""
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        block = AssistantText("alpha beta gamma\ndelta epsilon\n\nnext paragraph\n")
        await app.screen.mount(block)
        await pilot.pause()
        shown_text = rendered(block)
    assert "alpha beta gamma\ndelta epsilon" in shown_text, shown_text
    assert "next paragraph" in shown_text


async def test_bullets_are_dashes_at_every_depth() -> None:
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        block = AssistantText("- one\n  - inner\n- two\n")
        await app.screen.mount(block)
        await pilot.pause()
        bullets = [drawn_lines(bullet)[0] for bullet in block.query("MarkdownBullet")]
    assert bullets == ["-", "-", "-"]


async def test_a_quote_is_drawn_behind_a_thin_bar_as_in_pi() -> None:
    """pi draws ``│ a quote``; the bar was a half block (``▌``)."""
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        block = AssistantText("Before.\n\n> a quote\n")
        await app.screen.mount(block)
        await pilot.pause()
        quote = block.query_one("MarkdownBlockQuote")
        bar = [line.strip() for line in drawn_lines(quote) if line.strip()]
        words = [line.strip() for line in drawn_lines(quote.query_one("MarkdownParagraph")) if line.strip()]
    assert bar == ["│"] and words == ["a quote"]


async def test_a_numbered_list_starts_under_the_text_with_a_blank_line_after() -> None:
    """pi writes ``1. first`` in the column the paragraphs start in; Textual put a space before the
    number (`` 1. first``)."""
    app = Host()
    async with app.run_test(size=(60, 14)) as pilot:
        block = AssistantText("Para.\n\n1. first\n2. second\n\nAfter.\n")
        await app.screen.mount(block)
        await pilot.pause()
        para, after = block.query("MarkdownParagraph").first(), block.query("MarkdownParagraph").last()
        first = block.query("MarkdownBullet").first()
        number = drawn_lines(first)[0]
        assert first.region.x + len(number) - len(number.lstrip()) == para.region.x, (first.region, number)
        assert (
            number.strip() == "1."
            and after.region.y == block.query_one("MarkdownOrderedList").region.bottom + 1
        )


async def test_answers_share_one_parser_and_each_is_drawn_from_its_own_text() -> None:
    # Textual asks for a parser at every write of an answer and every answer mounted: one is made and
    # shared (making one cost more than parsing a short answer); each parse keeps its own state.
    from pi_tui.modes.interactive.markdown_block import markdown_parser

    assert markdown_parser() is markdown_parser()
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        first = AssistantText("one [link](https://a.example)\ntwo\n")
        second = AssistantText()
        await app.screen.mount_all([first, second])
        second.append_delta("three\n\n- four")
        await pilot.pause()
        second.append_delta("\n\nfive *six*\n")
        await second.finish()
        await pilot.pause()
        drawn_first, drawn_second = rendered(first), rendered(second)
    assert drawn_first == "one link (https://a.example)\ntwo", drawn_first
    assert "three" in drawn_second and "four" in drawn_second and "five six" in drawn_second, drawn_second
    assert "link" not in drawn_second


def drawn(block: AssistantText) -> str:
    """The lines the block's widgets draw on screen (code blocks' too), as plain text."""
    lines: list[str] = []
    for widget in block.walk_children(with_self=False):
        if widget.children or not widget.region.height:
            continue
        lines += [strip.text.strip() for strip in widget.render_lines(widget.region.reset_offset)]
    return "\n".join(line for line in lines if line)


WHOLE_THEN_STREAMED = [
    (
        "Start of the answer.\nIts second line",
        " goes on.",
        ["Start of the answer.", "Its second line goes on."],
    ),
    ("Steps:\n\n- first step\n- second step", "\n- third step", ["first step", "second step", "third step"]),
    ("Code:\n\n```python\nx = 1\ny = 2", "\nz = 3\n```\n", ["x = 1", "y = 2", "z = 3"]),
]


@pytest.mark.parametrize(("whole", "delta", "lines"), WHOLE_THEN_STREAMED)
async def test_a_block_built_with_text_that_streams_on_keeps_its_earlier_lines(
    whole: str, delta: str, lines: list[str]
) -> None:
    """A block given its text whole (the chat builds an answer still streaming again when its window
    moves over it) that then streams on. Textual's markdown resumes appending at the last line of a
    text written whole, inside its last paragraph, list or code block, so the streamed text took the
    place of the lines before it: only the later text was shown."""
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText(whole)
        await app.screen.mount(block)
        await pilot.pause()
        block.append_delta(delta)
        await block.finish()
        await pilot.pause()
        shown_text = drawn(block)
    assert all(line in shown_text for line in lines), shown_text


@pytest.mark.parametrize(("whole", "delta", "lines"), WHOLE_THEN_STREAMED)
async def test_a_block_whose_text_was_replaced_whole_keeps_it_when_more_streams(
    whole: str, delta: str, lines: list[str]
) -> None:
    """The same after `finish` put the message's text in place of what had streamed."""
    app = Host()
    async with app.run_test() as pilot:
        block = AssistantText()
        await app.screen.mount(block)
        block.append_delta("something else")
        await block.finish(whole)
        await pilot.pause()
        block.append_delta(delta)
        await block.finish()
        await pilot.pause()
        shown_text = drawn(block)
    assert all(line in shown_text for line in lines), shown_text
