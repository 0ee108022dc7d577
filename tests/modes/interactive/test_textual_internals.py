"""The Textual internals `pi_tui.modes.interactive.terminal_driver` relies on: these fail if Textual
changes them (then adapt that module, the only place that touches them)."""

from __future__ import annotations

import inspect
import os

from textual import events
from textual._xterm_parser import XTermParser
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver

from pi_tui.modes.interactive.terminal_driver import TerminalOutput, register_alt_enter


def test_the_linux_driver_writes_the_screen_through_its_file_attribute() -> None:
    # GuardedDriver replaces `_file`; LinuxDriver must hand exactly that to its writer thread.
    assert "self._file = sys.__stderr__" in inspect.getsource(LinuxDriver.__init__)
    assert "WriterThread(self._file)" in inspect.getsource(LinuxDriver.start_application_mode)


def test_the_writer_thread_uses_only_write_and_flush_of_its_file() -> None:
    read_end, write_end = os.pipe()
    lost: list[bool] = []
    output = TerminalOutput(write_end, lambda: lost.append(True))
    writer = WriterThread(output)  # type: ignore[arg-type]  # the duck-typed file, as GuardedDriver gives it
    writer.start()
    writer.write("frame one ")
    writer.write("frame two")
    writer.stop()
    output.close()
    assert os.read(read_end, 100) == b"frame one frame two"
    os.close(read_end)
    assert lost == []


def test_esc_cr_is_alt_enter_and_cr_stays_enter() -> None:
    register_alt_enter()
    parser = XTermParser()
    keys = [token.key for token in parser.feed("\x1b\r") if isinstance(token, events.Key)]
    keys += [token.key for token in parser.feed("\r") if isinstance(token, events.Key)]
    assert keys == ["alt+enter", "enter"]
