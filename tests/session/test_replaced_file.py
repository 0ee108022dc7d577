"""A session file replaced or removed by another program while pi-tui has it open loses no later entry.

An open descriptor keeps writing to the file it was opened on; after a rename over the name (an editor,
a sync tool, ``git checkout``) or a removal, those lines would reach a file no name leads to.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_tui.session import SessionManager

from .helpers import assistant, user


def _texts(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]
    return [e["message"]["content"][0]["text"] for e in lines if e["type"] == "message"]


def test_appends_follow_a_file_renamed_over_the_session(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    manager.append_message(user("q1"))
    manager.append_message(assistant("a1"))
    path = manager.path
    assert path is not None
    # Another program writes a new version with one more entry (its last line without a newline) and
    # renames it over the session.
    last = json.loads(path.read_bytes().splitlines()[-1])
    foreign = {**last, "id": "f0f0f0f0", "parentId": last["id"]}
    foreign["message"] = {**last["message"], "content": [{"type": "text", "text": "from elsewhere"}]}
    replacement = tmp_path / "replacement.tmp"
    replacement.write_bytes(path.read_bytes() + json.dumps(foreign, separators=(",", ":")).encode())
    os.replace(replacement, path)

    manager.append_message(user("q2"))
    manager.append_message(assistant("a2"))
    manager.close()

    assert _texts(path) == ["q1", "a1", "from elsewhere", "q2", "a2"]  # every line whole, none lost


def test_a_session_file_removed_while_open_is_written_again_from_memory(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    manager.append_message(user("q1"))
    manager.append_message(assistant("a1"))
    path = manager.path
    assert path is not None
    path.unlink()

    manager.append_message(user("q2"))
    manager.close()

    assert _texts(path) == ["q1", "a1", "q2"]
    assert manager.load_report.repairs == ["the file had disappeared and was written again from memory"]
