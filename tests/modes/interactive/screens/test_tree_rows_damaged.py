"""/tree shows a damaged line of a known entry type (kept as it was read) by its type."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.modes.interactive.screens.tree_rows import TreeModel
from pi_tui.session import SessionManager
from pi_tui.session.entries import RawEntry
from tests.session.helpers import assistant, user


def test_a_damaged_compaction_line_is_a_row_named_by_its_type(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path)
    manager.append_message(user("question"))
    manager.append_message(assistant("answer"))
    assert manager.path is not None
    path = manager.path
    leaf = manager.get_leaf_id()
    damaged = {
        "type": "compaction",
        "id": "c0ffee00",
        "parentId": leaf,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "summary": "what happened",
        "firstKeptEntryId": leaf,
        "tokensBefore": "many",  # not a number: the line is kept as read
    }
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(damaged) + "\n")
    manager.close()
    reopened = SessionManager.open(str(path))
    assert any(isinstance(e, RawEntry) and e.type == "compaction" for e in reopened.get_entries())
    texts = [row.text for row in TreeModel(reopened, "all").rows]
    assert "[compaction]" in texts
