"""`PasteGuard`: keeps a bracketed paste whole when the pasted text holds escape characters.

A terminal sends a paste between ``ESC [200~`` and ``ESC [201~``. Textual's key parser, meeting an ESC
inside a paste, reads what follows as a key sequence: pasting text with colour codes (a copied log,
``git diff --color`` output) cut the paste short, typed the rest as keys after it (``ESC d`` is Alt+D,
``ESC [A`` is Up) and left the editor scrambled. pi drops control characters from a paste; so does this
filter, before the parser sees the input: inside a paste every ESC that does not begin the end marker is
removed, and the rest passes through unchanged.
"""

from __future__ import annotations

__all__ = ["PASTE_END", "PASTE_START", "PasteGuard"]

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


def _partial_suffix(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that is a beginning of ``marker`` (shorter than it)."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


class PasteGuard:
    """Filters terminal input, chunk by chunk, as it is read (one instance per input stream).

    Outside a paste nothing is held back or changed (a lone Escape key must reach the parser at once).
    Inside one, a chunk that ends with the first characters of the end marker keeps them until the
    next chunk says whether the marker is complete: the terminal is in the middle of sending it.
    """

    def __init__(self) -> None:
        self.in_paste = False
        self._held = ""  # inside a paste: the start of what may be the end marker
        self._tail = ""  # outside a paste: the last characters passed on, for a start marker split in two

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
                    out.append(data[index:])
                    self._tail = seen[-(len(PASTE_START) - 1) :]
                    break
                end = index + found - len(self._tail) + len(PASTE_START)
                out.append(data[index:end])
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
