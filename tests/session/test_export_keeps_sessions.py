"""``/export name.jsonl`` never writes over the session it exports (which would keep only the active
branch of it, and pull the file out from under the process appending to it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from pi_tui.session.errors import SessionError
from pi_tui.session.export_jsonl import export_branch_jsonl

from .helpers import assistant, user


def _branched_session(tmp_path: Path) -> SessionManager:
    manager = SessionManager.create("/p", session_dir=tmp_path / "sessions")
    first = manager.append_message(user("one"))
    manager.append_message(assistant("first answer"))
    manager.branch(first.id)
    manager.append_message(assistant("another answer on another branch"))
    return manager


def test_exporting_onto_the_session_file_itself_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    manager = _branched_session(tmp_path)
    assert manager.path is not None
    before = manager.path.read_bytes()
    link = tmp_path / "alias.jsonl"
    link.symlink_to(manager.path)
    for target in (manager.path, link, Path(os.path.relpath(manager.path))):
        with pytest.raises(SessionError, match="is the session being exported"):
            export_branch_jsonl(manager, target)
    assert manager.path.read_bytes() == before
    manager.append_message(user("still writing"))
    manager.close()
    reopened = SessionManager.open(manager.path, read_only=True)
    assert len(reopened.get_entries()) == 4


def test_exporting_over_another_file_replaces_it_whole(tmp_path: Path) -> None:
    manager = _branched_session(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text("an older export\n")
    assert export_branch_jsonl(manager, out) == out
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and "older" not in out.read_text()
    manager.close()


_HTML_CHILD = """
import resource, sys
from pathlib import Path
from pi_tui.session import SessionManager
from pi_tui.session.export_html import export_session_html

manager = SessionManager.open(Path(sys.argv[1]), read_only=True)
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    export_session_html(manager, sys.argv[2])
except OSError as exc:
    print("OSError:", exc.strerror)
"""


def test_an_html_export_cut_short_by_a_full_disk_leaves_the_earlier_export_whole(tmp_path: Path) -> None:
    manager = _branched_session(tmp_path)
    manager.append_message(user("x" * 50_000))  # a page well past the limit below
    manager.close()
    out = tmp_path / "out.html"
    earlier = b"<html>an earlier export</html>\n"
    out.write_bytes(earlier)
    done = subprocess.run(
        [sys.executable, "-c", _HTML_CHILD, str(manager.path), str(out), "20000"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OSError: File too large"
    assert out.read_bytes() == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.html", "sessions"]
