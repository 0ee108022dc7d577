from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import ToolCall
from pi_tui.session import SessionError, SessionManager, list_sessions, most_recent_session
from pi_tui.util.json_safe import MAX_DEPTH, MAX_RECORD_DEPTH

from .helpers import assistant, user

CWD = "/home/me/proj"
DEEP_LINE = b"[" * 100_000 + b"]" * 100_000
DEEP_ENTRY = b'{"type":"custom","id":"d1","parentId":null,"data":' + DEEP_LINE + b"}"


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def _session(session_dir: Path, text: str = "hello") -> Path:
    manager = SessionManager.create(CWD, session_dir=session_dir)
    manager.append_message(user(text))
    manager.append_message(assistant(f"re: {text}"))
    manager.close()
    assert manager.path is not None
    return manager.path


def _texts(manager: SessionManager) -> list[str]:
    return [m.content[0].text for m in manager.build_context().messages]


@pytest.mark.parametrize("line", [DEEP_LINE, DEEP_ENTRY], ids=["array", "entry"])
def test_a_hundred_thousand_levels_deep_line_is_skipped_reported_and_kept_byte_for_byte(
    tmp_path: Path, line: bytes
) -> None:
    path = _session(tmp_path)
    with path.open("ab") as handle:
        handle.write(line + b"\n")
    before = path.read_bytes()

    with SessionManager.open(path) as manager:
        assert manager.load_report.summary() == (
            f"Session {path.name}: skipped 1 unreadable line "
            f"(line 4: JSON nested deeper than {MAX_RECORD_DEPTH} levels)."
        )
        assert _texts(manager) == ["hello", "re: hello"]
        manager.append_message(user("after it"))
    after = path.read_bytes()
    assert after.startswith(before)  # the deep line stays where it was, untouched
    assert json.loads(after[len(before) :])["message"]["content"][0]["text"] == "after it"


def test_a_tool_call_at_the_depth_limit_is_saved_and_reads_back(tmp_path: Path) -> None:
    arguments = {"tree": _nested(MAX_DEPTH - 1)}  # MAX_DEPTH levels with the arguments object itself
    manager = SessionManager.create(CWD, session_dir=tmp_path)
    manager.append_message(user("build it"))
    manager.append_message(assistant(calls=[ToolCall(id="c1", name="make", arguments=arguments)]))
    manager.close()
    assert manager.path is not None

    with SessionManager.open(manager.path) as again:
        assert again.load_report.summary() == ""
        call = again.build_context().messages[-1].content[0]
        assert isinstance(call, ToolCall) and call.arguments == arguments
    assert [row.message_count for row in list_sessions(CWD, session_dir=tmp_path)] == [2]


def test_an_entry_too_deep_to_read_back_is_refused_and_the_session_goes_on(tmp_path: Path) -> None:
    manager = SessionManager.create(CWD, session_dir=tmp_path)
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    assert manager.path is not None
    size = manager.path.stat().st_size
    for data in (_nested(MAX_RECORD_DEPTH), _nested(100_000)):
        with pytest.raises(SessionError, match=f"deeper than {MAX_RECORD_DEPTH} levels"):
            manager.append_custom("ext", data)
    assert manager.path.stat().st_size == size
    manager.append_custom("ext", _nested(MAX_DEPTH))
    manager.close()
    with SessionManager.open(manager.path, read_only=True) as again:
        assert again.load_report.summary() == ""
        assert _texts(again) == ["q", "a"]


def test_listing_still_shows_every_session_when_one_file_holds_a_deep_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fine = _session(tmp_path, "fine")
    deep_body = _session(tmp_path, "deep body")
    with deep_body.open("ab") as handle:
        handle.write(DEEP_LINE + b"\n" + DEEP_ENTRY + b"\n")
    deep_header = tmp_path / "2025-01-01T00-00-00-000Z_deep.jsonl"
    deep_header.write_bytes(DEEP_LINE + b"\n" + fine.read_bytes().split(b"\n", 1)[1])

    with caplog.at_level(logging.WARNING, logger="pi_tui.session.listing"):
        rows = list_sessions(CWD, session_dir=tmp_path)
    assert sorted(row.first_message for row in rows) == ["deep body", "fine"]
    assert {row.message_count for row in rows} == {2}
    assert f"{deep_header} is not listed: its first line is JSON nested deeper than" in caplog.text
    assert most_recent_session(CWD, session_dir=tmp_path) in (fine, deep_body)
