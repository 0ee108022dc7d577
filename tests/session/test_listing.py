from __future__ import annotations

import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import pi_tui.session.listing as listing
from pi_tui.session import (
    AmbiguousSessionError,
    SessionManager,
    SessionNotFoundError,
    default_session_dir,
    find_session,
    list_all_sessions,
    list_sessions,
    most_recent_session,
)

from .helpers import BEFORE_COMPACTION, LARGE, assistant, user

CWD = "/home/me/proj"


def _make(
    cwd: str = CWD,
    *,
    texts: tuple[str, ...] = ("hello there",),
    base_ts: int = 1_700_000_000_000,
    name: str | None = None,
    session_id: str | None = None,
) -> SessionManager:
    manager = SessionManager.create(cwd, session_id=session_id)
    for i, text in enumerate(texts):
        manager.append_message(user(text, ts=base_ts + i * 1000))
        manager.append_message(assistant(f"re: {text}", ts=base_ts + i * 1000 + 500))
    if name:
        manager.append_session_info(name)
    manager.close()
    return manager


def test_listing_reports_header_name_first_message_counts_and_modified() -> None:
    older = _make(texts=("first task", "second"), base_ts=1_700_000_000_000, name="Refactor")
    newer = _make(texts=("newer task",), base_ts=1_800_000_000_000)
    assert older.path is not None and newer.path is not None
    os.utime(older.path, (2_000_000_000, 2_000_000_000))  # mtime in the future must not win

    rows = list_sessions(CWD)
    assert [r.path for r in rows] == [newer.path, older.path]
    row = rows[1]
    assert (row.id, row.cwd, row.name, row.parent_session_path) == (older.id, CWD, "Refactor", None)
    assert row.message_count == 4
    assert row.first_message == "first task"
    assert row.modified == datetime.fromtimestamp((1_700_000_001_500) / 1000, UTC)
    assert row.created == datetime.fromisoformat(older.header.timestamp.replace("Z", "+00:00"))
    assert row.size == older.path.stat().st_size and row.mtime == 2_000_000_000


def test_listing_a_session_without_messages(tmp_path: Path) -> None:
    manager = SessionManager.open(tmp_path / "s.jsonl", cwd=CWD)
    manager.append_custom("x")  # buffered until the assistant message below
    manager.append_message(assistant("only assistant"))
    manager.close()
    row = list_sessions(CWD, session_dir=tmp_path)[0]
    assert row.first_message == "(no messages)"
    assert row.message_count == 1


def test_listing_pi_v1_files_reads_them_without_migrating(tmp_path: Path) -> None:
    if not LARGE.exists():
        pytest.skip("pi fixtures not available")
    shutil.copy(LARGE, tmp_path / LARGE.name)
    shutil.copy(BEFORE_COMPACTION, tmp_path / BEFORE_COMPACTION.name)
    rows = {r.path.name: r for r in list_sessions("/x", session_dir=tmp_path)}
    large = rows[LARGE.name]
    assert large.message_count == 914
    assert large.first_message == "/mode"
    assert large.cwd == "/Users/badlogic/workspaces/pi-mono"
    last_ts = max(
        json.loads(line)["message"]["timestamp"]
        for line in LARGE.read_text(encoding="utf-8").splitlines()
        if '"role":"user"' in line[:200] or '"role":"assistant"' in line[:200]
    )
    assert large.modified == datetime.fromtimestamp(last_ts / 1000, UTC)
    assert rows[BEFORE_COMPACTION.name].message_count == 990
    assert LARGE.read_bytes() == (tmp_path / LARGE.name).read_bytes()  # untouched


def test_listing_skips_what_is_not_a_session(tmp_path: Path) -> None:
    good = SessionManager.create(CWD, session_dir=tmp_path)
    good.append_message(assistant("a"))
    good.close()
    (tmp_path / "notes.jsonl").write_text('{"type":"message"}\n', encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "x.jsonl.v1.bak").write_text('{"type":"session","id":"bak"}\n', encoding="utf-8")
    assert [r.id for r in list_sessions(CWD, session_dir=tmp_path)] == [good.id]


def test_listing_decodes_only_the_lines_it_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manager = SessionManager.create(CWD, session_dir=tmp_path)
    big = "x" * 50_000
    manager.append_message(user("the first prompt"))
    for i in range(60):
        manager.append_message(assistant(f"{i} {big}"))
        manager.append_message(user(f"next {i}"))
    manager.append_session_info("named")
    manager.close()

    decoded: list[int] = []
    real_decode = listing._decode

    def counting_decode(data: bytes) -> Any:
        decoded.append(len(data))
        return real_decode(data)

    monkeypatch.setattr(listing, "_decode", counting_decode)
    row = list_sessions(CWD, session_dir=tmp_path)[0]
    assert (row.message_count, row.first_message, row.name) == (121, "the first prompt", "named")
    # the header, the first user message, the session_info line and the last user message
    assert len(decoded) == 4
    assert max(decoded) < 1000  # no 50 KB assistant body was decoded


def test_list_all_sessions_covers_every_project() -> None:
    a = _make("/proj/a", base_ts=1_700_000_000_000)
    b = _make("/proj/b", base_ts=1_800_000_000_000)
    assert [r.id for r in list_all_sessions()] == [b.id, a.id]
    assert [r.id for r in list_sessions("/proj/a")] == [a.id]


def _fake_body(messages: int) -> str:
    """Entry lines shared by every fake session (listing does not care that ids repeat across files)."""
    lines = []
    parent = None
    for j in range(messages):
        role = "user" if j % 2 == 0 else "assistant"
        entry = {
            "type": "message",
            "id": f"{j:08x}",
            "parentId": parent,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {
                "role": role,
                "content": [{"type": "text", "text": f"message {j} " + "y" * 400}],
                "timestamp": 1_735_689_600_000 + j,
            },
        }
        lines.append(json.dumps(entry, separators=(",", ":")))
        parent = entry["id"]
    return "\n".join(lines) + "\n"


def _write_fake_session(directory: Path, index: int, body: str) -> None:
    sid = f"{index:08d}-0000-4000-8000-000000000000"
    header = {
        "type": "session",
        "version": 3,
        "id": sid,
        "timestamp": f"2025-01-01T00:{index // 60 % 60:02d}:{index % 60:02d}.000Z",
        "cwd": CWD,
    }
    (directory / f"2025-01-01T00-00-00-000Z_{sid}.jsonl").write_text(
        json.dumps(header) + "\n" + body, encoding="utf-8"
    )


def test_listing_1000_sessions_is_fast(tmp_path: Path) -> None:
    body = _fake_body(20)
    for i in range(10):
        _write_fake_session(tmp_path, i, body)
    # Creating 1000 files costs more than listing them on some disks: the rest are hard links.
    originals = sorted(tmp_path.iterdir())
    for i in range(10, 1000):
        os.link(originals[i % 10], tmp_path / f"2025-01-01T00-00-00-000Z_{i:08d}-link.jsonl")
    # CPU time, not wall time: on a loaded machine the wall clock also counts the time other processes
    # had the core (0.45 s of wall for 0.06 s of CPU at a load of 9 on 2 cores).
    start = time.process_time()
    rows = list_sessions(CWD, session_dir=tmp_path)
    elapsed = time.process_time() - start
    assert len(rows) == 1000
    assert {r.message_count for r in rows} == {20}
    assert {r.first_message[:9] for r in rows} == {"message 0"}
    # about 0.06 s of CPU here; the bound only catches a listing that parses whole files
    assert elapsed < 1.0


def test_most_recent_session_uses_mtime_and_ignores_invalid_files() -> None:
    a = _make(base_ts=1_800_000_000_000)
    b = _make(base_ts=1_700_000_000_000)
    assert a.path is not None and b.path is not None
    os.utime(a.path, (1_000, 1_000))
    os.utime(b.path, (2_000, 2_000))
    assert most_recent_session(CWD) == b.path
    broken = b.path.with_name("2099-01-01T00-00-00-000Z_ffffffff-0000-4000-8000-000000000000.jsonl")
    broken.write_text("not json\n", encoding="utf-8")
    assert most_recent_session(CWD) == b.path
    assert most_recent_session("/nowhere") is None


def test_continue_recent_opens_the_latest_or_creates(tmp_path: Path) -> None:
    fresh = SessionManager.continue_recent(CWD)
    assert fresh.get_entries() == [] and fresh.path is not None and not fresh.path.exists()
    made = _make()
    with SessionManager.continue_recent(CWD) as resumed:
        assert resumed.id == made.id
        assert len(resumed.build_context().messages) == 2


def test_find_session_by_path_and_by_id_prefix() -> None:
    here = _make(session_id="abc12345-0000-4000-8000-000000000001")
    there = _make("/other", session_id="abd99999-0000-4000-8000-000000000002")
    assert here.path is not None and there.path is not None
    assert find_session(str(here.path), CWD) == here.path
    assert find_session("abc1", CWD) == here.path
    assert find_session(here.path.name, CWD) == here.path  # a bare file name from this project
    assert find_session("ABD9", CWD) == there.path  # found in another project
    with pytest.raises(AmbiguousSessionError, match="Session id 'ab' matches 2 sessions"):
        _make(session_id="ab000000-0000-4000-8000-000000000003")
        find_session("ab", CWD)
    with pytest.raises(SessionNotFoundError, match="No session with an id starting with 'zzz'"):
        find_session("zzz", CWD)
    with pytest.raises(SessionNotFoundError, match="No session file at"):
        find_session("./missing.jsonl", CWD)
    assert default_session_dir(CWD) == here.path.parent


def test_a_new_session_after_another_folders_session_is_filed_under_its_own_folder(tmp_path: Path) -> None:
    theirs = SessionManager.create("/work/other")
    assert theirs.session_dir_for("/home/me/proj") == default_session_dir("/home/me/proj")
    assert theirs.session_dir_for("/work/other") == default_session_dir("/work/other")
    custom = SessionManager.create("/work/other", session_dir=tmp_path / "mine")
    assert custom.session_dir_for("/home/me/proj") == tmp_path / "mine"
    opened = SessionManager.open(tmp_path / "loose" / "s.jsonl", cwd="/work/other", read_only=True)
    assert opened.session_dir_for("/home/me/proj") == tmp_path / "loose"
    assert SessionManager.in_memory("/work/other").session_dir_for("/home/me/proj") is None
