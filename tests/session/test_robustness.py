from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from pi_tui.session import MessageEntry, SessionError, SessionManager
from pi_tui.session.loader import parse_session_bytes

from .helpers import assistant, read_lines, user

SID = "0b5c1c3e-1111-4222-8333-944445555666"


def _session(tmp_path: Path, turns: int = 3) -> Path:
    manager = SessionManager.create("/p", session_dir=tmp_path, session_id=SID)
    for i in range(turns):
        manager.append_message(user(f"q{i}"))
        manager.append_message(assistant(f"a{i}"))
    manager.close()
    assert manager.path is not None
    return manager.path


def _texts(manager: SessionManager) -> list[str]:
    return [m.content[0].text for m in manager.build_context().messages]


def test_torn_last_line_is_skipped_reported_and_ended_with_a_newline_on_the_next_append(tmp_path: Path) -> None:
    path = _session(tmp_path)
    torn = '{"type":"message","id":"abcd1234","parentId":"x","timestamp":"2025-01-01T00:00:00.000Z","message":{"ro'
    with path.open("a", encoding="utf-8") as handle:
        handle.write(torn)
    before = path.read_bytes()
    clean_size = len(before) - len(torn)

    with SessionManager.open(path) as manager:
        report = manager.load_report
        assert report.skipped_line_numbers == [8]
        assert report.torn_tail is not None and report.torn_tail.offset == clean_size
        assert report.summary() == (
            f"Session {path.name}: skipped 1 unreadable line (line 8: incomplete last line (an interrupted write))."
        )
        assert _texts(manager) == ["q0", "a0", "q1", "a1", "q2", "a2"]
        assert path.read_bytes() == before  # opening wrote nothing
        last = manager.get_leaf_id()
        manager.append_message(user("after the crash"))
        repair = "ended the incomplete last line 8 with a newline, keeping its bytes"
        assert report.repairs == [repair]
        assert report.summary().endswith(f"; {repair}.")

    # Every byte stays where it was (pi does the same when it loads such a file): the torn line is ended
    # with a newline, so the new entry is a line of its own, and nothing is cut off or moved elsewhere.
    after = path.read_bytes()
    assert after.startswith(before + b"\n")
    assert not list(tmp_path.glob("*.bak"))
    new_lines = after[len(before) + 1 :].splitlines()
    assert [json.loads(line)["message"]["content"][0]["text"] for line in new_lines] == ["after the crash"]
    assert json.loads(new_lines[0])["parentId"] == last
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.load_report.summary() == (
        f"Session {path.name}: skipped 1 unreadable line (line 8: invalid JSON)."
    )
    assert _texts(reopened) == ["q0", "a0", "q1", "a1", "q2", "a2", "after the crash"]


def test_corrupt_middle_line_is_skipped_and_the_conversation_stays_connected(tmp_path: Path) -> None:
    path = _session(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lost_id = json.loads(lines[3])["id"]
    lines[3] = lines[3][: len(lines[3]) // 2]  # line 4 (q1) cut short, as a crash or a bad sector leaves it
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with SessionManager.open(path) as manager:
        report = manager.load_report
        assert report.skipped_line_numbers == [4]
        assert [(r.entry_id, r.missing_parent) for r in report.reattached] == [
            (json.loads(lines[4])["id"], lost_id)
        ]
        assert report.reattached[0].attached_to == json.loads(lines[2])["id"]
        assert report.summary() == (
            f"Session {path.name}: skipped 1 unreadable line (line 4: invalid JSON); "
            "1 entry with a missing parent attached to the entry before it."
        )
        # one message is lost from view, the rest of the conversation is still one path
        assert _texts(manager) == ["q0", "a0", "a1", "q2", "a2"]
        manager.append_message(user("next"))
    on_disk = path.read_text(encoding="utf-8").splitlines()
    assert on_disk[:7] == lines  # the damaged line stays where it was; nothing else changed
    assert json.loads(on_disk[7])["message"]["content"][0]["text"] == "next"
    again = SessionManager.open(path, read_only=True)
    assert again.load_report.skipped_line_numbers == [4]
    assert _texts(again)[-1] == "next"


def test_entry_without_a_parent_id_key_is_attached_to_the_previous_entry(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    damaged = json.loads(lines[2])
    del damaged["parentId"]
    path.write_text("\n".join([lines[0], lines[1], json.dumps(damaged)]) + "\n", encoding="utf-8")
    manager = SessionManager.open(path, read_only=True)
    reattached = manager.load_report.reattached
    assert [(r.entry_id, r.missing_parent, r.attached_to) for r in reattached] == [
        (damaged["id"], "(no parentId)", json.loads(lines[1])["id"])
    ]
    assert _texts(manager) == ["q0", "a0"]


def test_entry_glued_to_a_torn_line_is_recovered(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    glued_entry = {
        "type": "message",
        "id": "9a9a9a9a",
        "parentId": last["id"],
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "glued"}], "timestamp": 1},
    }
    broken = '{"type":"message","id":"1111aaaa","parentId":"x","message":{"role":"user","content":[{"type":"text","te'
    with path.open("a", encoding="utf-8") as handle:
        handle.write(broken + json.dumps(glued_entry, separators=(",", ":")) + "\n")
    manager = SessionManager.open(path, read_only=True)
    report = manager.load_report
    assert report.salvaged == [4]
    assert report.summary() == (
        f"Session {path.name}: skipped 1 unreadable line (line 4: incomplete entry (an interrupted write); "
        "the complete entry after it was recovered); recovered 1 entry glued to a broken line (line 4)."
    )
    assert manager.get_leaf_id() == "9a9a9a9a"
    assert _texts(manager) == ["q0", "a0", "glued"]


def test_missing_parent_is_attached_to_the_previous_entry_and_a_first_orphan_becomes_a_root(
    tmp_path: Path,
) -> None:
    path = _session(tmp_path, turns=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    first["parentId"] = "00000000"
    second = json.loads(lines[2])
    extra = dict(second, id="77777777", parentId="88888888")
    extra["message"] = dict(second["message"], content=[{"type": "text", "text": "orphan"}])
    path.write_text(
        "\n".join([lines[0], json.dumps(first), lines[2], json.dumps(extra)]) + "\n",
        encoding="utf-8",
    )
    manager = SessionManager.open(path, read_only=True)
    reattached = [(r.entry_id, r.missing_parent, r.attached_to) for r in manager.load_report.reattached]
    assert reattached == [(first["id"], "00000000", None), ("77777777", "88888888", second["id"])]
    assert _texts(manager) == ["q0", "a0", "orphan"]
    assert len(manager.get_tree()) == 1


def test_file_without_a_valid_header_loads_and_gets_one_on_the_next_append(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=2)
    lines = path.read_text(encoding="utf-8").splitlines()
    damaged = "\n".join([lines[0][:25]] + lines[1:]) + "\n"  # header cut short
    path.write_text(damaged, encoding="utf-8")

    with SessionManager.open(path, cwd="/p") as manager:
        report = manager.load_report
        assert report.header_missing
        assert report.summary() == (
            f"Session {path.name}: no valid session header (a new one is written on the next save; "
            "the original is kept as .bak); skipped 1 unreadable line (line 1: invalid JSON)."
        )
        assert manager.id == SID  # recovered from the file name
        assert _texts(manager) == ["q0", "a0", "q1", "a1"]
        manager.append_message(user("q2"))
        backup = path.with_name(path.name + ".noheader.bak")
        assert report.repairs == [f"added a session header; the original is kept as {backup.name}"]
    assert backup.read_text(encoding="utf-8") == damaged
    rewritten = read_lines(path)
    assert rewritten[0]["type"] == "session" and rewritten[0]["id"] == SID and rewritten[0]["version"] == 3
    assert [d["id"] for d in rewritten[1:5]] == [json.loads(x)["id"] for x in lines[1:]]
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.load_report.summary() == ""
    assert _texts(reopened) == ["q0", "a0", "q1", "a1", "q2"]


def test_file_whose_first_line_is_an_entry_keeps_every_entry(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    manager = SessionManager.open(path, read_only=True)
    assert manager.load_report.header_missing
    assert manager.load_report.skipped == []
    assert _texts(manager) == ["q0", "a0"]


def test_empty_file_becomes_a_new_session_at_that_path(tmp_path: Path) -> None:
    path = tmp_path / f"2025-01-01T00-00-00-000Z_{SID}.jsonl"
    path.write_text("\n", encoding="utf-8")
    with SessionManager.open(path, cwd="/p") as manager:
        assert manager.load_report.summary() == ""
        assert manager.id == SID
        manager.append_message(user("q"))
        manager.append_message(assistant("a"))
    assert [d["type"] for d in read_lines(path)] == ["session", "message", "message"]


def test_missing_file_becomes_a_new_session_at_that_path(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "chosen.jsonl"
    with SessionManager.open(path, cwd="/p") as manager:
        assert manager.path == path and manager.get_entries() == []
        manager.append_message(assistant("a"))
    assert read_lines(path)[0]["cwd"] == "/p"


def test_complete_last_line_without_newline_is_ended_before_appending(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=1)
    data = path.read_bytes()
    path.write_bytes(data.rstrip(b"\n"))
    with SessionManager.open(path) as manager:
        assert manager.load_report.unterminated_tail
        assert not manager.load_report.has_problems
        manager.append_message(user("next"))
        assert manager.load_report.repairs == ["ended the last line, which lacked its newline"]
    assert path.read_bytes().startswith(data)
    assert len(read_lines(path)) == 4


def test_a_foreign_partial_write_does_not_swallow_our_next_entry(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=1)
    with SessionManager.open(path) as manager:
        manager.append_message(user("one"))
        with path.open("a", encoding="utf-8") as handle:  # another tool, mid-write
            handle.write('{"type":"custom","id":"ffff0000"')
        manager.append_message(assistant("two"))
    reopened = SessionManager.open(path, read_only=True)
    assert reopened.load_report.skipped_line_numbers == [5]
    assert _texts(reopened) == ["q0", "a0", "one", "two"]


def test_a_failed_write_leaves_no_partial_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session(tmp_path, turns=1)
    manager = SessionManager.open(path)
    manager.append_message(user("fine"))
    size = path.stat().st_size
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("pi_tui.session.store.os.write", half_then_full)
    with pytest.raises(SessionError, match="Could not write to session file .*No space left on device"):
        manager.append_message(assistant("lost"))
    assert path.stat().st_size == size
    monkeypatch.setattr("pi_tui.session.store.os.write", real_write)
    manager.append_message(assistant("saved"))
    manager.close()
    reopened = SessionManager.open(path, read_only=True)
    assert not reopened.load_report.has_problems
    assert _texts(reopened)[-1] == "saved"


def test_a_crash_at_any_byte_loses_at_most_the_entry_being_written(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=2)
    data = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    for cut in range(len(data) + 1):
        loaded = parse_session_bytes(data[:cut], path)
        complete_entries = sum(1 for e in ends if e <= cut) - 1
        assert len(loaded.entries) == max(complete_entries, 0) or (
            # the last line is complete JSON that only lacks its newline
            loaded.report.unterminated_tail and len(loaded.entries) == complete_entries + 1
        )
        assert all(isinstance(e, MessageEntry) for e in loaded.entries)


def test_a_deleted_file_is_written_again_from_memory(tmp_path: Path) -> None:
    path = _session(tmp_path, turns=1)
    with SessionManager.open(path) as manager:
        path.unlink()
        manager.append_message(user("still saved"))
        assert "the file had disappeared and was written again from memory" in manager.load_report.summary()
    reopened = SessionManager.open(path, read_only=True)
    assert _texts(reopened) == ["q0", "a0", "still saved"]
