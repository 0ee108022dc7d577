"""The ``/tree`` rows around the leaf, made without making the rows of the whole tree.

A first ``/tree`` of a 20,000-entry session opened before the work ahead has made its rows would wait
~55 ms for all of them (and ~5–15 ms more to filter them), though it shows one screenful, at the leaf.
`rows_near_leaf` makes only the rows next to the leaf in the tree's order (depth first, children oldest
first, as `TreeModel` orders them), walking from the leaf to the row before or after each row:

- before a row comes its parent when it is the first child; else the last row of the previous
  sibling's subtree (from that sibling, the newest child, repeatedly);
- after a row comes its first child; else the next sibling of the row or of its nearest ancestor that
  has one.

A row's depth follows from the step: one level deeper below a node with several children. The walk needs
the children of every entry (one pass over the entries, ~9 ms at 20k, made ahead by the work ahead when
it had the time: `tree_rows.children_for`) and the leaf's depth (one pass over its path); each row then
costs a step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .tree_rows import TreeRow, children_for, make_row, row_maker

if TYPE_CHECKING:
    from pi_tui.session.entries import SessionEntry
    from pi_tui.session.manager import SessionManager

__all__ = ["rows_near_leaf"]

MAX_STEPS = 200_000
"""Steps walked before giving up (the caller then makes every row): far beyond any real session's need."""


def _index_in(siblings: list[SessionEntry], entry: SessionEntry) -> int:
    if len(siblings) == 1 and siblings[0] is entry:
        return 0
    for index, sibling in enumerate(siblings):
        if sibling is entry:
            return index
    raise LookupError(entry.id)  # not in the tree's order (a duplicate id replaced it)


class _Walk:
    """Steps through the tree's order from one entry to the one before or after it, with depths.

    A place is (entry, depth, index of the entry in the leaf's path or -1): along the path, parents come
    from it (no lookup), and a row is on the active path when it is the path's entry at its index.
    """

    def __init__(
        self,
        children: dict[str | None, list[SessionEntry]],
        path: list[SessionEntry],
        get_entry: Callable[[str], SessionEntry | None],
        after_leaf: tuple[SessionEntry, int, int] | None,
    ) -> None:
        self.children = children
        self.path = path
        self.get_entry = get_entry
        self.after_leaf = after_leaf  # where the walk on from the leaf's subtree goes (known ahead)
        self.steps = 0

    def _index(self, siblings: list[SessionEntry], entry: SessionEntry) -> int:
        self.steps += 1
        return _index_in(siblings, entry)

    def _parent(self, entry: SessionEntry, at: int) -> tuple[SessionEntry | None, int]:
        """The parent of ``entry`` (the path's entry at ``at``, or -1), and the parent's path index."""
        if at > 0:
            return self.path[at - 1], at - 1
        return (self.get_entry(entry.parent_id) if entry.parent_id is not None else None), -1

    def before(self, entry: SessionEntry, depth: int, at: int) -> tuple[SessionEntry, int, int] | None:
        self.steps += 1
        siblings = self.children.get(entry.parent_id, [])
        index = self._index(siblings, entry)
        if index == 0:
            parent, parent_at = self._parent(entry, at)
            if parent is None:
                return None  # the first root
            return parent, depth - (1 if len(siblings) > 1 else 0), parent_at
        node = siblings[index - 1]
        while True:  # the last row of the previous sibling's subtree (never on the path: it is before it)
            self.steps += 1
            kids = self.children.get(node.id)
            if not kids:
                return node, depth, -1
            depth += 1 if len(kids) > 1 else 0
            node = kids[-1]

    def after(self, entry: SessionEntry, depth: int, at: int) -> tuple[SessionEntry, int, int] | None:
        kids = self.children.get(entry.id)
        if kids:  # the path ends at the leaf: what follows any row is off it
            return kids[0], depth + (1 if len(kids) > 1 else 0), -1
        if at == len(self.path) - 1:
            return self.after_leaf
        node: SessionEntry | None = entry
        while node is not None:  # the next sibling of the entry or of its nearest ancestor with one
            self.steps += 1
            siblings = self.children.get(node.parent_id, [])
            if len(siblings) > 1:
                index = self._index(siblings, node)
                if index + 1 < len(siblings):
                    return siblings[index + 1], depth, -1
                depth -= 1
            node, at = self._parent(node, at)
        return None


def rows_near_leaf(
    session: SessionManager,
    entries: list[SessionEntry],
    before: int,
    after: int,
    shown: Callable[[TreeRow], bool],
) -> list[TreeRow] | None:
    """The rows from ``before`` rows that ``shown`` accepts above the leaf's row to ``after`` such rows
    below it, in the tree's order, as `TreeModel` makes them.

    Args:
        session: The `SessionManager`.
        entries: Its entries.
        before: Shown rows wanted above the leaf.
        after: Shown rows wanted below it.
        shown: Whether a row passes the filter.

    Returns:
        The rows (the hidden ones between the shown ones included); None when the session has no leaf,
        its row would not be shown and rows follow it (a first open highlights the tree's last shown
        row then), or the walk went on too long: the caller then makes every row.
    """
    leaf_id = session.get_leaf_id()
    path = session.get_branch()
    if leaf_id is None or not path or path[-1].id != leaf_id:
        return None
    leaf = path[-1]
    children = children_for(session, entries)
    get_children = children.get
    roots = get_children(None, [])
    depth = 1 if len(roots) > 1 else 0
    # One pass down the path: the leaf's depth (one level deeper below each branch point), and the row
    # after the leaf's subtree: the next sibling of the deepest path entry that has one.
    after_leaf: tuple[SessionEntry, int, int] | None = None
    if len(roots) > 1 and roots[-1] is not path[0]:
        after_leaf = (roots[_index_in(roots, path[0]) + 1], depth, -1)
    for index in range(len(path) - 1):
        kids = get_children(path[index].id)
        if kids is not None and len(kids) > 1:
            depth += 1
            on_path = path[index + 1]
            if kids[-1] is not on_path:
                after_leaf = (kids[_index_in(kids, on_path) + 1], depth, -1)
    texts, describer = row_maker(session, entries)
    no_kids: list[SessionEntry] = []

    def row(entry: SessionEntry, at: int, path_index: int) -> TreeRow:
        parent = entry.parent_id
        segment_start = parent is None or len(get_children(parent, no_kids)) > 1
        kids = get_children(entry.id, no_kids)
        return make_row(entry, at, segment_start, kids, path_index >= 0, leaf_id, texts, describer)

    last = len(path) - 1
    leaf_row = row(leaf, depth, last)
    walk = _Walk(children, path, session.get_entry, after_leaf)
    above: list[TreeRow] = []
    below: list[TreeRow] = []
    ancestor = last - 1  # the leaf's ancestors come in this order, nearest first, walking back
    try:
        for out, wanted, step in ((above, before, walk.before), (below, after, walk.after)):
            found = 0
            place: tuple[SessionEntry, int, int] | None = (leaf, depth, last)
            while found < wanted and place is not None:
                place = step(*place)
                if place is None:
                    break
                if step == walk.before and ancestor >= 0 and place[0] is path[ancestor]:
                    place = (place[0], place[1], ancestor)
                    ancestor -= 1
                made = row(*place)
                out.append(made)
                found += shown(made)
                if walk.steps > MAX_STEPS:
                    return None
    except LookupError:
        return None
    if below and not shown(leaf_row):
        return None  # the cursor would go to the tree's last shown row, which may be far below
    above.reverse()
    return [*above, leaf_row, *below]
