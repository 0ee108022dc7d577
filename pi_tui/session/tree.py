"""The entry tree of a session: ids, parents, the leaf, children, labels and the session name.

Rules:
- Every entry with an id is a node; ``parent_id`` None makes a root.
- The leaf is the last entry (in file order) on load; appending makes a child of the leaf and moves the
  leaf to it; `SessionTree.branch` moves the leaf without writing anything; `reset_leaf` sets it to
  None so the next append starts a new root.
- A parent must come earlier in the file. An entry whose parent is missing (lost to a corrupt line,
  pointing at itself or at a later entry, or no ``parentId`` key at all) is attached, in memory only, to the entry just before it in
  the file, so a conversation stays one conversation; the first entry of a file becomes a root. This
  keeps the tree acyclic and is reported in the load report.
- Children are ordered by timestamp, oldest first (file order breaks ties).
- Labels: the last label entry for a target wins; an empty label clears it.
- The session name is the latest non-empty ``session_info`` name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

from pi_tui.ai.types import AssistantMessage
from pi_tui.session.entries import (
    LabelEntry,
    MessageEntry,
    RawEntry,
    SessionEntry,
    SessionInfoEntry,
    is_assistant_entry,
)
from pi_tui.session.errors import EntryNotFoundError
from pi_tui.session.report import LoadReport, ReattachedEntry

__all__ = ["TreeNode", "SessionTree"]


@dataclass(eq=False)
class TreeNode:
    entry: SessionEntry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None


def _set_parent(entry: SessionEntry, parent_id: str | None) -> None:
    if isinstance(entry, RawEntry):
        entry.data["parentId"] = parent_id
    else:
        entry.parent_id = parent_id


def _has_parent_key(entry: SessionEntry) -> bool:
    """Whether the entry came with a ``parentId`` (null or not); a damaged line may have lost it."""
    if isinstance(entry, RawEntry):
        return "parentId" in entry.data
    return entry.field_is_set("parent_id")


class SessionTree:
    """Entries in file order plus the indexes the tree needs. Mutated only through `add`."""

    def __init__(self) -> None:
        self.entries: list[SessionEntry] = []
        self.by_id: dict[str, SessionEntry] = {}
        self.labels: dict[str, str] = {}
        self.leaf_id: str | None = None
        self._name: str | None = None
        self._has_assistant = False
        # Where each id sits in ``entries``, and for each position the start of its run: the longest
        # stretch of ``entries`` ending there in which every entry's parent is the entry before it.
        # A path is then a few list slices (one per branch point) instead of one step per entry.
        self._index: dict[str, int] = {}
        self._run_start: list[int] = []
        self._duplicates = False  # a duplicate id can reroute (even loop) paths: walked step by step then

    @classmethod
    def from_entries(cls, entries: Iterable[SessionEntry], report: LoadReport | None = None) -> SessionTree:
        """Index loaded entries, repairing missing parents (recorded in ``report``)."""
        tree = cls()
        by_id, index, run_start, kept = tree.by_id, tree._index, tree._run_start, tree.entries
        add = tree.add
        previous_id: str | None = None
        last_id: str | None = None  # the id of the last entry in ``kept`` (None when it has none)
        for entry in entries:
            entry_id = entry.id
            if entry_id is not None:
                parent = entry.parent_id
                # a parent seen before and not itself: the usual case, checked first and cheaply
                if parent is None or parent == entry_id or parent not in by_id:
                    lacks_key = not _has_parent_key(entry)
                    if lacks_key or parent is not None:
                        _set_parent(entry, previous_id)
                        if report is not None:
                            missing = "(no parentId)" if lacks_key else str(parent)
                            report.reattached.append(ReattachedEntry(entry_id, missing, previous_id))
                if entry_id in by_id and report is not None:
                    report.duplicate_ids.append(entry_id)
            if type(entry) is MessageEntry and entry_id is not None and entry_id not in by_id:
                # `add` for a plain message: no label or name to note, so only the indexes change
                position = len(kept)
                run_start.append(
                    run_start[-1] if last_id is not None and entry.parent_id == last_id else position
                )
                kept.append(entry)
                by_id[entry_id] = entry
                index[entry_id] = position
                tree.leaf_id = entry_id
                if not tree._has_assistant and isinstance(entry.message, AssistantMessage):
                    tree._has_assistant = True
            else:
                add(entry)
            if entry_id is not None:
                previous_id = entry_id
            last_id = entry_id
        return tree

    # --- mutation ---------------------------------------------------------------------------------

    def add(self, entry: SessionEntry) -> None:
        """Record an entry (already parented) and make it the leaf."""
        entries, run_start = self.entries, self._run_start
        position = len(entries)
        entry_id = entry.id
        last_id = entries[-1].id if entries else None
        continues = entry_id is not None and last_id is not None and entry.parent_id == last_id
        run_start.append(run_start[-1] if continues else position)
        entries.append(entry)
        if entry_id is None:  # a raw line without an id is kept for the file, outside the tree
            return
        if entry_id in self.by_id:  # a duplicate id replaces the earlier entry: paths through it change
            self._duplicates = True
        self.by_id[entry_id] = entry
        self._index[entry_id] = position
        self.leaf_id = entry_id
        if isinstance(entry, LabelEntry):
            if entry.label:
                self.labels[entry.target_id] = entry.label
            else:
                self.labels.pop(entry.target_id, None)
        elif isinstance(entry, SessionInfoEntry):
            if entry.name and entry.name.strip():
                self._name = entry.name.strip()
        elif not self._has_assistant and is_assistant_entry(entry):
            self._has_assistant = True

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append starts a branch there."""
        if entry_id not in self.by_id:
            raise EntryNotFoundError(entry_id)
        self.leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry: the next append makes a new root."""
        self.leaf_id = None

    # --- queries ----------------------------------------------------------------------------------

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def has_assistant(self) -> bool:
        return self._has_assistant

    def get(self, entry_id: str) -> SessionEntry | None:
        return self.by_id.get(entry_id)

    def path_to(self, leaf_id: str | None) -> list[SessionEntry]:
        """Entries from the root down to ``leaf_id`` (empty for None). Raises for an unknown id."""
        if leaf_id is None:
            return []
        if leaf_id not in self.by_id:
            raise EntryNotFoundError(leaf_id)
        if self._duplicates:
            return self._walk(leaf_id)
        # One slice of ``entries`` per run (see `__init__`), from the leaf's run up to the root's.
        entries, run_start, index = self.entries, self._run_start, self._index
        runs: list[list[SessionEntry]] = []
        steps = 0
        end: int | None = index[leaf_id]
        while end is not None:
            start = run_start[end]
            runs.append(entries[start : end + 1])
            steps += end + 1 - start
            if steps > len(entries):  # parents that loop: the step-by-step walk stops where it repeats
                return self._walk(leaf_id)
            parent = entries[start].parent_id
            end = index.get(parent) if parent is not None else None
        runs.reverse()
        return list(chain.from_iterable(runs))

    def _walk(self, leaf_id: str) -> list[SessionEntry]:
        """`path_to` one parent at a time, stopping at the first entry seen twice."""
        path: list[SessionEntry] = []
        seen: set[str | None] = set()
        current: SessionEntry | None = self.by_id[leaf_id]
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            parent = current.parent_id
            current = self.by_id.get(parent) if parent is not None else None
        path.reverse()
        return path

    def children(self, entry_id: str | None) -> list[SessionEntry]:
        """Direct children of ``entry_id`` (roots for None), oldest first."""
        found = [e for e in self.by_id.values() if e.parent_id == entry_id]
        found.sort(key=lambda e: e.timestamp)
        return found

    def tree(self) -> list[TreeNode]:
        """All entries as nested nodes, children oldest first; roots in the same order."""
        nodes: dict[str, TreeNode] = {}
        order: list[str] = []
        for entry_id, entry in self.by_id.items():  # keyed by entry.id (see `add`)
            nodes[entry_id] = TreeNode(entry, label=self.labels.get(entry_id))
            order.append(entry_id)
        roots: list[TreeNode] = []
        for entry_id in order:
            node = nodes[entry_id]
            parent = node.entry.parent_id
            parent_node = nodes.get(parent) if parent is not None and parent != entry_id else None
            (parent_node.children if parent_node is not None else roots).append(node)
        stack = list(roots)
        while stack:  # iterative: a session can be thousands of entries deep
            node = stack.pop()
            node.children.sort(key=lambda n: n.entry.timestamp)
            stack.extend(node.children)
        roots.sort(key=lambda n: n.entry.timestamp)
        return roots
