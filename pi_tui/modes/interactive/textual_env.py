"""Settings Textual reads from the environment once, handed over without leaking to the session's commands.

Textual reads ``ESCDELAY`` and ``TEXTUAL_COLOR_SYSTEM`` when ``textual.constants`` is first imported.
pi-tui's own settings for them (``PI_TUI_ESC_TIMEOUT``, ``terminal.trueColor`` / ``PI_TRUE_COLOR``) are
put into the environment for that import only; the environment the bash tool and ``!`` commands
inherit is left as it was.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping

__all__ = ["hand_to_textual"]


def hand_to_textual(values: Mapping[str, str]) -> bool:
    """Import ``textual.constants`` with ``values`` set in the environment, then restore it; True when
    done (False when there is nothing to hand over, or Textual's settings were already read)."""
    if not values or "textual.constants" in sys.modules:
        return False
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        importlib.import_module("textual.constants")
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    return True
