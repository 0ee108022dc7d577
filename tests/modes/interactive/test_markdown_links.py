"""Links written as pi writes them: OSC 8 where the terminal takes them, else the address in parentheses."""

from __future__ import annotations

from rich.console import Console
from textual.content import Content
from textual.style import Style

from pi_tui.modes.interactive.markdown_links import link_spans
from pi_tui.modes.interactive.rich_markdown import PiMarkdown
from pi_tui.modes.interactive.terminal_caps import color_system_for, detect_hyperlinks

URL = "https://example.com/guide"


def _written(hyperlinks: bool) -> str:
    console = Console(force_terminal=True, color_system="truecolor", width=80, file=None)
    with console.capture() as captured:
        console.print(PiMarkdown(f"see the [guide]({URL}) and <{URL}>", hyperlinks=hyperlinks))
    return captured.get()


def test_thinking_links_are_osc8_links_or_addresses_in_parentheses() -> None:
    linked = _written(True)
    assert "\x1b]8;" in linked and f"({URL})" not in linked
    plain = _written(False)
    assert "\x1b]8;" not in plain
    assert f"guide ({URL})" in plain
    assert plain.count(URL) == 2  # the autolink is its own address: written once, not followed by it again


def test_a_markdown_link_span_gets_its_address_as_a_link_style() -> None:
    click = Style.from_meta({"@click": f"link({URL!r})"})
    content = Content("see guide now").stylize(click, 4, 9)
    links = [
        (span.start, span.end, span.style.link)
        for span in link_spans(content).spans
        if isinstance(span.style, Style) and span.style.link
    ]
    assert links == [(4, 9, URL)]
    assert link_spans(Content("no links")).spans == []


def test_hyperlink_detection_follows_pis_list_of_terminals() -> None:
    assert detect_hyperlinks({"TERM_PROGRAM": "ghostty"})
    assert detect_hyperlinks({"KITTY_WINDOW_ID": "1"})
    assert detect_hyperlinks({"WT_SESSION": "x"})
    assert detect_hyperlinks({"TERM_PROGRAM": "vscode"})
    assert not detect_hyperlinks({"TERM": "screen-256color", "TERM_PROGRAM": "ghostty"})  # screen first
    assert not detect_hyperlinks({"TERM": "xterm-256color"})  # unknown: no
    assert not detect_hyperlinks({"TERMINAL_EMULATOR": "JetBrains-JediTerm"})


def test_colour_depth_override_names_textuals_colour_system() -> None:
    assert color_system_for(None) is None
    assert color_system_for(True) == "truecolor"
    assert color_system_for(False) == "256"
