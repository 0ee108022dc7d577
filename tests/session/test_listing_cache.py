"""The listing cache: large session files are not read again while unchanged, and only their new
bytes are read after an append; anything else is read in full."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_tui.session import list_sessions
from pi_tui.session.listing import list_recent_sessions, read_session_info
from pi_tui.session.listing_cache import CACHE_NAME, MIN_SIZE

CWD = "/home/me/proj"


def _line(kind: str, n: int, role: str = "user", text: str = "") -> str:
    if kind == "session":
        return json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "s-1",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "cwd": CWD,
            }
        )
    message = {
        "role": role,
        "content": [{"type": "text", "text": text or f"message {n} " + "x" * 300}],
        "timestamp": 1_700_000_000_000 + n,
    }
    return json.dumps(
        {
            "type": "message",
            "id": f"{n:08x}",
            "parentId": f"{n - 1:08x}" if n else None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": message,
        },
        separators=(",", ":"),
    )


def _big_session(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [_line("session", 0)]
    n = 0
    while sum(len(x) for x in lines) < MIN_SIZE * 2:
        lines.append(_line("message", n, "user" if n % 2 == 0 else "assistant"))
        n += 1
    path = directory / "2025-01-01T00-00-00-000Z_s-1.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rewrite_start_keeping_size_and_mtime(path: Path) -> None:
    """Change the first question's text, same size, same mtime: only a reader of the start of the
    file (after the header) can see it."""
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b"message 0 ", b"MESSAGE 0 ", 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_an_unchanged_large_file_is_listed_from_the_cache(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    path = _big_session(directory)
    first = list_sessions(CWD, directory)
    assert (directory / CACHE_NAME).is_file()
    assert first == [read_session_info(path)]
    _rewrite_start_keeping_size_and_mtime(path)
    assert read_session_info(path) != first[0]  # a full read sees the change ...
    assert list_sessions(CWD, directory) == first  # ... the listing did not read the file


def test_an_appended_file_is_read_from_where_the_last_listing_stopped(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    path = _big_session(directory)
    before = list_sessions(CWD, directory)[0]
    _rewrite_start_keeping_size_and_mtime(path)  # invisible unless the start is read again
    with path.open("a") as handle:
        handle.write(_line("message", 10_000, "user", "an appended question") + "\n")
    after = list_sessions(CWD, directory)[0]
    assert after.message_count == before.message_count + 1
    assert after.modified > before.modified and after.size == path.stat().st_size
    full = read_session_info(path)
    assert full is not None and full.first_message.startswith("MESSAGE 0")  # a full read sees the change
    assert after.first_message == before.first_message  # the listing read only the appended line


def test_a_rewritten_file_is_read_in_full(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    path = _big_session(directory)
    list_sessions(CWD, directory)
    lines = path.read_text().splitlines()
    lines[1] = _line("message", 0, "user", "a different first question")
    lines[-1] = _line("message", 999_999, "assistant", "a different last answer")
    path.write_text("\n".join(lines) + "\n" + _line("message", 1_000_000, "assistant") + "\n")
    listed = list_sessions(CWD, directory)
    assert listed == [read_session_info(path)]
    assert listed[0].first_message == "a different first question"


def test_small_files_and_a_broken_cache_are_read_as_before(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    path = _big_session(directory)
    (directory / CACHE_NAME).write_text("{not json")
    assert list_sessions(CWD, directory) == [read_session_info(path)]
    path.unlink()
    assert list_sessions(CWD, directory) == []
    assert json.loads((directory / CACHE_NAME).read_text())["rows"] == {}


def _small_session(directory: Path, name: str, messages: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [_line("session", 0)]
    lines += [_line("message", n, "user" if n % 2 == 0 else "assistant") for n in range(messages)]
    path = directory / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_small_files_are_read_again_only_when_they_changed(tmp_path: Path) -> None:
    """The picker lists again on every open; small files keep their rows in this process."""
    directory = tmp_path / "sessions"
    kept = _small_session(directory, "2025-01-01T00-00-00-000Z_a.jsonl", 2)
    grown = _small_session(directory, "2025-01-02T00-00-00-000Z_b.jsonl", 2)
    first = {info.path: info for info in list_sessions(CWD, directory)}
    _rewrite_start_keeping_size_and_mtime(kept)  # invisible unless the file is read again
    assert read_session_info(kept) != first[kept]
    with grown.open("a") as handle:
        handle.write(_line("message", 2) + "\n")
    second = {info.path: info for info in list_sessions(CWD, directory)}
    assert second[kept] is first[kept]  # not read again
    assert second[grown].message_count == 3 and first[grown].message_count == 2
    assert second[grown] == read_session_info(grown)


def test_the_first_look_leaves_a_large_file_never_listed_to_the_full_listing(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    big = _big_session(directory)
    small = directory / "2025-01-02T00-00-00-000Z_s-2.jsonl"
    small.write_text(_line("session", 0) + "\n" + _line("message", 0, text="a small one") + "\n")
    os.utime(big, (1_700_000_000, 1_700_000_000))
    assert [i.path for i in list_recent_sessions(CWD, directory)] == [small]  # not scanned: no row yet
    full = list_sessions(CWD, directory)  # lists and keeps the large file's row
    assert {i.path for i in full} == {big, small}
    assert sorted(list_recent_sessions(CWD, directory), key=lambda i: str(i.path)) == sorted(
        full, key=lambda i: str(i.path)
    )
    assert [i.path for i in list_recent_sessions(CWD, directory, count=1)] == [small]  # modified last
