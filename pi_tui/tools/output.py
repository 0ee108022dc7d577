"""Streaming command output with bounded memory, a tail view and a spill file for the full text.

Bytes arrive in arbitrary chunks. They are decoded incrementally (a multi-byte character may be split
across chunks), cleaned (ANSI escape sequences, carriage returns and other control characters
removed) and counted. Only the recent tail is kept in memory; once the output outgrows the display
limits, everything is also written to ``$TMPDIR/<prefix>-<16 hex>.log`` so nothing is lost.
"""

from __future__ import annotations

import codecs
import re
import secrets
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_tail, utf8_len

__all__ = ["OutputAccumulator", "OutputSnapshot", "sanitize_output"]

# CSI (colours, cursor moves), OSC (titles, hyperlinks; ended by BEL or ST), charset selection and
# the remaining two-byte escapes.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[()*+][0-9A-Za-z]"
    r"|\x1b[@-Z\\-_]"
)
# Everything below space except tab and newline, plus DEL (\r included: progress bars redraw a line).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# How far back an unfinished escape sequence may start and still be held for the next chunk.
_ESCAPE_HOLD = 256


def sanitize_output(text: str) -> str:
    """Remove ANSI escape sequences, carriage returns and other control characters."""
    return _CONTROL.sub("", _ANSI.sub("", text))


@dataclass(slots=True)
class OutputSnapshot:
    """The display view of the output so far.

    Attributes:
        content: The tail that fits the limits.
        truncation: What was cut, with totals over the whole output.
        full_output_path: The spill file, once the output outgrew the limits.
        last_line_bytes: Size of the last line in full (for the partial-line notice).
    """

    content: str
    truncation: TruncationResult
    full_output_path: Path | None
    last_line_bytes: int


class OutputAccumulator:
    """Collects a command's merged stdout/stderr.

    Args:
        max_lines: Display line limit.
        max_bytes: Display byte limit; also the size past which the spill file is started.
        temp_prefix: File name prefix of the spill file.
        temp_dir: Where the spill file goes (default: the system temp directory).
    """

    def __init__(
        self,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_prefix: str = "pi-bash",
        temp_dir: Path | None = None,
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._keep_bytes = max(2 * max_bytes, 1)
        self._temp_prefix = temp_prefix
        self._temp_dir = temp_dir
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._held = ""  # an escape sequence that may continue in the next chunk
        self._lines: deque[str] = deque()
        self._line_sizes: deque[int] = deque()
        self._lines_bytes = 0
        self._open = ""  # the unfinished last line (tail only, if huge)
        self._open_bytes = 0  # its full size
        self._last_complete_bytes = 0
        self._completed_lines = 0
        self.total_bytes = 0
        self._early: list[str] | None = []  # the whole output until the spill file exists
        self._file: IO[str] | None = None
        self.full_output_path: Path | None = None
        self._finished = False

    @property
    def total_lines(self) -> int:
        return self._completed_lines + (1 if self._open_bytes > 0 else 0)

    def feed(self, data: bytes) -> None:
        """Add a chunk of raw output."""
        if self._finished:
            raise RuntimeError("cannot feed a finished OutputAccumulator")
        self._ingest(self._decoder.decode(data))

    def finish(self) -> None:
        """Flush the decoder and anything held back. Idempotent."""
        if self._finished:
            return
        tail = self._held + self._decoder.decode(b"", final=True)
        self._held = ""
        self._commit(sanitize_output(tail))
        self._finished = True

    def close(self) -> None:
        """Close the spill file (its contents stay on disk)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def snapshot(self) -> OutputSnapshot:
        """The tail view with totals over everything received so far."""
        text = "\n".join(self._lines)
        text = f"{text}\n{self._open}" if self._lines else self._open
        tail = truncate_tail(text, max_lines=self.max_lines, max_bytes=self.max_bytes)
        truncated = self.total_lines > self.max_lines or self.total_bytes > self.max_bytes
        truncated_by = None
        if truncated:
            truncated_by = tail.truncated_by or ("bytes" if self.total_bytes > self.max_bytes else "lines")
            self._ensure_file()
        truncation = TruncationResult(
            content=tail.content,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
            output_lines=tail.output_lines,
            output_bytes=tail.output_bytes,
            last_line_partial=tail.last_line_partial,
            first_line_exceeds_limit=False,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )
        last_line = self._open_bytes if self._open_bytes > 0 else self._last_complete_bytes
        if self._file is not None:
            self._file.flush()
        return OutputSnapshot(tail.content, truncation, self.full_output_path, last_line)

    # --- internals ------------------------------------------------------------------------------

    def _ingest(self, text: str) -> None:
        text = self._held + text
        self._held = ""
        escape = text.rfind("\x1b")
        if escape != -1 and len(text) - escape <= _ESCAPE_HOLD and not _ANSI.match(text, escape):
            # Possibly the start of a sequence whose end is still in the pipe.
            self._held = text[escape:]
            text = text[:escape]
        if text:
            self._commit(sanitize_output(text))

    def _commit(self, clean: str) -> None:
        if not clean:
            return
        self.total_bytes += utf8_len(clean)
        self._write(clean)
        parts = clean.split("\n")
        if len(parts) == 1:
            self._extend_open(parts[0])
        else:
            self._extend_open(parts[0])
            finished = [self._open, *parts[1:-1]]
            sizes = [self._open_bytes]
            if len(finished) > self.max_lines + 1:
                # The chunk alone fills the line limit: nothing older can be shown, and only its
                # last lines can.
                self._lines.clear()
                self._line_sizes.clear()
                self._lines_bytes = 0
                finished = finished[-(self.max_lines + 1) :]
                sizes = []
            sizes += [utf8_len(line) for line in finished[len(sizes) :]]
            for line, size in zip(finished, sizes, strict=True):
                self._push_line(line, size)
            self._completed_lines += len(parts) - 1
            self._open = ""
            self._open_bytes = 0
            self._extend_open(parts[-1])
        if self._early is not None and (
            self.total_bytes > self.max_bytes or self.total_lines > self.max_lines
        ):
            self._ensure_file()

    def _extend_open(self, piece: str) -> None:
        if not piece:
            return
        self._open += piece
        self._open_bytes += utf8_len(piece)
        if len(self._open) > 2 * self._keep_bytes:
            self._open = _tail_chars(self._open, self._keep_bytes)

    def _push_line(self, line: str, size: int) -> None:
        self._last_complete_bytes = size
        if size > self._keep_bytes:
            line = _tail_chars(line, self._keep_bytes)
        kept = utf8_len(line) if size > self._keep_bytes else size
        self._lines.append(line)
        self._line_sizes.append(kept)
        self._lines_bytes += kept
        # Drop the oldest line once the newer ones alone fill the display limits: it can never be shown.
        while len(self._lines) > 1 and (
            len(self._lines) > self.max_lines + 1
            or self._lines_bytes - self._line_sizes[0] + len(self._lines) - 2 >= self.max_bytes
        ):
            self._lines.popleft()
            self._lines_bytes -= self._line_sizes.popleft()

    def _write(self, clean: str) -> None:
        if self._file is not None:
            self._file.write(clean)
        elif self._early is not None:
            self._early.append(clean)

    def _ensure_file(self) -> None:
        if self.full_output_path is not None:
            return
        directory = self._temp_dir or Path(tempfile.gettempdir())
        self.full_output_path = directory / f"{self._temp_prefix}-{secrets.token_hex(8)}.log"
        self._file = open(self.full_output_path, "w", encoding="utf-8", errors="surrogatepass")  # noqa: SIM115
        for piece in self._early or []:
            self._file.write(piece)
        self._early = None


def _tail_chars(text: str, max_bytes: int) -> str:
    """Roughly the last ``max_bytes`` bytes of ``text`` (at least that many characters' worth)."""
    return text[-max_bytes:]
