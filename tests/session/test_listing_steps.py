"""Listing a folder in pieces for the work ahead (`list_sessions_in_steps`): a piece ends once it took
its time, so whatever waits for the worker between pieces (a screen being opened) waits one file at
most, not a whole chunk of large ones; the listing it leaves behind is the full one."""

from __future__ import annotations

from pathlib import Path

from pi_tui.session import SessionManager, list_sessions
from pi_tui.session.listing import list_sessions_in_steps
from tests.session.helpers import assistant, user


def _folder(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "sessions"
    for n in range(count):
        manager = SessionManager.create(str(tmp_path), session_dir=folder)
        manager.append_message(user(f"question {n}"))
        manager.append_message(assistant(f"answer {n}"))
        manager.close()
    return folder


def test_a_piece_ends_once_it_took_its_time(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 6)
    pieces = list(list_sessions_in_steps(tmp_path, folder, chunk=50, piece_seconds=0.0))
    assert pieces == [1, 2, 3, 4, 5, 6]  # each file is a piece of its own when each takes "too long"
    chunked = list(list_sessions_in_steps(tmp_path, folder, chunk=4, piece_seconds=60.0))
    assert chunked == [4]  # the last two end it
    assert len(list_sessions(tmp_path, folder)) == 6
