"""A quote in an answer is drawn behind pi's thin bar in a light theme too: Textual's own rule for quotes
in light themes (a half block, ``▌``) outranked pi-tui's."""

from __future__ import annotations

from textual.app import App
from textual.geometry import Region

from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.modes.interactive.theme import variable_defaults


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}


async def test_a_quote_keeps_the_thin_bar_in_a_light_theme() -> None:
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        app.theme = "textual-light"
        block = AssistantText("Before.\n\n> a quote\n")
        await app.screen.mount(block)
        await pilot.pause()
        assert not app.current_theme.dark
        quote = block.query_one("MarkdownBlockQuote")
        strips = quote.render_lines(Region(0, 0, quote.outer_size.width, quote.outer_size.height))
        bar = {strip.text[:1] for strip in strips if strip.text.strip()}
    assert bar == {"│"}
