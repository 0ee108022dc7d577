"""Run a program in a pseudo-terminal and read its screen through `pyte`, as a user would see it.

Used by the TUI benchmarks (`bench.tui`) and by the real-terminal tests. Waits are on output, never
sleeps: `PtyScreen.wait_for` feeds the emulator with whatever the program writes until a predicate on
the screen holds (or a deadline passes), and reports when the byte that made it true arrived.

The emulator answers the terminal queries a real terminal answers (cursor position reports, device
attributes, and that it supports synchronized output), so prompt-toolkit and Textual behave as they do in
a terminal window. Like such a terminal, it shows a frame only once the program has finished writing it:
predicates are not evaluated between the start and the end of a synchronized update, so a frame read in
several pieces is never judged half-drawn.
"""

from __future__ import annotations

import fcntl
import gc
import os
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pyte

__all__ = ["PtyScreen", "ScreenTimeout", "process_cpu_seconds", "timing"]

_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


_SYNC_QUERY = b"\x1b[?2026$p"  # DECRQM: is synchronized output (mode 2026) supported?
_SYNC_REPLY = "\x1b[?2026;2$y"  # yes, and it is off for now
_SYNC_START = b"\x1b[?2026h"
_SYNC_END = b"\x1b[?2026l"


@contextmanager
def timing() -> Iterator[None]:
    """No cyclic collection in this, the measuring, process while a frame is timed: the emulator makes a
    cell object per character, and a full collection of them (30-40 ms) delayed reading the frame being
    waited for, which then counted against the program measured. Collections resume after the block."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class ScreenTimeout(AssertionError):
    """The screen never showed what was waited for; the message holds the last screen."""


class _Screen(pyte.Screen):
    """A pyte screen that answers queries through the pty and ignores private modes it does not know."""

    def __init__(self, columns: int, lines: int, reply: Callable[[str], None]) -> None:
        super().__init__(columns, lines)
        self._reply = reply

    def write_process_input(self, data: str) -> None:
        self._reply(data)


class PtyScreen:
    """A child process on a pseudo-terminal of ``columns`` × ``lines``.

    Args:
        argv: The command.
        cwd: Its working directory.
        env: Its whole environment (nothing is inherited).
        columns: Terminal width.
        lines: Terminal height.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        columns: int = 100,
        lines: int = 30,
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
            close_fds=True,
        )
        os.close(slave)
        self.fd = master
        os.set_blocking(master, False)
        self.screen = _Screen(columns, lines, self._reply)
        self.stream = pyte.ByteStream(self.screen)
        self.transcript = bytearray()
        """Every byte the program wrote, for assertions on output that scrolled away."""
        self.last_output_at = self.started
        self.in_update = False
        """True between the start and the end of a synchronized update (a frame being written)."""
        self._tail = b""  # the end of the previous read, for escape sequences split between reads
        self.track_cpu = False
        """When True, every read notes the program's CPU time in `output_cpu`."""
        self.output_cpu: float | None = None
        """The program's CPU time (all threads, seconds) when its latest output was read, before the
        emulator parsed it (with `track_cpu`): the CPU a frame cost, without what the program went on
        doing while the emulator was fed (~1 ms per KB) and a predicate was checked."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _reply(self, data: str) -> None:
        try:
            os.write(self.fd, data.encode())
        except OSError:
            pass

    def text(self) -> str:
        """The screen as text, one line per row (trailing spaces removed)."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    def transcript_text(self) -> str:
        return self.transcript.decode("utf-8", errors="replace")

    def pump(self, timeout: float) -> bool:
        """Feed what the program wrote within ``timeout`` seconds to the emulator; False when nothing came."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return False
        # Read all that is there before feeding the emulator: feeding is slow (~1 ms per KB), and a frame
        # the program wrote at once would otherwise be timed by when its last piece was read after the
        # first ones were fed, not by when it arrived.
        chunks: list[bytes] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            if not chunks:
                self.last_output_at = time.perf_counter()
                if self.track_cpu:
                    self._note_cpu()
            chunks.append(data)
        if chunks:
            data = b"".join(chunks)
            self.transcript += data
            self._track_updates(data)
            self.stream.feed(data)
        return bool(chunks)

    def _note_cpu(self) -> None:
        try:
            self.output_cpu = process_cpu_seconds(self.pid)
        except (OSError, IndexError, ValueError):  # it exited meanwhile: the last figure stands
            pass

    def _track_updates(self, data: bytes) -> None:
        """Answer the synchronized-output query; note whether a synchronized update is still open."""
        # The tail is one byte shorter than the query, so a query is never found twice.
        seen = self._tail + data
        if _SYNC_QUERY in seen:
            self._reply(_SYNC_REPLY)
        start, end = seen.rfind(_SYNC_START), seen.rfind(_SYNC_END)
        if start != end:  # both -1 (neither seen): unchanged
            self.in_update = start > end
        self._tail = seen[-(len(_SYNC_QUERY) - 1) :]

    def _settled(self, check: Callable[[str], bool]) -> bool:
        return not self.in_update and check(self.text())

    def wait_for(self, predicate: Callable[[str], bool] | str, timeout: float = 20.0) -> float:
        """Read output until ``predicate(screen text)`` holds (a string: appears on screen).

        Returns:
            The `time.perf_counter` time at which the output that satisfied it was read.

        Raises:
            ScreenTimeout: It did not hold within ``timeout`` seconds, or the program exited first.
        """
        check = (lambda text: predicate in text) if isinstance(predicate, str) else predicate
        deadline = time.perf_counter() + timeout
        if self._settled(check):
            return self.last_output_at
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise ScreenTimeout(f"timed out waiting; the screen shows:\n{self.text()}")
            if self.pump(min(left, 0.5)):
                if self._settled(check):
                    return self.last_output_at
            elif self.proc.poll() is not None:
                self.pump(0)
                if check(self.text()):
                    return self.last_output_at
                raise ScreenTimeout(
                    f"the program exited ({self.proc.returncode}); the screen shows:\n{self.text()}"
                )

    def drain(self, quiet: float = 0.05, limit: float = 2.0) -> None:
        """Read until the program has been silent for ``quiet`` seconds (at most ``limit`` seconds)."""
        end = time.perf_counter() + limit
        while time.perf_counter() < end and self.pump(quiet):
            pass

    def send(self, data: str | bytes) -> float:
        """Type ``data``; returns the time it was written."""
        raw = data.encode() if isinstance(data, str) else data
        os.write(self.fd, raw)
        return time.perf_counter()

    def wait_exit(self, timeout: float = 10.0) -> int:
        """Wait for the program to exit, reading its output meanwhile; returns the exit code."""
        deadline = time.perf_counter() + timeout
        while self.proc.poll() is None:
            if time.perf_counter() > deadline:
                raise ScreenTimeout(f"the program did not exit; the screen shows:\n{self.text()}")
            self.pump(0.05)
        self.pump(0)
        return self.proc.returncode

    def close(self) -> None:
        """Stop the program (SIGTERM, then SIGKILL) and release the terminal."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=3)
        try:
            os.close(self.fd)
        except OSError:
            pass

    def __enter__(self) -> PtyScreen:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
