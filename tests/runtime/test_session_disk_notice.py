"""When the disk refuses to confirm the session file's lines, the user gets one notice that says what
happened (saved, but not confirmed; nothing lost while pi-tui runs) and what to do, not 'not saved'."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text
from tests.session.test_fsync_failure import FailingDisk

from .helpers import ANTHROPIC, Events, open_session


async def test_a_failed_fsync_gives_one_notice_that_says_the_entries_are_kept_and_what_to_check(
    fake: FakeLLM, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = FailingDisk(monkeypatch)
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    async with open_session(["--model", ANTHROPIC], project) as session:
        events = Events(session)
        await session.prompt("first")
        assert disk.succeeded.wait(10)
        disk.fail_next(times=1_000)  # from here the disk refuses every fsync
        await session.prompt("second")
        assert disk.failed.wait(10)
        await session.prompt("third")
        notices = [e.message for e in events.of("error")]
        disk.fail_next(times=0)  # the disk recovers: closing writes everything again
        path = session.session_manager.path
    assert len(notices) == 1, notices
    (notice,) = notices
    assert "not saved" not in notice.lower() and "written again" not in notice
    assert notice.startswith("Session file not confirmed by the disk:")
    assert str(path) in notice and "Input/output error" in notice
    assert "kept in memory" in notice and "Check the disk" in notice
    assert path is not None and b"three" in path.read_bytes() and b"\0" not in path.read_bytes()
