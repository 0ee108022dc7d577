"""Automatic theme: a ``light/dark`` theme setting follows the terminal's background, as pi's does.

pi writes the automatic choice as two theme names joined by a slash (``"light/dark"``: the theme for a
light terminal, then the one for a dark terminal); a theme name never holds a slash. Which one applies
depends on the terminal's background:

- at start-up, from ``COLORFGBG`` (``"15;0"``: the last number is the background's 256-colour index),
  read from the environment at once, so nothing waits before the first frame;
- after the first frame, from the terminal's answer to an OSC 11 query (``ESC ] 11 ; ? BEL``, answered
  ``ESC ] 11 ; rgb:RRRR/GGGG/BBBB`` ended by BEL or ST; ``rgba:`` and ``#rrggbb`` forms are read too):
  when it says otherwise, the other theme is applied then. A terminal that does not answer leaves the
  start-up choice;
- for an automatic setting, also from the terminal's colour scheme: asked with ``CSI ? 996 n``,
  answered ``CSI ? 997 ; 1 n`` (dark) or ``; 2 n`` (light). pi prefers this answer to the background's,
  and turns on the terminal's notifications of a change (mode 2031, the same report whenever the
  system switches between light and dark), so the theme follows the switch.

A colour is light when its relative luminance (sRGB, as WCAG defines it) is at least one half.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal

__all__ = [
    "BACKGROUND_QUERY",
    "SCHEME_NOTIFY_OFF",
    "SCHEME_NOTIFY_ON",
    "SCHEME_QUERY",
    "Appearance",
    "appearance_from_env",
    "appearance_of_rgb",
    "parse_auto_theme",
    "parse_background_reply",
    "parse_scheme_report",
    "resolve_theme",
]

Appearance = Literal["light", "dark"]

BACKGROUND_QUERY = "\x1b]11;?\x07"
"""Asks the terminal for its background colour (OSC 11)."""

SCHEME_QUERY = "\x1b[?996n"
"""Asks the terminal for its colour scheme (light or dark)."""
SCHEME_NOTIFY_ON = "\x1b[?2031h"
"""Asks the terminal to report each change of its colour scheme."""
SCHEME_NOTIFY_OFF = "\x1b[?2031l"

_SCHEME = re.compile(r"\x1b\[\?997;([12])n")

_REPLY = re.compile(r"\x1b\]11;([^\x07\x1b]*)(?:\x07|\x1b\\)")
_RGB = re.compile(r"rgba?:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})(?:/[0-9a-fA-F]{1,4})?", re.IGNORECASE)
_HEX = re.compile(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{12})")

_BASIC = (
    (0, 0, 0), (128, 0, 0), (0, 128, 0), (128, 128, 0), (0, 0, 128), (128, 0, 128), (0, 128, 128),
    (192, 192, 192), (128, 128, 128), (255, 0, 0), (0, 255, 0), (255, 255, 0), (0, 0, 255),
    (255, 0, 255), (0, 255, 255), (255, 255, 255),
)  # fmt: skip
"""The 16 basic colours as terminals commonly draw them."""


def parse_auto_theme(setting: str | None) -> tuple[str, str] | None:
    """``(light theme, dark theme)`` for an automatic setting (``"light/dark"``), else None."""
    if not setting or setting.count("/") != 1:
        return None
    light, dark = (part.strip() for part in setting.split("/"))
    return (light, dark) if light and dark else None


def resolve_theme(setting: str, appearance: Appearance) -> str:
    """The theme to show for ``setting`` on a terminal of ``appearance`` (a plain name is itself)."""
    pair = parse_auto_theme(setting)
    if pair is None:
        return setting
    return pair[0] if appearance == "light" else pair[1]


def _luminance(rgb: tuple[int, int, int]) -> float:
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = rgb
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def appearance_of_rgb(rgb: tuple[int, int, int]) -> Appearance:
    """Light or dark, for a background of colour ``rgb`` (0-255 each)."""
    return "light" if _luminance(rgb) >= 0.5 else "dark"


def _ansi256(index: int) -> tuple[int, int, int]:
    if index < 16:
        return _BASIC[index]
    if index < 232:
        cube = index - 16
        steps = (0, 95, 135, 175, 215, 255)
        return steps[cube // 36], steps[(cube // 6) % 6], steps[cube % 6]
    grey = 8 + (index - 232) * 10
    return grey, grey, grey


def appearance_from_env(env: Mapping[str, str] | None = None) -> Appearance | None:
    """The background's appearance as ``COLORFGBG`` gives it; None when it gives none."""
    value = (os.environ if env is None else env).get("COLORFGBG", "")
    for part in reversed(value.split(";")):
        part = part.strip()
        if part.isdigit() and int(part) <= 255:
            return appearance_of_rgb(_ansi256(int(part)))
    return None


def _scaled(digits: str) -> int:
    top: int = 16 ** len(digits) - 1
    return round(int(digits, 16) * 255 / top)


def _colour(value: str) -> tuple[int, int, int] | None:
    """``rgb:RRRR/GGGG/BBBB`` (1 to 4 digits a channel; ``rgba:`` too), ``#rrggbb`` or ``#rrrrggggbbbb``."""
    value = value.strip()
    if (rgb := _RGB.fullmatch(value)) is not None:
        red, green, blue = (_scaled(group) for group in rgb.groups())
        return red, green, blue
    if (hexa := _HEX.fullmatch(value)) is not None:
        digits = hexa.group(1)
        size = len(digits) // 3
        red, green, blue = (_scaled(digits[n * size : (n + 1) * size]) for n in range(3))
        return red, green, blue
    return None


def parse_background_reply(text: str) -> tuple[tuple[int, int, int] | None, int, int] | None:
    """The first OSC 11 answer in ``text``: its colour (0-255 each; None when it names none this can
    read) and where the answer starts and ends."""
    match = _REPLY.search(text)
    if match is None:
        return None
    return _colour(match.group(1)), match.start(), match.end()


def parse_scheme_report(text: str) -> tuple[Appearance, int, int] | None:
    """The first colour-scheme report in ``text``: light or dark, and where it starts and ends."""
    match = _SCHEME.search(text)
    if match is None:
        return None
    appearance: Appearance = "light" if match.group(1) == "2" else "dark"
    return appearance, match.start(), match.end()
