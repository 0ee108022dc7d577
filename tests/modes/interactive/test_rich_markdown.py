"""Thinking's markdown (`PiMarkdown`) draws what Rich's `Markdown` draws, less Rich's per-object parser."""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown

from pi_tui.modes.interactive.rich_markdown import PiMarkdown

TEXT = (
    "# Plan\n\nThe **sign** is wrong in `add`; ~~subtract~~ add.\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nreturn a + b\n```\n\n> quoted\n"
)


def _drawn(markdown: Markdown) -> str:
    console = Console(width=60, record=True, color_system="truecolor", force_terminal=True)
    console.print(markdown)
    return console.export_text(styles=True)


def test_pi_markdown_sets_what_rich_markdown_sets_and_draws_the_same() -> None:
    # PiMarkdown sets Rich's fields itself, to parse with one shared parser: a Rich that sets another
    # field must be matched here, or thoughts would fail to draw.
    ours = PiMarkdown(TEXT, style="none", code_theme="ansi_dark")
    rich = Markdown(TEXT, style="none", code_theme="ansi_dark")
    assert vars(ours).keys() == vars(rich).keys()
    assert _drawn(ours) == _drawn(rich)  # no list and no single line break: nothing of pi's own


def test_thoughts_share_one_parser_and_each_keeps_its_own_tokens() -> None:
    first, second = PiMarkdown("one *two*"), PiMarkdown("three\nfour")
    assert "two" in _drawn(first) and "three" in _drawn(second)
    assert [token.type for token in second.parsed[1].children or ()] == ["text", "hardbreak", "text"]
    assert [token.type for token in first.parsed[1].children or ()] == ["text", "em_open", "text", "em_close"]
