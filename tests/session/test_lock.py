from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_tui.session import SessionLockedError, SessionManager
from pi_tui.session.lock import lock_path_for

from .helpers import assistant, read_lines, user


def _saved_session(tmp_path: Path) -> Path:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    manager.close()
    assert manager.path is not None
    return manager.path


def test_second_open_in_the_same_process_is_refused_with_our_pid(tmp_path: Path) -> None:
    path = _saved_session(tmp_path)
    first = SessionManager.open(path)
    with pytest.raises(SessionLockedError) as info:
        SessionManager.open(path)
    assert info.value.pid == os.getpid()
    assert str(info.value) == (
        f"Session {path.name} is already open in another pi-tui process (pid {os.getpid()}). "
        "Close it there first, or fork it (--fork) to continue in a new session."
    )
    first.close()
    assert not lock_path_for(path).exists()
    with SessionManager.open(path) as again:  # released on close
        again.append_message(user("next"))
    assert len(read_lines(path)) == 4


def test_read_only_opens_do_not_lock(tmp_path: Path) -> None:
    path = _saved_session(tmp_path)
    with SessionManager.open(path):
        viewer = SessionManager.open(path, read_only=True)
        assert len(viewer.get_entries()) == 2


@pytest.mark.slow
def test_a_second_process_is_refused_and_told_the_holders_pid(tmp_path: Path) -> None:
    path = _saved_session(tmp_path)
    script = textwrap.dedent(
        f"""
        import sys
        from pi_tui.session import SessionManager, SessionLockedError
        try:
            SessionManager.open({str(path)!r})
        except SessionLockedError as exc:
            print("LOCKED", exc.pid)
            print(exc)
            sys.exit(3)
        print("OPENED")
        """
    )
    with SessionManager.open(path) as holder:
        holder.append_message(user("held"))
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 3, done.stderr
    first, message = done.stdout.splitlines()[:2]
    assert first == f"LOCKED {os.getpid()}"
    assert f"already open in another pi-tui process (pid {os.getpid()})" in message
    # once the holder closed, the other process gets in
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "OPENED", done.stderr


def test_a_lock_left_by_a_dead_process_does_not_block(tmp_path: Path) -> None:
    path = _saved_session(tmp_path)
    lock_path_for(path).write_text("999999\n", encoding="ascii")  # a crashed holder's leftover
    with SessionManager.open(path) as manager:
        manager.append_message(user("fine"))
        assert lock_path_for(path).read_text(encoding="ascii").strip() == str(os.getpid())


def test_a_new_session_takes_the_lock_when_it_is_first_written(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    manager.append_message(user("q"))
    assert manager.path is not None and not lock_path_for(manager.path).exists()
    manager.append_message(assistant("a"))
    assert lock_path_for(manager.path).exists()
    with pytest.raises(SessionLockedError):
        SessionManager.open(manager.path)
    manager.close()
