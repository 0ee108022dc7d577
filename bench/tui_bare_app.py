"""A bare Textual app (Markdown, TextArea, Footer): the floor for `bench.tui`'s first-frame figure."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Footer, Markdown, TextArea


class BareApp(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown("**BARE-READY** a bare Textual app")
        yield TextArea()
        yield Footer()


if __name__ == "__main__":
    BareApp().run()
