"""The full text of a folder's sessions, for the resume picker's search, kept on disk between runs.

pi's session search looks at every user and assistant message's text (`message_text`: text blocks only,
no thinking, tool calls or tool results), besides the id, name and cwd. The listing reads far less than
that (a header and a few lines, see `pi_tui.session.listing`), and reading the conversation of every
session each time the picker opens would cost seconds for large files. So each session folder keeps the
text of its sessions in ``.pi-tui-search.ndjson`` (pi-tui's own file, beside the listing's cache), one line
per session file: its size and mtime when it was read, where the read stopped with the 64 bytes before
that point, and the text. The text is kept the way it is matched: lower-case, each run of whitespace one
space (see `normalize`).

- A file whose size and mtime are unchanged is not opened.
- A file that grew (sessions are appended to) is read from where the last read stopped, once the bytes
  just before that point are found unchanged; its new messages' text is added.
- Anything else (a rewritten file, a row written by another version, an unreadable index) is read in
  full. A file that is gone loses its row when the index is saved.

The index is only an aid: a stale or missing row costs a read, never a wrong text, and failing to write
the file is ignored. Reading happens off the UI thread (`TextIndex.update`), after the picker opened.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pi_tui.util import json_safe

from .appended_lines import continues_after, feed_lines
from .listing import line_role, message_text

__all__ = ["INDEX_NAME", "TextIndex", "index_texts", "normalize", "read_text"]

INDEX_NAME = ".pi-tui-search.ndjson"
"""Not ``*.jsonl``: pi and pi-tui list those as sessions."""
_VERSION = 1
_CHUNK = 1 << 20  # read and scanned at a time; between chunks a reader may let other work go first
_HEADER_LIMIT = 1 << 16
_FAST_DECODE_BYTES = 1 << 20  # from this size on, message lines are decoded with orjson in front

_MESSAGE_PREFIX = b'{"type":"message"'
_TYPED_PREFIX = b'{"type":"'


def normalize(text: str) -> str:
    """Text the way the index keeps it and the search matches it: lower-case, whitespace runs as one
    space, no space at either end."""
    return " ".join(text.lower().split())


@dataclass(frozen=True, slots=True)
class _Row:
    size: int
    mtime_ns: int
    end: int  # bytes read: -1 when the file did not end with a newline (no point to go on from)
    tail: bytes  # the bytes just before ``end``
    text: str


class _Reader:
    """The texts of user and assistant messages in whole lines of a session file."""

    def __init__(self, decode: Callable[[bytes], object]) -> None:
        self.decode = decode
        self.parts: list[str] = []

    def feed(self, buf: bytes, pos: int = 0, size: int | None = None) -> None:
        size = len(buf) if size is None else size
        while pos < size:
            end = buf.find(b"\n", pos, size)
            if end < 0:
                end = size
            if buf.startswith(_MESSAGE_PREFIX, pos):
                if line_role(buf, pos, end) in ("user", "assistant"):
                    self._take(buf[pos:end])
            elif not buf.startswith(_TYPED_PREFIX, pos) and buf[pos:end].strip():
                self._take(buf[pos:end])  # another key order (never pi's or pi-tui's): decode to see
            pos = end + 1

    def _take(self, line: bytes) -> None:
        try:
            data = self.decode(line)
        except (ValueError, RecursionError):  # a corrupt line is skipped, as pi skips it
            return
        if not isinstance(data, dict) or data.get("type") != "message":
            return
        message = data.get("message")
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            text = normalize(message_text(message))
            if text:
                self.parts.append(text)


def _decoder(size: int) -> Callable[[bytes], object]:
    if size >= _FAST_DECODE_BYTES:
        from .loader import line_decoder

        return line_decoder(True)
    return lambda line: json_safe.loads(line, limit=json_safe.MAX_RECORD_DEPTH)


def _nothing() -> None:
    return None


def _read(
    path: Path, stat: os.stat_result, known: _Row | None, between: Callable[[], None] = _nothing
) -> _Row | None:
    """The row of ``path`` now: from ``known`` on when the file only grew since, else read in full.
    None when the file cannot be read or does not start with a session header. ``between`` is called
    after each chunk (see `index_texts`'s ``pause``)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        first = handle.readline(_HEADER_LIMIT)
        try:
            header = json_safe.loads(first, limit=json_safe.MAX_RECORD_DEPTH)
        except (ValueError, RecursionError):
            return None
        if not isinstance(header, dict) or header.get("type") != "session":
            return None
        reader = _Reader(_decoder(stat.st_size))
        text = ""
        if known is not None and continues_after(handle, len(first), known.end, known.tail, stat.st_size):
            text = known.text
        read = feed_lines(handle, reader, _CHUNK, between)
    text = " ".join([text, *reader.parts] if text else reader.parts)
    return _Row(
        stat.st_size, stat.st_mtime_ns, read.end if read.ended else -1, read.tail if read.ended else b"", text
    )


def read_text(path: Path) -> str | None:
    """The normalized text of every user and assistant message of one session file, without an index;
    None when it is not a readable session file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    row = _read(path, stat, None)
    return None if row is None else row.text


class TextIndex:
    """The message texts of one session folder's files, from and to its ``.pi-tui-search.ndjson``.

    Not shared between threads: one thread updates an index, and hands texts over as plain strings.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / INDEX_NAME
        self._rows: dict[str, _Row] = {}
        self._seen: set[str] = set()
        self._dirty = False
        try:
            lines = self.path.read_bytes().split(b"\n")
        except OSError:
            return
        # One JSON value per line, each decoded on its own: a thread reading the index hands the
        # interpreter back between rows (one decode of the whole file would hold it for tens of ms).
        if _decoded(lines[0]) != {"version": _VERSION}:
            return
        for line in lines[1:]:
            found = _row_of(_decoded(line)) if line else None
            if found is not None:
                self._rows[found[0]] = found[1]

    def text(self, path: Path) -> str | None:
        """The kept text of ``path`` when its row is current (same size and mtime), without reading
        the file; None otherwise."""
        try:
            stat = path.stat()
        except OSError:
            return None
        row = self._rows.get(path.name)
        if row is not None and row.size == stat.st_size and row.mtime_ns == stat.st_mtime_ns:
            self._seen.add(path.name)
            return row.text
        return None

    def update(self, path: Path, between: Callable[[], None] = _nothing) -> str | None:
        """The text of ``path``, reading the file (or only what was appended to it) when its row is
        not current; None when it is not a readable session file. ``between`` is called between the
        chunks read."""
        name = path.name
        self._seen.add(name)
        try:
            stat = path.stat()
        except OSError:
            self._forget(name)
            return None
        row = self._rows.get(name)
        if row is not None and row.size == stat.st_size and row.mtime_ns == stat.st_mtime_ns:
            return row.text
        fresh = _read(path, stat, row if row is not None and row.end >= 0 else None, between)
        if fresh is None:
            self._forget(name)
            return None
        self._rows[name] = fresh
        self._dirty = True
        return fresh.text

    def _forget(self, name: str) -> None:
        if self._rows.pop(name, None) is not None:
            self._dirty = True

    def save(self, *, prune: bool = True) -> None:
        """Write the index when a row changed (atomically; a failed write is ignored).

        Args:
            prune: also drop the rows of files not asked about since the index was loaded (files
                gone); False when only some of the folder's files were looked at.
        """
        if prune:
            for name in [name for name in self._rows if name not in self._seen]:
                del self._rows[name]
                self._dirty = True
        if not self._dirty:
            return
        # ASCII with escapes: a lone surrogate a message held reads back as it was written
        lines = [json.dumps({"version": _VERSION})]
        lines += [json.dumps(_raw_of(name, row), separators=(",", ":")) for name, row in self._rows.items()]
        data = "\n".join(lines) + "\n"
        from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

        with contextlib.suppress(OSError):
            replace_file_bytes(self.path, data.encode("ascii"), durable=False)
        self._dirty = False


def _decoded(line: bytes) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _raw_of(name: str, row: _Row) -> dict[str, object]:
    return {
        "name": name,
        "size": row.size,
        "mtime_ns": row.mtime_ns,
        "end": row.end,
        "tail": base64.b64encode(row.tail).decode("ascii"),
        "text": row.text,
    }


def _row_of(raw: object) -> tuple[str, _Row] | None:
    """A row read back (its file's name and the row); None for anything else, which is read again."""
    if not isinstance(raw, dict):
        return None
    try:
        name = raw["name"]
        row = _Row(
            int(raw["size"]),
            int(raw["mtime_ns"]),
            int(raw["end"]),
            base64.b64decode(raw["tail"], validate=True),
            raw["text"],
        )
    except (KeyError, TypeError, ValueError):
        return None
    return (name, row) if isinstance(name, str) and isinstance(row.text, str) else None


def index_texts(
    paths: list[Path],
    deliver: Callable[[dict[Path, str], int], None],
    stop: Callable[[], bool] = lambda: False,
    piece_seconds: float = 0.02,
    save_seconds: float = 2.0,
    pause: Callable[[], None] = _nothing,
) -> bool:
    """Bring the text of ``paths`` (whole listings of their folders) up to date, in pieces.

    The texts the folders' indexes already hold for unchanged files come first, in one piece; then the
    files that changed or were never read, in the order given (the listing's: most recent first).

    Args:
        paths: session files; their folders' indexes are loaded, updated and saved.
        deliver: called after each piece (at most every ``piece_seconds`` of reading) with the texts
            found in it and how many of ``paths`` are done.
        stop: asked between files; True ends the work early (what was read is still saved).
        piece_seconds: how long a piece reads before it delivers.
        save_seconds: how long it reads between saves of the indexes (what was read survives a
            process that ends before the work does).
        pause: called before each file and after each chunk of a file read: it may wait, to let
            other work (a picker's keystrokes) go first.

    Returns:
        True when every file was looked at, False when ``stop`` ended the work.
    """
    import time

    indexes: dict[Path, TextIndex] = {}
    for path in paths:
        if path.parent not in indexes:
            indexes[path.parent] = TextIndex(path.parent)
    found: dict[Path, str] = {}
    stale: list[Path] = []
    for path in paths:
        text = indexes[path.parent].text(path)
        if text is None:
            stale.append(path)
        else:
            found[path] = text
    done = len(paths) - len(stale)
    deliver(found, done)
    found = {}
    started = saved = time.perf_counter()
    finished = True
    for path in stale:
        pause()
        if stop():
            finished = False
            break
        text = indexes[path.parent].update(path, pause)
        done += 1
        if text is not None:
            found[path] = text
        if time.perf_counter() - started >= piece_seconds:
            deliver(found, done)
            found, started = {}, time.perf_counter()
        if started - saved >= save_seconds:
            for index in indexes.values():
                index.save(prune=False)
            saved = time.perf_counter()
    # Saved before the last delivery: once the texts are all there (the picker shows no progress), the
    # index on disk holds them too, even when the process ends right after.
    for index in indexes.values():
        index.save(prune=finished)
    if found or finished:
        deliver(found, done)
    return finished
