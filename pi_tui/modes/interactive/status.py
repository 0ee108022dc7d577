"""The lines between the chat and the editor: "Working", queued messages, extensions' widgets."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

__all__ = ["ExtensionWidgets", "PendingArea", "WorkingLine"]


class WorkingLine(Widget):
    """ "Working" (or an extension's text) with a spinner while the agent runs.

    The spinner repaints its one line only: a frame never triggers a layout of the screen.
    """

    DEFAULT_CSS = """
    WorkingLine { height: 1; color: $pi-accent; padding: 0 1; display: none; }
    WorkingLine.-busy { display: block; }
    """

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self) -> None:
        super().__init__(id="working")
        self.frame = 0
        self.message = "Working"

    def on_mount(self) -> None:
        self.timer = self.set_interval(0.1, self._tick, pause=True)

    def render(self) -> str:
        return f"{self.FRAMES[self.frame]} {self.message}"

    def start(self) -> None:
        self.add_class("-busy")
        self.timer.resume()

    def stop(self) -> None:
        self.remove_class("-busy")
        self.timer.pause()

    def _tick(self) -> None:
        self.frame = (self.frame + 1) % len(self.FRAMES)
        self.refresh()


class PendingArea(Static):
    """Queued steering and follow-up messages, editable until sent (Alt+Up brings them back)."""

    DEFAULT_CSS = """
    PendingArea { height: auto; color: $pi-muted; padding: 0 1; display: none; }
    PendingArea.-visible { display: block; }
    """


class ExtensionWidgets(Vertical):
    """Lines extensions put above or below the editor (``ctx.ui.set_widget``)."""

    DEFAULT_CSS = """
    ExtensionWidgets { height: auto; padding: 0 1; color: $pi-text; }
    """
