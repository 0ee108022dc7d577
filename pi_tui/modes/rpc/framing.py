"""RPC framing: LF-delimited JSON records in, LF-delimited JSON records out.

Input is split on ``\\n`` bytes only (a trailing ``\\r`` is dropped; U+2028/U+2029 inside a record are
ordinary characters), and a last line without LF still counts. A line longer than
``MAX_LINE_BYTES`` is skipped as it streams past, without being kept in memory, and reported as one
over-long line. Stdin is read on a thread so a slow or huge writer never blocks the event loop; the
thread hands lines over through a small bounded queue, so a client that floods us waits instead of
growing our memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import threading
from dataclasses import dataclass
from typing import Any

from pi_tui.util import json_safe

__all__ = ["MAX_LINE_BYTES", "Line", "LineReader", "JsonlWriter", "OutputClosed"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest command line we parse (images travel base64-encoded inside ``prompt``)."""

_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Line:
    """One input record: its bytes, or ``too_long`` with the size that was skipped."""

    data: bytes = b""
    too_long: int = 0


class LineReader:
    """Reads LF-delimited lines from a file descriptor on a daemon thread.

    ``await next_line()`` returns a `Line`, or None at end of input.
    """

    def __init__(self, fd: int, *, max_line: int = MAX_LINE_BYTES, queue_size: int = 64) -> None:
        self._fd = fd
        self._max = max_line
        self._queue: asyncio.Queue[Line | None] = asyncio.Queue(maxsize=queue_size)
        self._loop = asyncio.get_running_loop()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rpc-stdin", daemon=True)
        self._thread.start()

    async def next_line(self) -> Line | None:
        return await self._queue.get()

    def _hand_over(self, item: Line | None) -> bool:
        if self._stopped.is_set():
            return False
        try:
            asyncio.run_coroutine_threadsafe(self._queue.put(item), self._loop).result()
        except Exception:  # the loop closed or cancelled the hand-over: nobody is listening any more
            self._stopped.set()
            return False
        return True

    def _run(self) -> None:
        pending: list[bytes] = []
        size = 0
        skipping = 0  # bytes of an over-long line dropped so far (0 = not skipping)
        while not self._stopped.is_set():
            try:
                chunk = os.read(self._fd, _CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if skipping:
                    skipping += len(piece)
                elif size + len(piece) > self._max:
                    skipping = size + len(piece)
                    pending, size = [], 0
                else:
                    pending.append(piece)
                    size += len(piece)
                if end < 0:
                    break
                if skipping:
                    line = Line(too_long=skipping)
                    skipping = 0
                else:
                    line = Line(data=b"".join(pending))
                pending, size = [], 0
                if not self._hand_over(line):
                    return
                start = end + 1
        if skipping:
            self._hand_over(Line(too_long=skipping))
        elif pending and any(pending):
            self._hand_over(Line(data=b"".join(pending)))
        self._hand_over(None)

    def stop(self) -> None:
        self._stopped.set()


def decode_line(line: Line) -> object:
    """The JSON value of a line.

    Raises:
        ValueError: the line is too long, not UTF-8, not JSON, or nested deeper than
            `json_safe.MAX_RECORD_DEPTH` (the message says which).
    """
    if line.too_long:
        raise ValueError(f"line of {line.too_long} bytes is longer than the {MAX_LINE_BYTES}-byte limit")
    data = line.data[:-1] if line.data.endswith(b"\r") else line.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 at byte {exc.start}") from exc
    try:
        return json_safe.loads(text, limit=json_safe.MAX_RECORD_DEPTH)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at position {exc.pos} (line {exc.lineno} column {exc.colno})") from exc


class OutputClosed(Exception):
    """The client closed our stdout."""


class JsonlWriter:
    """Writes one JSON record per line to a file descriptor, whole lines only, in call order.

    Writes block until the client reads (that is the back-pressure pi applies too); a closed pipe
    raises `OutputClosed` once and makes every later write a no-op.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.closed = False
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        if self.closed:
            return
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        try:
            data = (text + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (from a tool's output, say): escape it as JSON
            data = (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    written = os.write(self._fd, view)
                except BlockingIOError:  # a non-blocking pipe that is full: wait until it drains
                    select.select([], [self._fd], [], 1.0)
                    continue
                except OSError as exc:  # BrokenPipeError and friends: the client went away
                    self.closed = True
                    raise OutputClosed(str(exc)) from exc
                view = view[written:]
