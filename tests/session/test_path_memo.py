"""`SessionTree.path_to` reuses the last path it built; the result must equal a plain walk to the root."""

from __future__ import annotations

import random

import pytest

from pi_tui.session.entries import LabelEntry
from pi_tui.session.tree import SessionTree


def _walk(tree: SessionTree, leaf_id: str) -> list[str]:
    path: list[str] = []
    current = tree.by_id.get(leaf_id)
    while current is not None and current.id not in path:
        path.append(current.id)  # type: ignore[arg-type]
        current = tree.by_id.get(current.parent_id) if current.parent_id is not None else None
    return path[::-1]


def _entry(entry_id: str, parent: str | None) -> LabelEntry:
    return LabelEntry(
        id=entry_id, parent_id=parent, timestamp="2026-11-24T18:00:00.000Z", target_id="x", label=None
    )


@pytest.mark.parametrize("seed", range(6))
def test_paths_equal_a_plain_walk_while_the_tree_grows_and_branches(seed: int) -> None:
    rng = random.Random(seed)
    tree = SessionTree()
    ids: list[str] = []
    for n in range(300):
        roll = rng.random()
        if ids and roll < 0.05:
            entry_id = rng.choice(ids)  # a duplicate id replaces the earlier entry
        else:
            entry_id = f"e{n}"
        parent = None if not ids else (ids[-1] if roll < 0.8 else rng.choice(ids))
        if parent == entry_id:
            parent = None
        tree.add(_entry(entry_id, parent))
        ids.append(entry_id)
        for leaf in (entry_id, rng.choice(ids)):
            got = [e.id for e in tree.path_to(leaf)]
            assert got == _walk(tree, leaf), (seed, n, leaf)


def test_the_returned_path_is_the_callers_to_change() -> None:
    tree = SessionTree()
    tree.add(_entry("a", None))
    tree.add(_entry("b", "a"))
    first = tree.path_to("b")
    first.clear()
    assert [e.id for e in tree.path_to("b")] == ["a", "b"]
