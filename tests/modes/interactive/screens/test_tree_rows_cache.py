"""/tree describes each entry once per session: a second open looks the row texts up."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.modes.interactive.screens import tree_rows
from pi_tui.modes.interactive.screens.tree_rows import TreeModel
from pi_tui.session import SessionManager
from tests.session.helpers import assistant, user


def _session(tmp_path: Path, turns: int) -> SessionManager:
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path)
    for n in range(turns):
        manager.append_message(user(f"question {n}"))
        manager.append_message(assistant(f"answer {n}"))
    return manager


def test_a_second_open_describes_only_new_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manager = _session(tmp_path, 50)
    described: list[str] = []
    real = tree_rows.entry_text

    def counting(entry: object, tool_args: dict) -> tuple[str, str, bool]:  # type: ignore[type-arg]
        described.append(str(getattr(entry, "id", "")))
        return real(entry, tool_args)

    monkeypatch.setattr(tree_rows, "entry_text", counting)
    first = [row.text for row in TreeModel(manager).rows]
    assert len(described) == 100
    described.clear()
    assert [row.text for row in TreeModel(manager).rows] == first
    assert described == []
    manager.append_message(user("one more"))
    rows = TreeModel(manager).rows
    assert described == [manager.get_leaf_id()]
    assert rows[-1].text == "user: one more" and [r.text for r in rows[:-1]] == first


def test_rows_are_kept_while_entries_and_leaf_are_the_same(tmp_path: Path) -> None:
    manager = _session(tmp_path, 5)
    first = TreeModel(manager).rows
    assert TreeModel(manager).rows is first
    target = first[3].id
    manager.branch(target)  # a navigation moves the leaf: the active path and the leaf mark change
    moved = TreeModel(manager).rows
    assert moved is not first
    assert [r.id for r in moved if r.is_leaf] == [target]
    assert [r.on_active_path for r in moved] == [True] * 4 + [False] * 6
    manager.append_label(target, "here")  # a label is an entry: the rows are built again
    labelled = TreeModel(manager)
    assert labelled.rows is not moved and labelled.labels == {target: "here"}
