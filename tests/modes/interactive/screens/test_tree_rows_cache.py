"""/tree describes each entry once per session, when its row is first read: a second open looks the
row texts up."""

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
    assert described == []  # a row is described when it is first read (shown or searched)
    assert rows[-1].text == "user: one more" and [r.text for r in rows[:-1]] == first
    assert described == [manager.get_leaf_id()]


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


def test_typing_on_narrows_the_last_search_and_finds_what_a_fresh_search_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = _session(tmp_path, 120)
    manager.append_label(manager.get_entries()[5].id, "Checkpoint")
    examined: list[str] = []
    real = TreeModel._matches

    def counting(self: TreeModel, row: tree_rows.TreeRow, tokens: list[str]) -> bool:
        examined.append(row.id)
        return real(self, row, tokens)

    monkeypatch.setattr(TreeModel, "_matches", counting)
    model = TreeModel(manager)

    def fresh(query: str) -> list[str]:
        other = TreeModel(manager, model.mode)
        other.set_query(query)
        return [row.id for row in other.visible()]

    steps = [  # query, whether typing on narrows the previous search's rows
        ("question 1", False),
        ("question 11", True),
        ("question 11 ", True),  # the same words
        ("question 1", False),  # Backspace: a shorter query searches everything again
        ("checkpoint", False),  # a label matches
    ]
    shown: list[str] = []
    for query, narrows in steps:
        wanted = fresh(query)
        before = len(shown)
        examined.clear()
        model.set_query(query)
        shown = [row.id for row in model.visible()]
        assert shown == wanted and shown, query
        assert len(examined) == before if narrows else len(examined) > 100, query
    model.set_query("question 1")
    model.visible()
    model.folded.add(model.rows[0].id)  # a fold: the next search walks the rows again
    examined.clear()
    model.query = "question 11"
    assert [row.id for row in model.visible()] == []  # everything is under the folded root
    model.set_mode("user-only")
    wanted = fresh("question 110")
    examined.clear()
    model.set_query("question 110")
    assert [row.id for row in model.visible()] == wanted and len(examined) > 100


def test_reading_rows_builds_no_map_of_every_tool_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screenful of rows names its tool results' calls from the answers just above them: no row (a
    prompt, an answer or a result) makes the first open walk all of a big session's calls."""
    from pi_tui.ai.types import ToolCall
    from tests.session.helpers import tool_result

    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path)
    for n in range(300):
        manager.append_message(user(f"question {n}"))
        manager.append_message(
            assistant(calls=[ToolCall(id=f"c{n}", name="bash", arguments={"command": f"echo {n}"})])
        )
        manager.append_message(tool_result(f"c{n}", str(n), name="bash"))
        manager.append_message(assistant(f"answer {n}"))
    maps: list[int] = []
    real = tree_rows._tool_args

    def counting(entries: list) -> dict:  # type: ignore[type-arg]
        maps.append(len(entries))
        return real(entries)

    monkeypatch.setattr(tree_rows, "_tool_args", counting)
    rows = TreeModel(manager).rows
    texts = [row.text for row in rows[:40]]  # prompts, answers and results
    assert texts[0] == "user: question 0"
    assert any("echo 0" in text for text in texts)  # a result's row still names its call's arguments
    assert maps == []


def test_a_first_search_after_the_work_ahead_reads_no_row_text_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = _session(tmp_path, 200)
    model = TreeModel(manager)  # the work ahead's steps: rows, then every entry described
    list(tree_rows.describe_entries(manager, 100))
    read: list[str] = []
    real = tree_rows.TreeRow.text.fget
    assert real is not None

    def counting(row: tree_rows.TreeRow) -> str:
        read.append(row.id)
        return real(row)

    monkeypatch.setattr(tree_rows.TreeRow, "text", property(counting))
    model.visible()  # the rows on open
    model.set_query("question")
    assert len(model.visible()) == 200
    model.set_query("question 1")  # two words: every row holding both
    assert len(model.visible()) == 119  # 1, 10-19, 100-199, and 21, 31 … 91
    assert read == []  # their search texts were made by the work ahead


def test_the_work_ahead_makes_the_rows_in_pieces_and_keeps_them(tmp_path: Path) -> None:
    manager = _session(tmp_path, 2500)  # 5,000 entries
    pieces = list(tree_rows.prepare_rows(manager))
    assert len(pieces) >= 3  # a screen opened meanwhile waits a piece at most, not the whole build
    first = TreeModel(manager).rows
    assert len(first) == 5000 and TreeModel(manager).rows is first  # kept: a first /tree takes them
    assert list(tree_rows.prepare_rows(manager)) == []  # nothing left to make
