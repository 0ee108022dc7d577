"""``PI_TUI_ESC_TIMEOUT``: how long a lone Escape byte waits for the rest of an Alt-key sequence.

pi reads the variable (milliseconds) for its own terminal input. Textual's input parser takes the same
wait from ``ESCDELAY`` once, when ``textual.constants`` is first imported; so before that import the
value is handed over through ``ESCDELAY`` for that moment only, and the environment the commands of the
session inherit is left as it was.
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ["ESC_TIMEOUT_ENV", "apply_escape_timeout"]

ESC_TIMEOUT_ENV = "PI_TUI_ESC_TIMEOUT"


def apply_escape_timeout() -> bool:
    """Give Textual the Escape wait ``PI_TUI_ESC_TIMEOUT`` asks for; True when it was applied.

    A value that is not a whole number of milliseconds above 0 is ignored (Textual keeps its default);
    so is the variable once Textual's settings were already read in this process.
    """
    raw = os.environ.get(ESC_TIMEOUT_ENV, "").strip()
    if not raw.isdigit() or int(raw) <= 0 or "textual.constants" in sys.modules:
        return False
    before = os.environ.get("ESCDELAY")
    os.environ["ESCDELAY"] = str(int(raw))
    try:
        importlib.import_module("textual.constants")
    finally:
        if before is None:
            del os.environ["ESCDELAY"]
        else:
            os.environ["ESCDELAY"] = before
    return True
