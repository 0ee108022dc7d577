"""The ``/tree`` rows near the leaf, made without the whole tree's rows, are exactly the rows the whole
tree has there: same order, depths, marks and filter, in every filter mode, wherever the leaf is."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.strip import Strip

from pi_tui.ai.types import ToolCall
from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._rowlist import RowList
from pi_tui.modes.interactive.screens.tree_rows import (
    FILTER_MODES,
    TreeModel,
    TreeRow,
    children_for,
    prepare_children,
)
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager
from tests.session.helpers import assistant, tool_result, user

from ..helpers import until
from .helpers import HostApp


def _random_tree(tmp_path: Path, seed: int, entries: int) -> SessionManager:
    """Prompts, answers, tool calls and results, labels and model changes, with branches made by going
    back to a random earlier entry now and then (and a second root once)."""
    rng = random.Random(seed)
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path / str(seed))
    made = 0
    while made < entries:
        roll = rng.random()
        ids = [e.id for e in manager.get_entries() if e.id is not None]
        if ids and roll < 0.08:
            manager.branch(rng.choice(ids))
        elif ids and roll < 0.09:
            manager.reset_leaf()  # a second root
        elif ids and roll < 0.13:
            manager.append_label(rng.choice(ids), f"label {made}")
            made += 1
        elif roll < 0.16:
            manager.append_model_change("p", f"m{made}")
            made += 1
        elif roll < 0.35:
            call = f"call_{made}"
            manager.append_message(assistant(calls=[ToolCall(id=call, name="read", arguments={"path": "x"})]))
            manager.append_message(tool_result(call, "x"))
            made += 2
        elif roll < 0.65:
            manager.append_message(user(f"question {made}"))
            made += 1
        else:
            manager.append_message(assistant(f"answer {made}"))
            made += 1
    return manager


def _shape(row: TreeRow) -> tuple[object, ...]:
    return (
        row.id,
        row.parent_id,
        row.depth,
        row.kind,
        row.on_active_path,
        row.is_leaf,
        row.branch_point,
        row.segment_start,
        row.hidden_by_default,
        tuple(row.children),
    )


def test_the_rows_near_the_leaf_are_the_whole_trees_rows_there(tmp_path: Path) -> None:
    checked = 0
    for seed in range(6):
        manager = _random_tree(tmp_path, seed, 160)
        rng = random.Random(seed)
        ids = [e.id for e in manager.get_entries() if e.id is not None]
        for leaf in [manager.get_leaf_id(), *rng.sample(ids, 6)]:
            assert leaf is not None
            manager.branch(leaf)
            nears = {mode: TreeModel(manager, mode, make_rows=False) for mode in FILTER_MODES}
            windows = {mode: near.show_near_leaf(7, 5) for mode, near in nears.items()}  # before the whole
            for mode, near in nears.items():
                if not windows[mode]:
                    assert not near.partial
                    continue  # the leaf's row is hidden with rows after it: the whole tree is made
                whole = TreeModel(manager, mode)
                assert near.partial and not whole.partial
                start = next(i for i, row in enumerate(whole.rows) if row.id == near.rows[0].id)
                expected = whole.rows[start : start + len(near.rows)]
                assert [_shape(r) for r in near.rows] == [_shape(r) for r in expected], (seed, leaf, mode)
                assert near.entry_count == len(whole.rows)
                assert near.labels == whole.labels
                shown = [row.id for row in near.visible()]
                everything = [row.id for row in whole.visible()]
                at = everything.index(shown[0])
                assert everything[at : at + len(shown)] == shown
                leaf_at = next((i for i, row_id in enumerate(everything) if row_id == leaf), None)
                if leaf_at is not None:  # as many shown rows as asked for, where the tree has them
                    assert shown.index(leaf) == min(7, leaf_at)
                    assert len(shown) - shown.index(leaf) - 1 == min(5, len(everything) - leaf_at - 1)
                checked += 1
    assert checked > 100  # the rest: a hidden leaf with rows after it (user-only, labelled-only)


def test_a_long_chain_gives_a_screenful_at_its_end_without_making_every_row(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path)
    for n in range(3000):
        manager.append_message(user(f"question {n}"))
    model = TreeModel(manager, make_rows=False)
    assert model.show_near_leaf(40, 40)
    assert len(model.rows) == 41 and model.rows[-1].is_leaf
    assert model.entry_count == 3000


def test_the_children_index_made_ahead_is_kept_while_the_entries_are_the_same(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path)
    for n in range(50):
        manager.append_message(user(f"question {n}"))
    assert list(prepare_children(manager)) == [0]  # the work ahead's piece
    made = children_for(manager, manager.get_entries())
    assert children_for(manager, manager.get_entries()) is made  # a first /tree takes it as it is
    manager.branch(manager.get_entries()[10].id or "")
    manager.append_message(user("a branch"))
    again = children_for(manager, manager.get_entries())
    assert again is not made and len(again[manager.get_entries()[10].id]) == 2


async def test_the_first_frame_of_a_first_tree_shows_the_leaf_and_the_last_row_is_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path)
    for n in range(300):
        manager.append_message(user(f"question {n}"))
        manager.append_message(assistant(f"answer {n}"))
    path = manager.path
    manager.close()
    session = create_session(parse_args(["--session", str(path), "--provider", "faux"]), tmp_path).session
    drawn: list[tuple[int, int, int, int]] = []  # (first row in view, cursor, rows in view, rows) a pass
    real = RowList.render_lines

    def watching(self: RowList, crop: Region) -> list[Strip]:
        drawn.append(
            (int(self.scroll_offset.y), self.cursor, self.scrollable_content_region.height, self.count)
        )
        return real(self, crop)

    monkeypatch.setattr(RowList, "render_lines", watching)
    app = HostApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await SCREEN_COMMANDS["tree"](app, "")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TreeScreen)
        top, cursor, height, count = drawn[0]
        assert cursor == count - 1  # the leaf (the last row of this one-branch session) …
        assert top <= cursor < top + height  # … is in view in the very first frame
        await until(pilot, lambda: not screen.model.partial)
        await pilot.pause()
        listing = screen.query_one(RowList)
        assert listing.scrollable_content_region.height == listing.size.height  # no scrollbar row
        last_line = listing.render_line(listing.size.height - 1).text
        assert "answer 299" in last_line
