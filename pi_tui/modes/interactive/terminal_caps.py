"""What the terminal can show, decided as pi 0.87.1 decides it: OSC 8 hyperlinks and 24-bit colour.

Each has an override: the setting (``terminal.hyperlinks`` / ``terminal.trueColor``, ``true`` or
``false``) wins, else the variable (``PI_HYPERLINKS`` / ``PI_TRUE_COLOR``, ``1`` or ``0``); ``"auto"``
or nothing keeps detection (`pi_tui.resources.settings_schema.capability_override` reads the pair).

- Hyperlinks: detected from the environment as pi does (kitty, Ghostty, WezTerm, Warp, iTerm2,
  Windows Terminal, Alacritty, VS Code and Zed say yes; ``screen``, JetBrains' terminal and anything
  unknown say no; inside tmux, tmux is asked whether its client forwards them). Without them a link's
  address is written after its text, in parentheses.
- Colour depth: Textual (Rich) detects it from ``COLORTERM`` and ``TERM``; an override is handed to
  Textual as ``TEXTUAL_COLOR_SYSTEM`` (``truecolor`` or ``256``, pi's two depths) before Textual reads
  its settings, so it costs the first frame nothing. It is read from the global settings then (the
  project's settings load later, with the session).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from functools import cache

__all__ = ["color_system_for", "detect_hyperlinks", "hyperlinks_enabled"]

TMUX_PROBE_SECONDS = 0.25
"""How long tmux may take to say whether it forwards hyperlinks (pi's limit); no answer means no."""


def color_system_for(true_color: bool | None) -> str | None:
    """``TEXTUAL_COLOR_SYSTEM`` for an override (None: leave Textual's detection alone)."""
    if true_color is None:
        return None
    return "truecolor" if true_color else "256"


def _tmux_forwards_hyperlinks() -> bool:
    try:
        out = subprocess.run(
            ["tmux", "display-message", "-p", "#{client_termfeatures}"],
            capture_output=True,
            text=True,
            timeout=TMUX_PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "hyperlinks" in (feature.strip() for feature in out.stdout.split(","))


def detect_hyperlinks(environ: Mapping[str, str]) -> bool:
    """Whether the terminal ``environ`` describes shows OSC 8 links (pi's detection, without override)."""
    program = environ.get("TERM_PROGRAM", "").lower()
    term = environ.get("TERM", "").lower()
    if environ.get("TMUX") or term.startswith("tmux"):
        return _tmux_forwards_hyperlinks()
    if term.startswith("screen"):
        return False
    if environ.get("KITTY_WINDOW_ID") or program in ("kitty", "ghostty", "wezterm", "warpterminal", "iterm.app"):
        return True
    if "ghostty" in term or environ.get("GHOSTTY_RESOURCES_DIR") or environ.get("WEZTERM_PANE"):
        return True
    if environ.get("WARP_SESSION_ID") or environ.get("WARP_TERMINAL_SESSION_UUID"):
        return True
    if environ.get("ITERM_SESSION_ID") or environ.get("WT_SESSION"):
        return True
    return program in ("alacritty", "vscode", "zed")


@cache
def _detected() -> bool:
    return detect_hyperlinks(os.environ)


def hyperlinks_enabled(override: bool | None) -> bool:
    """Whether to write links as OSC 8: the override when there is one, else detection (done once)."""
    return override if override is not None else _detected()
