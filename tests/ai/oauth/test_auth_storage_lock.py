from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthFileError, AuthStorage
from pi_tui.ai.auth_lock import AuthLockError, hold_lock, lock_path_for


def test_lock_is_the_directory_pi_uses(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    with hold_lock(path):
        assert lock_path_for(path) == tmp_path / "auth.json.lock"
        assert (tmp_path / "auth.json.lock").is_dir()
    assert not (tmp_path / "auth.json.lock").exists()


def test_a_held_lock_makes_the_second_holder_wait(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    order: list[str] = []
    inside = threading.Event()
    release = threading.Event()

    def first() -> None:
        with hold_lock(path):
            order.append("first in")
            inside.set()
            release.wait(10)
            order.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(10)
    second_done = threading.Event()

    def second() -> None:
        with hold_lock(path):
            order.append("second in")
        second_done.set()

    other = threading.Thread(target=second)
    other.start()
    assert not second_done.wait(0.3)
    release.set()
    thread.join()
    other.join()
    assert order == ["first in", "first out", "second in"]


def test_an_abandoned_lock_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    lock = lock_path_for(path)
    lock.mkdir()
    old = time.time() - 60
    os.utime(lock, (old, old))
    with hold_lock(path, wait_s=2):
        assert lock.is_dir()


def test_a_fresh_foreign_lock_times_out_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    lock_path_for(path).mkdir()
    with pytest.raises(AuthLockError, match="held by another process"):
        with hold_lock(path, wait_s=0.2):
            pass


def test_storage_writes_pi_format_with_mode_0600(agent_dir: Path) -> None:
    storage = AuthStorage(agent_dir / "auth.json")
    storage.set("anthropic", {"type": "oauth", "access": "a", "refresh": "r", "expires": 1})
    text = (agent_dir / "auth.json").read_text()
    assert text == json.dumps(
        {"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}}, indent=2
    )
    assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600


def test_malformed_auth_json_is_reported_and_never_overwritten(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    broken = '{"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1},'
    path.write_text(broken)
    storage = AuthStorage(path)
    assert any("invalid JSON" in e for e in storage.drain_errors())
    with pytest.raises(AuthFileError, match="invalid JSON"):
        storage.set("openai", {"type": "api_key", "key": "k"})
    with pytest.raises(AuthFileError):
        storage.remove("anthropic")
    assert path.read_text() == broken


def test_entries_this_code_does_not_understand_survive_a_write(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text(json.dumps({"future": {"type": "passkey", "blob": [1, 2]}, "odd": "text"}))
    storage = AuthStorage(path)
    assert any('"future"' in e for e in storage.drain_errors())
    storage.set("anthropic", {"type": "api_key", "key": "k"})
    data = json.loads(path.read_text())
    assert data["future"] == {"type": "passkey", "blob": [1, 2]} and data["odd"] == "text"
    assert data["anthropic"] == {"type": "api_key", "key": "k"}


def test_modify_sees_what_another_process_wrote(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    mine = AuthStorage(path)
    other = AuthStorage(path)
    other.set("xai", {"type": "api_key", "key": "x"})
    seen: list[object] = []
    mine.modify("xai", lambda current: seen.append(current) or None)
    assert seen == [{"type": "api_key", "key": "x"}]
    mine.set("anthropic", {"type": "api_key", "key": "a"})
    assert set(json.loads(path.read_text())) == {"xai", "anthropic"}


def test_a_mode_chosen_for_an_existing_file_is_kept(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text("{}")
    os.chmod(path, 0o640)
    AuthStorage(path).set("anthropic", {"type": "api_key", "key": "k"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
