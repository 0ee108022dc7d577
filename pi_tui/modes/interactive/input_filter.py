"""`InputFilter`: terminal input put right before Textual's key parser reads it.

Two things Textual's parser gets wrong, both fixed on the raw input, chunk by chunk:

- **Pastes holding escape characters.** A terminal sends a paste between ``ESC [200~`` and
  ``ESC [201~``. Meeting an ESC inside it, the parser reads what follows as a key sequence: pasting
  text with colour codes (a copied log, ``git diff --color`` output) cut the paste short, typed the rest
  as keys after it (``ESC d`` is Alt+D, ``ESC [A`` is Up) and left the editor scrambled. pi drops control
  characters from a paste; so does this filter: inside a paste, every ESC that does not begin the end
  marker is removed.
- **xterm's modifyOtherKeys keys.** ``CSI 27 ; modifiers ; code ~`` is how xterm, and tmux before 3.5
  with ``extended-keys on``, send Shift+Enter, Ctrl+Enter, Alt+Enter and the like. Textual reads Enter's
  (and Backspace's, Escape's) that way as ``shift+\\r``, a key nothing knows, and drops Alt, so
  Shift+Enter and Ctrl+Enter did nothing. The filter rewrites them into the kitty keyboard protocol's
  ``CSI code ; modifiers u``, which Textual reads right (``shift+enter``).

It also takes out the terminal's answer to the app's background-colour query (OSC 11, see
`pi_tui.modes.interactive.terminal_theme`), which Textual would type into the editor as keys, and keeps
the colour in `InputFilter.backgrounds` for the parser to report.
"""

from __future__ import annotations

import re

from .terminal_theme import Appearance, parse_background_reply, parse_scheme_report

__all__ = ["PASTE_END", "PASTE_START", "InputFilter"]

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

_MODIFY_OTHER_KEYS = re.compile(r"\x1b\[27;(\d+);(\d+)~")
_MODIFY_OTHER_KEYS_START = re.compile(r"\x1b\[2(?:7(?:;[\d;]*)?)?$")
"""The start of such a sequence at the end of a chunk, from ``ESC [2`` on. A chunk ending in ``ESC`` or
``ESC [`` is passed on as it is: that may be the Escape key (or Alt+[), which must not wait for more."""

_BACKGROUND_REPLY = "\x1b]11;"
_REPLY_MAX = 40
"""An answer is shorter than this: an unended start of one longer than it is not held back any more."""


def _partial_suffix(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that is a beginning of ``marker`` (shorter than it)."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


def _kitty_form(match: re.Match[str]) -> str:
    modifiers, code = match.groups()
    return f"\x1b[{code};{modifiers}u"


class InputFilter:
    """Filters terminal input as it is read (one instance per input stream).

    A lone Escape key is never held back (the parser times it out itself). A chunk that ends in the
    middle of a paste's end marker, or of a modifyOtherKeys sequence, keeps that part until the next
    chunk completes it: the terminal is in the middle of sending it.
    """

    def __init__(self) -> None:
        self.in_paste = False
        self._held = ""  # the start of a marker or sequence cut by the end of the last chunk
        self._tail = ""  # outside a paste: the last characters passed on, for a start marker split in two
        self.backgrounds: list[tuple[int, int, int]] = []
        """Background colours the terminal answered (OSC 11), taken out of the keys; the reader empties it."""
        self.schemes: list[Appearance] = []
        """Colour schemes the terminal reported (``CSI ? 997 ; n n``), taken out of the keys likewise."""

    def feed(self, data: str) -> str:
        """The input to hand to the key parser for the chunk ``data``."""
        out: list[str] = []
        data = self._held + data
        self._held = ""
        index = 0
        while index < len(data):
            if not self.in_paste:
                seen = self._tail + data[index:]
                found = seen.find(PASTE_START)
                if found < 0:
                    out.append(self._keys(data[index:]))
                    self._tail = seen[-(len(PASTE_START) - 1) :]
                    break
                end = index + found - len(self._tail) + len(PASTE_START)
                out.append(self._keys(data[index:end]))
                self._tail = ""
                self.in_paste = True
                index = end
            else:
                found = data.find(PASTE_END, index)
                if found < 0:
                    keep = _partial_suffix(data[index:], PASTE_END)
                    out.append(data[index : len(data) - keep].replace("\x1b", ""))
                    self._held = data[len(data) - keep :]
                    break
                out.append(data[index:found].replace("\x1b", ""))
                out.append(PASTE_END)
                self.in_paste = False
                index = found + len(PASTE_END)
        return "".join(out)

    def _keys(self, text: str) -> str:
        """Outside a paste: modifyOtherKeys sequences in their kitty form (a cut one is held back), the
        terminal's background answers taken out (a cut one held back too)."""
        while (start := text.find(_BACKGROUND_REPLY)) >= 0:
            found = parse_background_reply(text[start:])
            if found is not None and found[1] == 0:
                if found[0] is not None:  # an answer naming no colour this reads is dropped all the same
                    self.backgrounds.append(found[0])
                text = text[:start] + text[start + found[2] :]
                continue
            if not self._held and len(text) - start < _REPLY_MAX and "\x07" not in text[start:]:
                self._held = text[start:]
                text = text[:start]
            break
        else:
            # the answer's start cut by the end of the chunk (from ``ESC ] 1`` on: ``ESC ]`` may be Alt+])
            partial = _partial_suffix(text, _BACKGROUND_REPLY)
            if partial >= 3 and not self._held:
                self._held = text[-partial:]
                text = text[:-partial]
        while (scheme := parse_scheme_report(text)) is not None:
            self.schemes.append(scheme[0])
            text = text[: scheme[1]] + text[scheme[2] :]
        cut = _MODIFY_OTHER_KEYS_START.search(text)
        if cut is not None and not self._held:
            self._held = text[cut.start() :]
            text = text[: cut.start()]
        return _MODIFY_OTHER_KEYS.sub(_kitty_form, text)
