"""A session fsync that fails loses no entry: the lines it should have made durable are written again from
memory, the user is told once, and the file ends up whole.

The disk here is a model of what Linux does when writeback fails: ``fsync`` reports the error once, the
pages it could not write are no longer dirty (a later fsync reports success without writing them), and
once they leave the page cache reading gives what the disk holds (zeros where the lines were). It is
installed at ``os.fsync``, the seam the session store calls; the file itself is a real file.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_tui.session import SessionError, SessionManager, store
from pi_tui.session.store import SessionFile

from .helpers import assistant, read_lines, user


class FailingDisk:
    """``os.fsync`` for regular files with a per-file durable size; `fail_next` makes the next one fail."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._real = os.fsync
        self._durable: dict[int, int] = {}
        self._lock = threading.Lock()
        self.failures_left = 0
        self.failed = threading.Event()
        self.succeeded = threading.Event()
        self.before_failing: Callable[[], None] | None = None  # runs inside a failing fsync, once
        monkeypatch.setattr(os, "fsync", self._fsync)

    def fail_next(self, times: int = 1) -> None:
        self.failed.clear()
        self.failures_left = times

    def _fsync(self, fd: int) -> None:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            self._real(fd)
            return
        with self._lock:
            durable = self._durable.get(info.st_ino, 0)
            if self.failures_left:
                self.failures_left -= 1
                if self.before_failing is not None:
                    run, self.before_failing = self.before_failing, None
                    run()
                    info = os.fstat(fd)
                # The unwritten pages are dropped: what was written since the last good fsync reads as zeros.
                lost = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY)
                try:
                    os.pwrite(lost, b"\0" * (info.st_size - durable), durable)
                finally:
                    os.close(lost)
                self.failed.set()
                raise OSError(errno.EIO, "Input/output error")
            self._real(fd)
            self._durable[info.st_ino] = info.st_size
            self.succeeded.set()


def _texts(manager: SessionManager) -> list[str]:
    return [m.content[0].text for m in manager.build_context().messages]


def test_entries_whose_fsync_failed_are_written_again_and_the_user_is_told_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = FailingDisk(monkeypatch)
    manager = SessionManager.create("/p", session_dir=tmp_path)
    manager.append_message(user("q1"))
    manager.append_message(assistant("a1"))  # the file is created here and fsync'ed in the background
    assert disk.succeeded.wait(10)
    path = manager.path
    assert path is not None

    disk.fail_next()
    manager.append_message(user("q2"))
    assert disk.failed.wait(10)  # the background fsync of q2 failed: q2's bytes are gone from the disk

    with pytest.raises(SessionError) as told:
        manager.append_message(assistant("a2"))
    message = str(told.value)
    assert str(path) in message and "Input/output error" in message and "kept in memory" in message
    assert _texts(manager) == ["q1", "a1", "q2", "a2"]  # nothing left the conversation

    manager.append_message(user("q3"))  # told once: the next entry is saved without another error
    manager.close()

    data = path.read_bytes()
    assert b"\0" not in data
    lines = read_lines(path)
    assert [line["message"]["content"][0]["text"] for line in lines[1:]] == ["q1", "a1", "q2", "a2", "q3"]


def test_a_failure_that_lasts_is_told_once_and_close_says_what_may_not_be_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    disk = FailingDisk(monkeypatch)
    file = SessionFile(tmp_path / "s.jsonl")
    file.create(['{"type":"session"}'])
    file.sync()
    disk.fail_next(times=1_000)
    file.append('{"n":1}', durable=True)
    assert disk.failed.wait(10)
    error = file.take_sync_error()
    assert error is not None and error.errno == errno.EIO
    file.append('{"n":2}', durable=True)  # writes n=1 again first
    assert file.take_sync_error() is None  # the same failure, not told again
    with caplog.at_level(logging.WARNING, logger="pi_tui.session.store"):
        file.close()
    assert any("may not be on disk" in r.getMessage() for r in caplog.records)


def test_sync_raises_when_the_disk_does_not_take_the_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = FailingDisk(monkeypatch)
    file = SessionFile(tmp_path / "s.jsonl")
    file.create(['{"type":"session"}'])
    file.sync()
    disk.fail_next(times=2)  # the background fsync and sync's retry of the same lines
    file.append('{"n":1}', durable=True)
    assert disk.failed.wait(10)
    with pytest.raises(OSError, match="Input/output error"):
        file.sync()
    file.sync()  # the disk works again: the lines are written again and made durable
    file.close()
    assert (tmp_path / "s.jsonl").read_bytes() == b'{"type":"session"}\n{"n":1}\n'


def test_a_line_written_while_a_failing_fsync_runs_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background fsync takes the lines to cover, then fsyncs; a line appended in between is on the
    pages that fsync fails to write too. It was kept only for the next fsync, which succeeded without it:
    zeros in the file where it was (a session test saw its last answer lost this way, under load)."""
    disk = FailingDisk(monkeypatch)
    file = SessionFile(tmp_path / "s.jsonl")
    file.create(['{"type":"session"}'])
    file.sync()
    disk.before_failing = lambda: file.append('{"n":2}', durable=False)
    disk.fail_next()
    file.append('{"n":1}', durable=True)
    assert disk.failed.wait(10)
    file.close()
    assert (tmp_path / "s.jsonl").read_bytes() == b'{"type":"session"}\n{"n":1}\n{"n":2}\n'


def test_a_line_written_just_before_a_failing_fsync_ends_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer notes a line for the next fsync just after writing it. When the background fsync failed
    in between, the line was on the pages it dropped but was noted as new, and the next fsync, which
    succeeded, passed it as durable: zeros in the file."""
    disk = FailingDisk(monkeypatch)
    file = SessionFile(tmp_path / "s.jsonl")
    file.create(['{"type":"session"}'])
    file.sync()
    written, handled = threading.Event(), threading.Event()

    class FailureLogged(logging.Handler):  # the store logs a failed fsync once it has booked it
        def emit(self, record: logging.LogRecord) -> None:
            handled.set()

    watcher = FailureLogged()
    logging.getLogger("pi_tui.session.store").addHandler(watcher)
    real_write_all = store.write_all

    def write_then_let_the_fsync_fail(fd: int, data: bytes) -> None:
        real_write_all(fd, data)
        written.set()
        assert handled.wait(10)  # returns (and the line is noted) only after the failure was booked

    def once_n2_is_written() -> None:
        assert written.wait(10)

    try:
        disk.before_failing = once_n2_is_written
        disk.fail_next()
        file.append('{"n":1}', durable=True)  # its background fsync fails once n=2 is written
        monkeypatch.setattr(store, "write_all", write_then_let_the_fsync_fail)
        file.append('{"n":2}', durable=False)
        monkeypatch.setattr(store, "write_all", real_write_all)
        file.close()
    finally:
        logging.getLogger("pi_tui.session.store").removeHandler(watcher)
    assert (tmp_path / "s.jsonl").read_bytes() == b'{"type":"session"}\n{"n":1}\n{"n":2}\n'
