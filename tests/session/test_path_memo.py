"""`SessionTree.path_to` joins runs of entries whose parent is the entry before them (slices of the
file order); the result must equal a plain walk from the leaf to the root, whatever the tree's shape."""

from __future__ import annotations

import random

import pytest

from pi_tui.ai.types import UserMessage
from pi_tui.session.entries import LabelEntry, MessageEntry, RawEntry, SessionEntry
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


def _message(entry_id: str, parent: str | None) -> MessageEntry:
    return MessageEntry(
        id=entry_id,
        parent_id=parent,
        timestamp="2026-11-24T18:00:00.000Z",
        message=UserMessage(content="hi", timestamp=0),
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


@pytest.mark.parametrize("seed", range(6))
def test_paths_of_a_loaded_tree_equal_a_plain_walk(seed: int) -> None:
    # file order with branches, lines without an id, a parent given later in the file or not at all
    # (repaired to the entry before), a self-parent, and parents that loop among added entries
    rng = random.Random(seed)
    entries: list[SessionEntry] = []
    ids: list[str] = []
    for n in range(400):
        roll = rng.random()
        if roll < 0.05:
            entries.append(RawEntry({"type": "odd"}, '{"type":"odd"}'))
            continue
        entry_id = f"e{n}"
        if not ids or roll < 0.08:
            parent = None
        elif roll < 0.75:
            parent = ids[-1]
        elif roll < 0.8:
            parent = f"e{n + 5}"  # not seen yet: reattached to the entry before
        elif roll < 0.82:
            parent = entry_id
        else:
            parent = rng.choice(ids)
        entries.append(_message(entry_id, parent) if rng.random() < 0.7 else _entry(entry_id, parent))
        ids.append(entry_id)
    tree = SessionTree.from_entries(entries)
    for leaf in ids:
        assert [e.id for e in tree.path_to(leaf)] == _walk(tree, leaf), (seed, leaf)
    # parents that loop (only `add` can make them): the path stops where the walk repeats
    tree.add(_entry("x1", "x2"))
    tree.add(_entry("x2", "x1"))
    tree.add(_entry("x3", "x2"))
    for leaf in ("x1", "x2", "x3", ids[-1]):
        assert [e.id for e in tree.path_to(leaf)] == _walk(tree, leaf), (seed, leaf)
    # the path is made of the tree's own entry objects
    assert all(e is tree.by_id[e.id] for e in tree.path_to(ids[-1]) if e.id is not None)
