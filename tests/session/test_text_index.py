"""The folders' text index: what the session search reads of each conversation, kept between runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_tui.session.listing import list_sessions
from pi_tui.session.search import search_sessions
from pi_tui.session.text_index import INDEX_NAME, TextIndex, index_texts, read_text

HEADER = {"type": "session", "version": 3, "id": "big-0001", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/p"}


def _message(n: int, role: str, content: object, **extra: object) -> str:
    message = {"role": role, "content": content, "timestamp": 1_735_689_600_000 + n, **extra}
    entry = {"type": "message", "id": f"e{n:06d}", "parentId": None, "timestamp": "2025-01-01T00:00:00Z"}
    entry["message"] = message
    return json.dumps(entry, separators=(",", ":"))


def _turn(n: int) -> list[str]:
    """A user prompt, an assistant answer with thinking and a tool call, and the tool's (long) result."""
    return [
        _message(3 * n, "user", f"turn {n}: look at the widget"),
        _message(
            3 * n + 1,
            "assistant",
            [
                {"type": "thinking", "thinking": f"pondering step {n}"},
                {"type": "text", "text": f"Reading   file {n}"},
                {"type": "toolCall", "id": f"t{n}", "name": "read", "arguments": {"path": f"f{n}.py"}},
            ],
        ),
        _message(3 * n + 2, "toolResult", [{"type": "text", "text": "x = 1\n" * 60}], toolCallId=f"t{n}"),
    ]


def _write(path: Path, lines: list[str], header: dict[str, object] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([json.dumps(header or HEADER), *lines]) + "\n")
    return path


def _big(path: Path, turns: int = 3_000, deep: str = "") -> Path:
    """A session of several megabytes; ``deep``, when given, is an answer in its middle."""
    lines = [line for n in range(turns) for line in _turn(n)]
    if deep:
        lines.insert(len(lines) // 2, _message(10**7, "assistant", [{"type": "text", "text": deep}]))
    return _write(path, lines)


def _append(path: Path, *lines: str) -> None:
    with path.open("a") as handle:
        handle.write("".join(line + "\n" for line in lines))


def _rows(folder: Path) -> dict[str, dict[str, object]]:
    """The index's rows by file name (its first line is its version)."""
    lines = (folder / INDEX_NAME).read_text().splitlines()
    assert json.loads(lines[0]) == {"version": 1}
    return {row["name"]: row for row in map(json.loads, lines[1:])}


def _keep_text(folder: Path, name: str, text: str) -> None:
    """Change the text the index keeps for ``name``."""
    rows = _rows(folder)
    rows[name]["text"] = text
    lines = [json.dumps({"version": 1}), *map(json.dumps, rows.values())]
    (folder / INDEX_NAME).write_text("\n".join(lines) + "\n")


def _texts(paths: list[Path]) -> dict[Path, str]:
    found: dict[Path, str] = {}
    assert index_texts(paths, lambda texts, _done: found.update(texts))
    return found


def test_text_deep_inside_a_big_session_is_found_and_only_what_pi_searches(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    big = _big(folder / "big.jsonl", deep="The flux capacitor needs 1.21 gigawatts")
    small = _write(folder / "small.jsonl", [_message(1, "user", "hello there")], {**HEADER, "id": "small-02"})
    assert big.stat().st_size > 2 << 20
    infos = list_sessions("/p", folder)
    assert "flux" not in infos[0].first_message + infos[1].first_message
    assert search_sessions(infos, '"flux capacitor"') == []  # the listing alone does not know it

    texts = _texts([i.path for i in infos])
    assert "the flux capacitor needs 1.21 gigawatts" in texts[big]
    assert "reading file 2999" in texts[big]  # whitespace runs are one space, lower-case
    assert texts[small] == "hello there"
    assert [i.path for i in search_sessions(infos, '"flux capacitor"', texts=texts)] == [big]
    assert [i.path for i in search_sessions(infos, "re:GIGA\\w+", texts=texts)] == [big]
    assert [i.path for i in search_sessions(infos, "capacitor gigawatts", texts=texts)] == [big]
    # pi searches user and assistant text only: not thinking, tool calls or tool results
    for absent in ('"pondering step"', '"x = 1"', '"f12.py"'):
        assert search_sessions(infos, absent, texts=texts) == []
    # and the id, name and cwd besides the conversation
    assert [i.path for i in search_sessions(infos, '"small-02 hello"', texts=texts)] == [small]
    assert {i.path for i in search_sessions(infos, '"reading file 2999 /p"', texts=texts)} == {big}
    assert (folder / INDEX_NAME).is_file()
    assert [i.path for i in list_sessions("/p", folder)] == [i.path for i in infos]  # not listed itself
    assert read_text(big) == texts[big]


def test_an_appended_entry_is_read_without_reading_the_file_again(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = _big(folder / "s.jsonl", turns=200)
    _texts([path])
    # What the index kept stands for the bytes it read: change it, and a read of only the appended
    # part keeps the change, where a full read would not.
    _keep_text(folder, "s.jsonl", "kept before")
    _append(path, _message(99_999, "user", "An   APPENDED question"))
    assert TextIndex(folder).text(path) is None  # stale: the size and mtime changed
    assert _texts([path])[path] == "kept before an appended question"
    assert TextIndex(folder).text(path) == "kept before an appended question"


def test_a_rewritten_file_is_read_again_in_full(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = _write(folder / "s.jsonl", [_message(1, "user", "first version")])
    _texts([path])
    _keep_text(folder, "s.jsonl", "kept before")
    _write(path, [_message(1, "user", "second version, longer")])
    assert _texts([path])[path] == "second version, longer"


def test_a_corrupt_line_is_skipped_and_a_corrupt_index_is_rebuilt(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    lines = [_message(1, "user", "before the damage"), '{"type":"message","message":{"role":"us', "not json"]
    lines += [_message(2, "assistant", [{"type": "text", "text": "after the damage"}])]
    path = _write(folder / "s.jsonl", lines)
    _append(path, _message(3, "user", "unterminated last line")[:-3])  # a line cut short (a crash mid-write)
    assert _texts([path])[path] == "before the damage after the damage"
    (folder / INDEX_NAME).write_text('{"version": 1}\n{"name": "s.jsonl", "size": "x"\n[]\n')
    assert _texts([path])[path] == "before the damage after the damage"
    assert _rows(folder)["s.jsonl"]["end"] == path.stat().st_size


def test_a_file_without_a_final_newline_is_read_again_in_full_once_it_grows(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = _write(folder / "s.jsonl", [_message(1, "user", "one")])
    with path.open("a") as handle:
        handle.write(_message(2, "user", "two"))  # no newline yet
    assert _texts([path])[path] == "one two"
    _append(path, "", _message(3, "user", "three"))
    assert _texts([path])[path] == "one two three"


def test_a_deleted_file_loses_its_row_and_is_not_found(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    keep = _write(folder / "keep.jsonl", [_message(1, "user", "kept session")])
    gone = _write(folder / "gone.jsonl", [_message(1, "user", "deleted session")])
    _texts([keep, gone])
    assert set(_rows(folder)) == {"keep.jsonl", "gone.jsonl"}
    gone.unlink()
    assert TextIndex(folder).update(gone) is None
    assert _texts([keep, gone]) == {keep: "kept session"}  # a file gone while being read
    assert _texts([keep]) == {keep: "kept session"}
    assert set(_rows(folder)) == {"keep.jsonl"}


def test_stopping_keeps_what_was_read_and_prunes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    paths = [_write(folder / f"s{n}.jsonl", [_message(1, "user", f"session {n}")]) for n in range(3)]
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2  # two files read, then stop

    assert not index_texts(paths, lambda _texts, _done: None, stop)
    index = TextIndex(folder)
    assert [index.text(p) for p in paths] == ["session 0", "session 1", None]


def test_the_index_is_on_disk_when_the_last_texts_are_delivered(tmp_path: Path) -> None:
    """The picker takes the last delivery as the end of the work: a process that ends then (the user
    leaves ``/resume``) must not lose what was read (the index was saved after it: a test saw no file)."""
    folder = tmp_path / "sessions"
    paths = [_write(folder / f"s{n}.jsonl", [_message(1, "user", f"session {n}")]) for n in range(2)]
    on_disk: list[bool] = []

    def deliver(_texts: dict[Path, str], done: int) -> None:
        if done == len(paths):
            on_disk.append((folder / INDEX_NAME).is_file() and "session 1" in (folder / INDEX_NAME).read_text())

    assert index_texts(paths, deliver)
    assert on_disk and all(on_disk)


def test_an_unwritable_folder_still_gives_the_texts(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = _write(folder / "s.jsonl", [_message(1, "user", "read only")])
    os.chmod(folder, 0o500)
    try:
        if os.access(folder, os.W_OK):  # root ignores the mode: make the index's name a folder instead
            os.chmod(folder, 0o700)
            (folder / INDEX_NAME).mkdir()
        assert _texts([path]) == {path: "read only"}
    finally:
        os.chmod(folder, 0o700)
