"""`TerminalOutput`: writes wait for a terminal that does not read only until the output is cut."""

from __future__ import annotations

import fcntl
import os
import threading
import time

from pi_tui.modes.interactive.terminal_driver import TerminalOutput


def _full_pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    fcntl.fcntl(write_end, 1031, 4096)  # F_SETPIPE_SZ: a small buffer, quickly full
    try:
        while True:
            os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    return read_end, write_end


def test_a_write_to_a_reader_that_stopped_returns_once_the_output_is_cut() -> None:
    read_end, write_end = _full_pipe()
    output = TerminalOutput(write_end, lambda: None)
    done = threading.Event()

    def write() -> None:
        output.write("a frame nobody reads")
        done.set()

    threading.Thread(target=write, daemon=True).start()
    assert not done.wait(0.3)  # the terminal may just be slow: the write waits for it
    cut_at = time.monotonic()
    output.cut()
    assert done.wait(5)
    assert time.monotonic() - cut_at < TerminalOutput.GRACE + 0.5
    assert output.dropped
    output.write("and later writes return at once")
    os.close(read_end)
    output.close()


def test_a_reader_that_reads_after_the_cut_still_gets_everything() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    output = TerminalOutput(write_end, lambda: None)
    output.cut()
    output.write("restore the terminal")
    assert os.read(read_end, 100) == b"restore the terminal"
    assert not output.dropped
    os.close(read_end)
    output.close()


def test_a_terminal_gone_is_reported_once_and_drops_the_rest() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    os.close(read_end)  # writes now fail (EPIPE), as writes to a hung-up terminal fail with EIO
    lost: list[bool] = []
    output = TerminalOutput(write_end, lambda: lost.append(True))
    output.write("one")
    output.write("two")
    assert lost == [True] and output.dropped
    output.close()
