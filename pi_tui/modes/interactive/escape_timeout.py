"""``PI_TUI_ESC_TIMEOUT``: how long a lone Escape byte waits for the rest of an Alt-key sequence.

pi reads the variable (milliseconds) for its own terminal input. Textual's input parser takes the same
wait from ``ESCDELAY`` once, when ``textual.constants`` is first imported; so before that import the
value is handed over through ``ESCDELAY`` for that moment only, and the environment the commands of the
session inherit is left as it was.
"""

from __future__ import annotations

import os

from .textual_env import hand_to_textual

__all__ = ["ESC_TIMEOUT_ENV", "apply_escape_timeout", "escape_delay"]

ESC_TIMEOUT_ENV = "PI_TUI_ESC_TIMEOUT"


def escape_delay() -> str | None:
    """``ESCDELAY`` for ``PI_TUI_ESC_TIMEOUT``: its milliseconds when a whole number above 0, else None."""
    raw = os.environ.get(ESC_TIMEOUT_ENV, "").strip()
    return str(int(raw)) if raw.isdigit() and int(raw) > 0 else None


def apply_escape_timeout() -> bool:
    """Give Textual the Escape wait ``PI_TUI_ESC_TIMEOUT`` asks for; True when it was applied.

    A value that is not a whole number of milliseconds above 0 is ignored (Textual keeps its default);
    so is the variable once Textual's settings were already read in this process.
    """
    delay = escape_delay()
    return delay is not None and hand_to_textual({"ESCDELAY": delay})
