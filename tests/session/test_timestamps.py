from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pi_tui.session import context, entry_reader
from pi_tui.session.listing import read_session_info
from pi_tui.session.paths import parse_iso

# What JavaScript's Date.parse (pi's reading of a timestamp) gives with TZ=America/New_York (node 24):
# a date-time without an offset is local time, a date alone is UTC midnight.
NEW_YORK_MS = {
    "2025-01-01T10:00:00": 1735743600000,
    "2025-01-01T10:00:00.123": 1735743600123,
    "2025-07-01T10:00:00": 1751378400000,  # summer time
    "2025-01-01 10:00:00": 1735743600000,
    "2025-01-01": 1735689600000,
    "2025-01-01T10:00:00Z": 1735725600000,
    "2025-01-01T10:00:00+02:00": 1735718400000,
}


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("text", sorted(NEW_YORK_MS))
def test_every_reader_takes_a_timestamp_as_javascript_does(new_york: None, text: str) -> None:
    parsed = parse_iso(text)
    assert parsed is not None and parsed.tzinfo is not None
    assert int(parsed.timestamp() * 1000) == NEW_YORK_MS[text]
    assert entry_reader.iso_to_ms(text) == NEW_YORK_MS[text]
    assert context.iso_to_ms(text) == NEW_YORK_MS[text]


def test_unreadable_timestamps_are_none_or_zero(new_york: None) -> None:
    for text in ("", "garbage", "2025-13-01T00:00:00"):
        assert parse_iso(text) is None
        assert entry_reader.iso_to_ms(text) == 0 and context.iso_to_ms(text) == 0


def test_a_resume_row_and_the_tree_agree_on_a_naive_header_and_entry(new_york: None, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T10:00:00", "cwd": "/p"}
    info = {
        "type": "session_info",
        "id": "e1",
        "parentId": None,
        "timestamp": "2025-01-01T10:00:00",
        "name": "n",
    }
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, info)))
    row = read_session_info(path)
    assert row is not None
    assert row.created == datetime.fromtimestamp(NEW_YORK_MS["2025-01-01T10:00:00"] / 1000, UTC)
    assert entry_reader.entry_timestamp_ms(info) == NEW_YORK_MS["2025-01-01T10:00:00"]


def test_rows_cached_when_naive_times_were_read_as_utc_are_not_used(new_york: None, tmp_path: Path) -> None:
    from pi_tui.session.listing import list_sessions
    from pi_tui.session.listing_cache import CACHE_NAME, MIN_SIZE

    folder = tmp_path / "sessions"
    folder.mkdir()
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T10:00:00", "cwd": "/p"}
    user = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-01-01T10:00:01",
            "message": {"role": "user", "content": "x" * MIN_SIZE, "timestamp": 1735743601000}}  # fmt: skip
    (folder / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in (header, user)))
    assert list_sessions("/p", folder)[0].created.timestamp() * 1000 == NEW_YORK_MS["2025-01-01T10:00:00"]
    cache = json.loads((folder / CACHE_NAME).read_text())
    cache["version"] = 1  # a cache written before: it read the header as UTC
    cache["rows"]["s.jsonl"]["created"] = 1735725600.0
    (folder / CACHE_NAME).write_text(json.dumps(cache))
    assert list_sessions("/p", folder)[0].created.timestamp() * 1000 == NEW_YORK_MS["2025-01-01T10:00:00"]
