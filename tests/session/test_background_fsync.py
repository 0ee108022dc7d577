"""Durable appends reach the file at once and are fsync'ed off the caller's thread; close waits."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pi_tui.session.store import SessionFile

from .helpers import HeldDisk


def test_a_durable_append_does_not_wait_for_the_disk_but_close_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = SessionFile(tmp_path / "s.jsonl")
    file.create(['{"type":"session"}'])
    disk = HeldDisk(monkeypatch)  # a disk that takes as long as the test says
    release, synced = disk.release, disk.synced
    started = time.monotonic()
    for n in range(20):
        file.append(f'{{"type":"message","n":{n}}}', durable=True)
    assert time.monotonic() - started < 5  # the 20 appends did not wait for the blocked fsync
    assert (tmp_path / "s.jsonl").read_text().count("\n") == 21  # every line is in the file already
    closer = threading.Thread(target=file.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # close waits for the pending fsync
    release.set()
    closer.join(10)
    assert not closer.is_alive()
    assert synced  # the group commit ran (one or a few fsyncs for the 20 lines plus close's own)
    assert len(synced) < 22


def test_sync_returns_once_everything_written_is_durable(tmp_path: Path) -> None:
    file = SessionFile(tmp_path / "s.jsonl")
    file.create(['{"type":"session"}'])
    file.append('{"type":"message"}', durable=True)
    file.sync()
    file.close()
    assert (tmp_path / "s.jsonl").read_text().splitlines() == ['{"type":"session"}', '{"type":"message"}']
