"""Keys typed while the full-screen interface starts reach it as typed.

Textual puts the terminal in raw mode only once its driver starts, most of a second after ``pi-tui`` was
run. Until then the terminal is in line mode, which turns the Enter key's carriage return into a line
feed as it arrives; the app then read that line feed as Ctrl+J, so a prompt typed ahead and sent with
Enter ended up in the editor with a new line after it instead of being sent. `hold` switches that
translation (and line editing and echo) off as soon as the interface is chosen; the driver restores the
terminal to `original_attributes` (not to the held state) on exit and on suspend, and `release` puts
them back in any case.

No Textual here: `hold` runs before Textual is imported.
"""

from __future__ import annotations

import sys
import termios
from typing import TypeAlias

__all__ = ["TerminalAttributes", "hold", "original_attributes", "release"]

TerminalAttributes: TypeAlias = list[int | list[bytes | int]]
"""What ``termios.tcgetattr`` returns: iflag, oflag, cflag, lflag, ispeed, ospeed, cc."""

_held: tuple[int, TerminalAttributes] | None = None
"""The terminal's descriptor and its attributes before `hold` changed them."""


def hold() -> None:
    """Read the keys typed from now on as they are typed (no Enter-to-line-feed, no echo). No-op when
    standard input is not a terminal, or when already held."""
    global _held
    if _held is not None:
        return
    stream = sys.__stdin__
    if stream is None:
        return
    try:
        fd = stream.fileno()
        if not stream.isatty():
            return
        before = termios.tcgetattr(fd)
        changed = termios.tcgetattr(fd)
        changed[0] &= ~termios.ICRNL
        changed[3] &= ~(termios.ICANON | termios.ECHO)
        changed[6][termios.VMIN] = 1
        changed[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, changed)
    except (termios.error, OSError, ValueError):
        return
    _held = (fd, before)


def original_attributes() -> TerminalAttributes | None:
    """The terminal's attributes before `hold` (None when nothing is held): what to restore."""
    return None if _held is None else _held[1]


def release() -> None:
    """Give the terminal its attributes from before `hold` back (idempotent)."""
    global _held
    held, _held = _held, None
    if held is None:
        return
    fd, before = held
    try:
        termios.tcsetattr(fd, termios.TCSANOW, before)
    except (termios.error, OSError):
        pass
