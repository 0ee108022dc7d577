"""What a package install killed part way leaves next to its folder is cleaned up by the next install of
that package, and a package folder an interrupted update had moved away is put back."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.packages.leftovers import STALE_WORK_SECONDS, tidy

from .helpers import make_repo, run_cli

FILES = {"extensions/hello.py": "def register(pi):\n    pass\n", "VERSION": "1\n"}


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _age(path: Path, seconds: float) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_a_package_folder_an_interrupted_update_moved_away_is_put_back(tmp_path: Path) -> None:
    moved = tmp_path / f".requests.old-{_dead_pid()}"
    moved.mkdir()
    (moved / "requests").mkdir()
    dest = tmp_path / "requests"
    assert tidy(dest) == [f"put back requests, which an interrupted update had moved to {moved.name}"]
    assert (dest / "requests").is_dir() and not moved.exists()


def test_an_old_folder_of_a_finished_update_is_removed_and_one_of_a_live_update_kept(tmp_path: Path) -> None:
    dest = tmp_path / "requests"
    dest.mkdir()
    dead = tmp_path / f".requests.old-{_dead_pid()}"
    live = tmp_path / f".requests.old-{os.getpid()}"
    dead.mkdir()
    live.mkdir()
    tidy(dest)
    assert not dead.exists() and live.is_dir() and dest.is_dir()


def test_only_stale_work_folders_of_exactly_the_install_patterns_are_removed(tmp_path: Path) -> None:
    dest = tmp_path / "hello"
    stale = [tmp_path / ".hello.pip-abc123", tmp_path / ".hello.clone-xyz"]
    kept = [
        tmp_path / ".hello.pip-young",  # an install running now, in another process
        tmp_path / ".other.pip-abc",  # another package's
        tmp_path / "hello.pip-abc",  # not hidden: the user's
        tmp_path / ".hello.notes",  # not an install's
    ]
    for folder in stale + kept:
        folder.mkdir()
        (folder / "file").write_text("x")
    for folder in stale + kept[1:]:
        _age(folder, STALE_WORK_SECONDS + 60)
    (tmp_path / ".hello.pip-file").write_text("a file, not an install's folder")
    _age(tmp_path / ".hello.pip-file", STALE_WORK_SECONDS + 60)
    tidy(dest)
    assert not any(folder.exists() for folder in stale)
    assert all(folder.is_dir() for folder in kept)
    assert (tmp_path / ".hello.pip-file").is_file()


def test_installing_a_git_package_removes_what_a_killed_clone_left(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    origin = make_repo(tmp_path / "origin" / "hello", FILES)
    clone = agent_dir / "git" / "local" / str(origin.resolve()).lstrip("/")
    clone.parent.mkdir(parents=True)
    leftover = clone.parent / ".hello.clone-k1ll3d"
    (leftover / ".git").mkdir(parents=True)
    _age(leftover, STALE_WORK_SECONDS + 60)
    assert run_cli(monkeypatch, project, "install", f"git:{origin}") == 0
    assert (clone / "VERSION").read_text() == "1\n"
    assert sorted(p.name for p in clone.parent.iterdir()) == ["hello"]
