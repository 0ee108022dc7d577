"""A Rich renderable drawn once per width, for a widget that shows one (a thought's markdown).

Textual sizes a widget showing a Rich renderable by drawing the renderable whole and counting its lines,
then draws it whole again for the lines it shows. For a thought's markdown (parsed, wrapped, styled) that
second drawing repeated the first: every thought a long chat's reading ahead shows was drawn twice, the
second time in the frame of the key that shows it. `DrawnOnce` keeps the segments of its last drawing and
gives them again while the width and the options that shape the text are the same.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

__all__ = ["DrawnOnce"]

_OptionsKey = tuple[object, ...]


def _shape(options: ConsoleOptions) -> _OptionsKey:
    """What in ``options`` can change the lines drawn (not the height: Textual gives it when drawing,
    not when measuring, and markdown does not use it)."""
    return (
        options.max_width,
        options.min_width,
        options.justify,
        options.overflow,
        options.no_wrap,
        options.highlight,
        options.markup,
        options.legacy_windows,
        options.ascii_only,
        options.encoding,
        options.size.width,
    )


class DrawnOnce:
    """``renderable``, whose segments are reused while the console options shaping them are the same.

    Args:
        renderable: What to draw (it must draw the same for the same options: no time or state in it).
    """

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._shape: _OptionsKey | None = None
        self._console_id = 0
        self._segments: list[Segment] = []
        self.drawings = 0
        """How many times the renderable itself was drawn."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shape = _shape(options)
        if shape != self._shape or id(console) != self._console_id:
            self._segments = list(console.render(self.renderable, options))
            self._shape = shape
            self._console_id = id(console)
            self.drawings += 1
        yield from self._segments

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)
