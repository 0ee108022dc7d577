"""Textual's Linux driver, made to let go of a terminal that stops reading or goes away.

Textual writes the screen from a thread fed by a bounded queue (30 writes). When the terminal stops
reading (a stalled SSH link, a pane nobody drains), that thread blocks in ``write``, the queue fills, and
the app's own thread then blocks putting the next write: the event loop stops, so neither a signal handler
nor a quit can run. If the terminal then goes away, the writer thread dies on EIO and nothing empties the
queue again: the process hangs until SIGKILL.

`GuardedDriver` gives Textual's writer thread a `TerminalOutput` to write to: the terminal through a
descriptor of its own, non-blocking, written in short waits. Once the output is *cut* (a terminating
signal, the terminal gone) writes wait for the terminal a moment at most (a live one still gets the
sequences that restore it) and then return at once, so the queue drains and the app's thread goes on
whatever the terminal does. The driver also notices the terminal going away — a hang-up seen on input
(POLLHUP, which comes with the EOF reads of a closed terminal), EIO on input or output — and tells the app
through `GuardedDriver.on_lost` instead of letting Textual's input thread crash.

The two Textual internals this relies on are here and nowhere else, each tested in
``tests/modes/interactive/test_textual_internals.py`` (those tests fail if Textual changes them):
the writer thread writes to the driver's ``_file``, and the key parser looks escape sequences up in
``textual._ansi_sequences.ANSI_SEQUENCES_KEYS`` (see `register_alt_enter`). A third: the Linux driver's
input loop builds its parser from the name ``XTermParser`` in its own module, which `install_input_filter`
points at a parser that reads the input through `InputFilter` (pastes holding escape characters, xterm's
modifyOtherKeys keys; see `input_filter`).
"""

from __future__ import annotations

import os
import select
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message as TextualMessage

from .input_filter import InputFilter
from .terminal_theme import SCHEME_NOTIFY_OFF, SCHEME_NOTIFY_ON, Appearance

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message

__all__ = [
    "GuardedDriver",
    "TerminalBackground",
    "TerminalColorScheme",
    "TerminalOutput",
    "install_input_filter",
    "register_alt_enter",
]

MODIFY_OTHER_KEYS_ON = "\x1b[>4;1m"
"""xterm's modifyOtherKeys, mode 1: Shift+Enter, Ctrl+Enter and the like arrive as keys of their own
in terminals without the kitty keyboard protocol Textual asks for: xterm, and tmux with ``extended-keys
on``, which sends them only to an app that asks (pi asks too when the terminal has no kitty protocol)."""
MODIFY_OTHER_KEYS_OFF = "\x1b[>4;0m"

RESTORE_SEQUENCE = (
    SCHEME_NOTIFY_OFF
    + MODIFY_OTHER_KEYS_OFF
    + "\x1b[<u\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?2004l\x1b[?1004l\x1b[?7h\x1b[?1049l\x1b[?25h"
)
"""What leaving the app writes to the terminal: colour-scheme reports, keyboard protocol and mouse off, line wrap on, main screen,
cursor shown (used when the app must exit without Textual's own shutdown)."""


class TerminalOutput:
    """A file for Textual's writer thread: the terminal through its own non-blocking descriptor.

    Args:
        fd: A descriptor of the terminal opened for this object (closed by `close`).
        on_lost: Called (once, from the writer thread) when a write fails: the terminal is gone.
    """

    WAIT = 0.05
    """Seconds a write waits for the terminal before it checks whether the output was cut."""
    GRACE = 0.25
    """After `cut`, how long writes may still wait for a terminal that reads slowly (so a live terminal
    still gets the sequences that restore it); after that, what it has not taken is dropped."""

    def __init__(self, fd: int, on_lost: Callable[[], None]) -> None:
        self._fd = fd
        self._on_lost = on_lost
        self._drop_after: float | None = None  # a plain float: a signal handler may set it
        self.dropped = False
        """True once output was dropped: the terminal stopped reading or went away."""
        self._gone = False

    @classmethod
    def open_for(cls, fileno: int, on_lost: Callable[[], None]) -> TerminalOutput | None:
        """Open the terminal behind ``fileno`` again, non-blocking; None when it is not a terminal.

        A descriptor of its own: making the inherited one non-blocking would change it for the shell too.
        """
        try:
            name = os.ttyname(fileno)
            fd = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError:
            return None
        return cls(fd, on_lost)

    def cut(self, grace: float = GRACE) -> None:
        """From ``grace`` seconds on, drop what the terminal does not take at once (signal-safe)."""
        limit = time.monotonic() + grace
        if self._drop_after is None or limit < self._drop_after:
            self._drop_after = limit

    def _out_of_time(self) -> bool:
        limit = self._drop_after
        if limit is not None and time.monotonic() >= limit:
            self.dropped = True
            return True
        return False

    def write(self, text: str) -> int:
        if self._gone:
            return len(text)
        data = memoryview(text.encode("utf-8", "backslashreplace"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:  # the terminal is not reading: wait a little, unless cut
                if self._out_of_time():
                    break
                select.select([], [self._fd], [], self.WAIT)
                continue
            except OSError:  # EIO: the terminal is gone
                self._gone = self.dropped = True
                self._on_lost()
                break
            data = data[written:]
        return len(text)

    def write_now(self, text: str) -> None:
        """One attempt, never waiting (for the last words of an emergency exit)."""
        try:
            os.write(self._fd, text.encode("utf-8"))
        except OSError:
            pass

    def flush(self) -> None:
        """Nothing is buffered here."""

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return True

    def close(self) -> None:
        """Close the descriptor (the driver keeps it for the whole run: a suspend's resume reuses it)."""
        try:
            os.close(self._fd)
        except OSError:
            pass


class GuardedDriver(LinuxDriver):
    """`LinuxDriver` whose output can be cut and which reports a lost terminal (see the module doc)."""

    def __init__(
        self, app: App[Any], *, debug: bool = False, mouse: bool = True, size: tuple[int, int] | None = None
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._lost_reported = False
        self.on_lost: Callable[[], None] | None = None
        """Called once, from a driver thread, when the terminal goes away (the app saves and exits)."""
        self._stop_watch: int | None = None  # write end of the pipe that ends the hang-up watcher
        stream = sys.__stderr__
        self.output = TerminalOutput.open_for(stream.fileno(), self._report_lost) if stream else None
        if self.output is not None:
            # Textual internal: LinuxDriver.start_application_mode builds its WriterThread on `self._file`
            # (sys.__stderr__ by default). Pointing it at our file is the only change to Textual's driver.
            self._file = self.output  # type: ignore[assignment]  # duck-typed: write, flush, fileno

    def cut_output(self) -> None:
        """The app is leaving and the terminal may never read again: stop waiting for it (signal-safe)."""
        if self.output is not None:
            self.output.cut()

    @property
    def output_dropped(self) -> bool:
        """True once output was dropped (the terminal stopped reading or went away)."""
        return self.output is not None and self.output.dropped

    def restore_terminal_now(self) -> None:
        """Best effort, never blocking: the terminal's modes as they were before the app started."""
        if self.attrs_before is not None:
            try:
                termios.tcsetattr(self.fileno, termios.TCSANOW, self.attrs_before)
            except (termios.error, OSError):
                pass
        if self.output is not None:
            self.output.write_now(RESTORE_SEQUENCE)

    def _report_lost(self) -> None:
        if self._lost_reported:
            return
        self._lost_reported = True
        if self.output is not None:
            self.output.cut(0)
        if self.on_lost is not None:
            self.on_lost()

    def start_application_mode(self) -> None:
        super().start_application_mode()
        from .early_keys import original_attributes

        held = original_attributes()
        if held is not None:  # Textual saved the held state: exit and suspend restore the real one
            self.attrs_before = held
        self.write(MODIFY_OTHER_KEYS_ON)  # the keys come back in a form `InputFilter` reads
        if self.follow_color_scheme:  # back from a suspend
            self.write(SCHEME_NOTIFY_ON)
        self.flush()
        stop_r, self._stop_watch = os.pipe()
        threading.Thread(target=self._watch_hangup, args=(stop_r,), name="pi-tui-hangup", daemon=True).start()

    def _watch_hangup(self, stop_r: int) -> None:
        """Wait for the terminal's hang-up (a closed window, a dropped SSH link); costs no wake-ups."""
        poller = select.poll()
        poller.register(self.fileno, 0)  # no events asked: POLLHUP and POLLERR are always reported
        poller.register(stop_r, select.POLLIN)
        try:
            for fd, _mask in poller.poll():
                if fd == self.fileno:
                    self._report_lost()
        except (OSError, ValueError):
            pass
        finally:
            os.close(stop_r)

    def run_input_thread(self) -> None:
        """Textual's input loop; an error reading the terminal (EIO) means it is gone, not a crash."""
        try:
            super().run_input_thread()
        except OSError:
            self._report_lost()

    follow_color_scheme = False
    """Set by the app for an automatic theme: the terminal reports each change of its colour scheme
    (turned on again when the app comes back from a suspend, off whenever it leaves the screen)."""

    def follow_scheme(self) -> None:
        """Turn on the terminal's colour-scheme change reports (mode 2031) for as long as the app runs."""
        if not self.follow_color_scheme:
            self.follow_color_scheme = True
            self.write(SCHEME_NOTIFY_ON)
            self.flush()

    def stop_application_mode(self) -> None:
        if self.follow_color_scheme:
            self.write(SCHEME_NOTIFY_OFF)
        self.write(MODIFY_OTHER_KEYS_OFF)  # before Textual's own restore, which flushes
        super().stop_application_mode()

    def close(self) -> None:
        """Stop the writer thread and the hang-up watcher (also on suspend: a resume starts them again).
        The output's descriptor stays open for the resume; the process's exit closes it."""
        super().close()
        stop, self._stop_watch = self._stop_watch, None
        if stop is not None:
            try:
                os.write(stop, b"x")
            except OSError:
                pass
            os.close(stop)


def register_alt_enter() -> None:
    """Make ESC CR (what xterm, tmux and most terminals send for Alt+Enter) the key ``alt+enter``.

    Textual's parser has no entry for it: it waits out the escape delay and then reports a plain
    ``enter``, so Alt+Enter sent a steering message instead of queueing a follow-up. With the kitty
    keyboard protocol (or tmux's extended keys in csi-u format) the terminal sends ``CSI 13;3u``, which
    Textual already reads as ``alt+enter``.
    """
    # Textual internal: the parser looks complete escape sequences up in this mapping (sequence →
    # tuple of keys, each with a ``.value`` naming the key). An entry for ESC CR is all it takes.
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    table: Any = ANSI_SEQUENCES_KEYS
    table.setdefault("\x1b\r", (_AltEnter(),))


class _AltEnter(str):
    """Stands in for a `textual.keys.Keys` member (which has no Alt+Enter): a str with ``value``."""

    def __new__(cls) -> _AltEnter:
        return super().__new__(cls, "alt+enter")

    @property
    def value(self) -> str:
        return "alt+enter"


def install_input_filter() -> None:
    """Make the Linux driver read its input through `InputFilter` (see `pi_tui.modes.interactive.input_filter`).

    Textual internal: ``LinuxDriver.run_input_thread`` creates ``XTermParser(debug)`` by its module-level
    name; the subclass put there filters each chunk before Textual's own parsing. Idempotent.
    """
    from textual.drivers import linux_driver

    if not issubclass(linux_driver.XTermParser, _FilteredParser):
        linux_driver.XTermParser = _FilteredParser  # type: ignore[misc]


class TerminalBackground(TextualMessage):
    """The terminal answered the background-colour query (OSC 11) with this colour (0-255 each)."""

    def __init__(self, rgb: tuple[int, int, int]) -> None:
        super().__init__()
        self.rgb = rgb


class TerminalColorScheme(TextualMessage):
    """The terminal reported its colour scheme (asked, or because the system switched)."""

    def __init__(self, appearance: Appearance) -> None:
        super().__init__()
        self.appearance = appearance


class _FilteredParser(XTermParser):
    """Textual's key parser, fed through an `InputFilter`; the terminal's background answers it took out
    of the keys become `TerminalBackground` messages."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self.input_filter = InputFilter()

    def feed(self, data: str) -> Iterable[Message]:
        if not data:
            return super().feed(data)  # the end of input
        filtered = self.input_filter.feed(data)
        answers, schemes = self.input_filter.backgrounds, self.input_filter.schemes
        if answers or schemes:
            self.input_filter.backgrounds, self.input_filter.schemes = [], []
            found: list[Message] = [TerminalBackground(rgb) for rgb in answers]
            found += [TerminalColorScheme(appearance) for appearance in schemes]
            return [*found, *(super().feed(filtered) if filtered else ())]
        # Only held-back or dropped characters: nothing to parse yet (an empty feed means the end).
        return super().feed(filtered) if filtered else ()
