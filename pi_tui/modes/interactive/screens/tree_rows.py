"""The rows of the ``/tree`` navigator, computed without Textual (pi 0.87's TreeSelector rules).

Rows come from a depth-first walk of the session tree, children oldest first. Indentation grows only
where a node has several children (a chain stays flat, however long). Each row's text follows pi:
``user: …``, ``assistant: …``, ``[read: path]``, ``[bash]: cmd``, ``[compaction: 12k tokens]``,
``[branch summary]: …``, ``[model: id]``, ``[label: x]`` … cut to 200 characters. Filters, search and
folds decide which rows are visible.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, message_text
from pi_tui.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    ContextTransformEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager

__all__ = [
    "FILTER_MODES",
    "FilterMode",
    "TreeRow",
    "TreeModel",
    "children_for",
    "children_of",
    "describe_entries",
    "entry_kind",
    "entry_text",
    "labels_of",
    "make_row",
    "prepare_children",
    "prepare_rows",
    "row_maker",
]

FilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
FILTER_MODES: tuple[FilterMode, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")
_DEFAULT_HIDDEN = frozenset(
    {"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info", "ephemeral"}
)
MAX_TEXT = 200


class TreeRow:
    """One entry of the tree, with where it sits and what it says.

    ``text`` (pi's one-line description) is made when first read: a first ``/tree`` of a long session
    shows a screenful of rows, so only those are described while the user waits (a search describes
    the rest, unless the work ahead has). ``kind`` and ``hidden_by_default``, which the filters need,
    are known at once.
    """

    __slots__ = (
        "entry",
        "id",
        "parent_id",
        "depth",
        "kind",
        "on_active_path",
        "is_leaf",
        "branch_point",
        "segment_start",
        "hidden_by_default",
        "children",
        "_text",
        "_folded",
        "_describer",
    )

    def __init__(
        self,
        entry: SessionEntry,
        id: str,
        parent_id: str | None,
        depth: int,
        kind: str,
        on_active_path: bool,
        is_leaf: bool,
        branch_point: bool,
        segment_start: bool,
        hidden_by_default: bool,
        children: list[str],
        text: str | None,
        describer: _Describer | None,
    ) -> None:
        self.entry = entry
        self.id = id
        self.parent_id = parent_id
        self.depth = depth
        self.kind = kind  # the entry type, or the message role for message entries
        self.on_active_path = on_active_path
        self.is_leaf = is_leaf
        self.branch_point = branch_point  # has more than one child
        self.segment_start = segment_start  # a root, or a child of a branch point
        self.hidden_by_default = hidden_by_default  # e.g. an assistant message holding only tool calls
        self.children = children
        self._text = text
        self._folded: str | None = None
        self._describer = describer

    @property
    def text(self) -> str:
        """pi's one-line description of the entry (``user: …``, ``[read: path]``, …)."""
        text = self._text
        if text is None:
            describer = self._describer
            text = self._text = describer.text(self.entry) if describer is not None else ""
        return text

    @property
    def folded_text(self) -> str:
        """``text`` in lower case, what a search looks in (with the row's label)."""
        folded = self._folded
        if folded is None:
            folded = self._folded = self.text.lower()
        return folded

    def __repr__(self) -> str:
        return f"TreeRow({self.id!r}, {self.kind!r}, depth={self.depth})"


def _cut(text: str, width: int = MAX_TEXT) -> str:
    # Collapse whitespace only in the part that can be shown: tool outputs run to megabytes.
    text = " ".join(str(text)[: width * 4].split())
    return (text[: width - 1] + "…") if len(text) > width else text


def _tool_text(name: str, args: dict[str, Any]) -> str:
    """pi's short form of a tool call: ``[read: path:1-50]``, ``[bash: cmd…]``, ``[grep: /pat/ in p]``."""
    path = args.get("path") or args.get("file_path") or ""
    if name == "read":
        offset, limit = args.get("offset"), args.get("limit")
        span = ""
        if offset or limit:
            start = int(offset or 1)
            span = f":{start}-{start + int(limit) - 1}" if limit else f":{start}"
        return f"[read: {path}{span}]"
    if name in ("write", "edit", "ls"):
        return f"[{name}: {path or '.'}]"
    if name == "bash":
        command = " ".join(str(args.get("command", "")).split())
        return f"[bash: {command[:50]}{'…' if len(command) > 50 else ''}]"
    if name == "grep":
        return f"[grep: /{args.get('pattern', '')}/ in {path or '.'}]"
    if name == "find":
        return f"[find: {args.get('pattern', '')} in {path or '.'}]"
    raw = json.dumps(args, ensure_ascii=False)
    return f"[{name}: {raw[:40]}{'…' if len(raw) > 40 else ''}]"


def _part_text(part: object) -> str:
    return part.text if isinstance(part, TextContent) else ""


def _only_tool_calls(message: AssistantMessage) -> bool:
    """An answer holding tool calls and no text (hidden by the default filter), as pi decides it."""
    if message.stop_reason in ("aborted", "error"):
        return False
    calls = False
    for block in message.content:  # a plain loop: this runs for every answer of the session
        if isinstance(block, ToolCall):
            calls = True
        elif isinstance(block, TextContent) and block.text.strip():
            return False
    return calls


def entry_kind(entry: SessionEntry) -> tuple[str, bool]:
    """(kind, hidden-by-default) of one entry, as `entry_text` gives them: what the filters need,
    without describing the entry."""
    kind = entry.type
    if kind != "message":
        return kind, kind == "usage"
    if not isinstance(entry, MessageEntry):
        return "system", False
    message = entry.message
    if isinstance(message, AssistantMessage):
        return "assistant", _only_tool_calls(message)
    return message.role, False


def entry_text(
    entry: SessionEntry, tool_args: dict[str, tuple[str, dict[str, Any]]]
) -> tuple[str, str, bool]:
    """(row text, kind, hidden-by-default) for one entry."""
    kind = entry.type
    if kind == "message":
        if not isinstance(entry, MessageEntry):  # a pi system message entry (or a raw one)
            return "[system]", "system", False
        message = entry.message
        role = message.role
        if role == "user":
            return _cut("user: " + message_text(message)), "user", False
        if isinstance(message, AssistantMessage):
            text = " ".join(b.text for b in message.content if b.type == "text").strip()
            if message.stop_reason == "aborted" and not text:
                return "assistant: (aborted)", "assistant", False
            if message.stop_reason == "error":
                return _cut("assistant: " + (message.error_message or "error")), "assistant", False
            return _cut("assistant: " + (text or "(no content)")), "assistant", _only_tool_calls(message)
        if role == "toolResult":
            name, args = tool_args.get(message.tool_call_id, (message.tool_name, {}))
            return _cut(_tool_text(name, args)), "toolResult", False
        if role == "bashExecution":
            return _cut(f"[bash]: {message.command}"), "bashExecution", False
        return _cut(f"[{role}]: " + message_text(message)), role, False
    # By class, not by ``type``: a damaged line of a known type is a `RawEntry` of that type, without the
    # fields, and is shown by its type below.
    if isinstance(entry, CustomMessageEntry):
        content = entry.content
        text = content if isinstance(content, str) else " ".join(_part_text(c) for c in content)
        return _cut(f"[{entry.custom_type}]: {text}"), kind, False
    if isinstance(entry, CompactionEntry):
        tokens = int(entry.tokens_before or 0)
        return f"[compaction: {round(tokens / 1000)}k tokens]", kind, False
    if isinstance(entry, BranchSummaryEntry):
        return _cut(f"[branch summary]: {entry.summary}"), kind, False
    if isinstance(entry, ModelChangeEntry):
        return f"[model: {entry.model_id}]", kind, False
    if isinstance(entry, ThinkingLevelChangeEntry):
        return f"[thinking: {entry.thinking_level}]", kind, False
    if isinstance(entry, CustomEntry):
        return f"[custom: {entry.custom_type}]", kind, False
    if isinstance(entry, LabelEntry):
        return f"[label: {entry.label or ''}]", kind, False
    if kind == "session_info":
        return f"[title: {entry.name if isinstance(entry, SessionInfoEntry) else ''}]", kind, False
    if isinstance(entry, ContextEditEntry):
        verb = "omit" if entry.replacement is None else "replace"
        return f"[context {verb}: {entry.target_id}]", kind, False
    if isinstance(entry, ContextTransformEntry):
        return f"[context: {entry.transformer_name}]", kind, False
    if kind == "ephemeral":
        return "[ephemeral]", kind, False
    return f"[{kind}]", kind, kind == "usage"


# Per session: entry id -> (the entry, its row text, kind and hidden flag). Entries are never changed
# in place, so a row's text is computed once per entry, not on every open of /tree (a 20,000-entry
# session costs ~0.3 s to describe and ~20 ms to look up).
_ROW_TEXTS: weakref.WeakKeyDictionary[
    SessionManager, dict[str | None, tuple[SessionEntry, tuple[str, str, bool]]]
] = weakref.WeakKeyDictionary()


# Per session: (entry count, last entry, leaf) -> the rows built for them (rows are never changed).
RowsKey = tuple[int, int | None, str | None]
"""What kept rows were made for (`_rows_key`): the entries' count, the last entry's identity, the leaf."""
KeptRows = tuple[list["TreeRow"], dict[str, "TreeRow"], dict[str, str], dict[str, str]]
"""A `TreeModel`'s rows, rows by id, labels and label times."""
_ROWS: weakref.WeakKeyDictionary[SessionManager, tuple[RowsKey, KeptRows]] = weakref.WeakKeyDictionary()


def _texts_of(session: SessionManager) -> dict[str | None, tuple[SessionEntry, tuple[str, str, bool]]]:
    try:
        return _ROW_TEXTS.setdefault(session, {})
    except TypeError:  # not weak-referenceable or unhashable: computed each time
        return {}


def _tool_args(entries: list[SessionEntry]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Tool call id → (tool name, arguments), for the rows of tool results."""
    tool_args: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.message.role == "assistant":
            for block in entry.message.content:
                if block.type == "toolCall":
                    tool_args[block.id] = (block.name, block.arguments or {})
    return tool_args


def _describe(
    texts: dict[str | None, tuple[SessionEntry, tuple[str, str, bool]]],
    entries: list[SessionEntry],
    tool_args: dict[str, tuple[str, dict[str, Any]]] | None,
    all_entries: list[SessionEntry],
) -> dict[str, tuple[str, dict[str, Any]]] | None:
    """Describe the ``entries`` whose text ``texts`` lacks; returns the tool calls it looked up (made
    from ``all_entries`` when ``tool_args`` is None and some entry needed describing)."""
    for entry in entries:
        if entry.id is None:
            continue
        known = texts.get(entry.id)
        if known is not None and known[0] is entry:
            continue
        if tool_args is None:
            tool_args = _tool_args(all_entries)
        texts[entry.id] = (entry, entry_text(entry, tool_args))
    return tool_args


def _is_tool_result(entry: SessionEntry) -> TypeGuard[MessageEntry]:
    return isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)


class _Describer:
    """Describes entries on demand for the rows of one build, through the session's kept texts."""

    __slots__ = ("entries", "session", "texts", "tool_args")

    def __init__(
        self,
        session: SessionManager,
        texts: dict[str | None, tuple[SessionEntry, tuple[str, str, bool]]],
        entries: list[SessionEntry],
    ) -> None:
        self.session = session
        self.texts = texts
        self.entries = entries
        self.tool_args: dict[str, tuple[str, dict[str, Any]]] | None = None

    def text(self, entry: SessionEntry) -> str:
        known = self.texts.get(entry.id)
        if known is None or known[0] is not entry:
            tool_args = self.tool_args
            if tool_args is None:
                if not _is_tool_result(entry):
                    tool_args = {}  # only a tool result's row names a call
                elif (call := self._call_above(entry, entry.message.tool_call_id)) is not None:
                    tool_args = {call[0]: call[1]}
                else:
                    tool_args = self.tool_args = _tool_args(self.entries)
            known = self.texts[entry.id] = (entry, entry_text(entry, tool_args))
        return known[1][0]

    def _call_above(self, entry: MessageEntry, call_id: str) -> tuple[str, tuple[str, dict[str, Any]]] | None:
        """For a tool result, its call ``call_id``, from the answers just above it (a screenful of rows
        needs a few, not a map of the whole session's calls); None when not found nearby."""
        parent = entry.parent_id
        for _ in range(64):
            above = self.session.get_entry(parent) if parent is not None else None
            if above is None:
                return None
            if isinstance(above, MessageEntry) and isinstance(above.message, AssistantMessage):
                for block in above.message.content:
                    if isinstance(block, ToolCall) and block.id == call_id:
                        return call_id, (block.name, block.arguments or {})
            parent = above.parent_id
        return None


def _rows_key(session: SessionManager, entries: list[SessionEntry]) -> RowsKey:
    """What the kept rows of ``session`` were made for: its ``entries`` (by count and last) and leaf."""
    return (len(entries), id(entries[-1]) if entries else None, session.get_leaf_id())


def children_of(entries: list[SessionEntry]) -> dict[str | None, list[SessionEntry]]:
    """Parent id → its children, oldest first (None → the roots)."""
    children: dict[str | None, list[SessionEntry]] = {}
    for entry in entries:
        if entry.id is None:
            continue
        siblings = children.get(entry.parent_id)
        if siblings is None:
            children[entry.parent_id] = [entry]
        else:
            siblings.append(entry)
    for siblings in children.values():
        if len(siblings) > 1:
            siblings.sort(key=lambda e: e.timestamp or "")
    return children


# Per session: (entry count, last entry) -> the children of each entry (`children_of`), for a first
# ``/tree`` (its rows near the leaf, then every row) made ahead of it by the work ahead (~9 ms at 20k).
_CHILDREN: weakref.WeakKeyDictionary[
    SessionManager, tuple[tuple[int, int | None], dict[str | None, list[SessionEntry]]]
] = weakref.WeakKeyDictionary()


def children_for(
    session: SessionManager, entries: list[SessionEntry]
) -> dict[str | None, list[SessionEntry]]:
    """`children_of` the session's ``entries``, kept per session while its entries are the same (the
    lists are never changed after they are made)."""
    key = (len(entries), id(entries[-1]) if entries else None)
    try:
        kept = _CHILDREN.get(session)
    except TypeError:  # not weak-referenceable or unhashable: made each time
        return children_of(entries)
    if kept is not None and kept[0] == key:
        return kept[1]
    children = children_of(entries)
    _CHILDREN[session] = (key, children)
    return children


def prepare_children(session: SessionManager) -> Iterator[int]:
    """Make the children index a first ``/tree`` of ``session`` (a `SessionManager`) starts from, ahead
    of it. One piece."""
    children_for(session, session.get_entries())
    yield 0


def make_row(
    entry: SessionEntry,
    depth: int,
    segment_start: bool,
    kids: list[SessionEntry],
    on_active_path: bool,
    leaf: str | None,
    texts: dict[str | None, tuple[SessionEntry, tuple[str, str, bool]]],
    describer: _Describer,
) -> TreeRow:
    """The row of ``entry``, ``depth`` deep, with children ``kids`` (its text from ``texts`` when the
    entry was described before, else made when first read)."""
    entry_id = entry.id or ""  # never empty: the rows are of entries with ids (`children_of`)
    known = texts.get(entry.id)
    text: str | None
    if known is not None and known[0] is entry:
        text, kind, hidden = known[1]
    else:
        text = None
        kind, hidden = entry_kind(entry)
    branches = len(kids) > 1
    return TreeRow(
        entry,
        entry_id,
        entry.parent_id,
        depth,
        kind,
        on_active_path,
        entry_id == leaf,
        branches,
        segment_start,
        hidden,
        ([k.id or "" for k in kids] if branches else [kids[0].id or ""]) if kids else [],
        text,
        describer,
    )


def row_maker(
    session: SessionManager, entries: list[SessionEntry]
) -> tuple[dict[str | None, tuple[SessionEntry, tuple[str, str, bool]]], _Describer]:
    """The described texts kept for ``session`` and a describer for rows made now (`make_row`)."""
    texts = _texts_of(session)
    return texts, _Describer(session, texts, entries)


def labels_of(
    session: SessionManager, entries: list[SessionEntry], known: Callable[[str], bool]
) -> tuple[dict[str, str], dict[str, str]]:
    """(entry id → its label, entry id → when it was set), for the ids ``known`` accepts. Only entries a
    label entry names can have one; the time is the latest label entry's (for Shift+T)."""
    label_times: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry, LabelEntry):
            label_times[entry.target_id] = str(entry.timestamp or "")
    labels = {target: session.get_label(target) for target in label_times}
    return {k: v for k, v in labels.items() if v and known(k)}, label_times


def prepare_rows(session: SessionManager) -> Iterator[int]:
    """Build the rows a first ``/tree`` of ``session`` (a `SessionManager`) shows, ahead of it; the
    session's next `TreeModel` takes them as they are. In pieces of ~2,000 rows (~5 ms): a screen being
    opened meanwhile does not share the interpreter with the whole build (~55-80 ms at 20k)."""
    yield from TreeModel(session, make_rows=False).build_in_steps()


def describe_entries(session: SessionManager, chunk: int) -> Iterator[int]:
    """Describe every entry of ``session`` ahead of a search (which reads every row's text), in
    pieces of ``chunk`` entries; yields how many are done."""
    entries = session.get_entries()
    texts = _texts_of(session)
    tool_args: dict[str, tuple[str, dict[str, Any]]] | None = None
    for start in range(0, len(entries), chunk):
        tool_args = _describe(texts, entries[start : start + chunk], tool_args, entries)
        yield start + chunk
    # The rows kept for the session (made before their entries were described) read their text in
    # lower case for a search: made here too, or the first search key does it for every row (~20 ms).
    try:
        kept = _ROWS.get(session)
    except TypeError:
        kept = None
    if kept is not None:
        rows = kept[1][0]
        for start in range(0, len(rows), chunk):
            for row in rows[start : start + chunk]:
                row.folded_text  # noqa: B018 - made and kept by the property
            yield len(entries)


class TreeModel:
    """The session tree as rows, plus filter, search and fold state.

    Args:
        session: The `SessionManager`.
        mode: The filter.
        make_rows: Make (or take) every row now; without, none yet (the caller then asks for
            `show_near_leaf`, `rebuild` or `build_in_steps`).
    """

    def __init__(
        self, session: SessionManager, mode: FilterMode = "default", *, make_rows: bool = True
    ) -> None:
        self.session = session
        self.mode: FilterMode = mode
        self.query = ""
        self.folded: set[str] = set()
        self.rows: list[TreeRow] = []
        self.by_id: dict[str, TreeRow] = {}
        self.labels: dict[str, str] = {}
        self.label_times: dict[str, str] = {}
        self._searched: tuple[str, FilterMode, list[TreeRow]] | None = None  # the last unfolded search
        # The rows each filter shows (unfolded, unsearched), for the rows and labels they were made from.
        self._filtered: tuple[list[TreeRow], dict[str, str], dict[FilterMode, list[TreeRow]]] | None = None
        self.entry_count = 0
        """Entries in the tree (all of them, also while only the rows near the leaf are made)."""
        self.partial = False
        """Whether ``rows`` holds only the rows near the leaf (`show_near_leaf`), not the whole tree."""
        if make_rows:
            self.rebuild()

    def rebuild(self) -> None:
        """Re-read the tree (after a label, a navigation or a new entry).

        The rows are kept per session while it has the same entries (labels are entries too) and the
        same leaf: opening ``/tree`` again on an unchanged session takes them as they are.
        """
        self._searched = None
        for _ in self.build_in_steps():
            pass

    def build_in_steps(self, chunk: int = 2000) -> Iterator[int]:
        """`rebuild` in pieces: yields after every ``chunk`` rows made (nothing when the rows kept for
        the session are taken); the rows change at the end only."""
        if self._take_kept():
            return
        entries = self.session.get_entries()
        key = _rows_key(self.session, entries)  # an entry appended during the build makes them stale
        yield from self._build(entries, chunk)
        try:
            _ROWS[self.session] = (key, (self.rows, self.by_id, self.labels, self.label_times))
        except TypeError:
            pass

    def _take_kept(self) -> bool:
        """Take the rows kept for the session as it is now; False when there are none."""
        try:
            kept = _ROWS.get(self.session)
        except TypeError:  # not weak-referenceable or unhashable: built each time
            return False
        if kept is None or kept[0] != _rows_key(self.session, self.session.get_entries()):
            return False
        self.rows, self.by_id, self.labels, self.label_times = kept[1]
        self.entry_count = len(self.rows)
        self.partial = False
        self._searched = None
        return True

    def _build(self, entries: list[SessionEntry], chunk: int) -> Iterator[int]:
        # Once per entry of a session that may hold 100k: plain loops, rows made positionally, texts
        # taken where the session has them and otherwise made when a row is first read.
        children = children_for(self.session, entries)
        yield 0
        texts = _texts_of(self.session)
        describer = _Describer(self.session, texts, entries)
        leaf = self.session.get_leaf_id()
        active = {e.id for e in self.session.get_branch()}
        yield 0
        rows: list[TreeRow] = []
        append = rows.append
        no_kids: list[SessionEntry] = []
        roots = children.get(None, [])
        stack: list[tuple[SessionEntry, int, bool]] = [
            (e, 1 if len(roots) > 1 else 0, True) for e in reversed(roots)
        ]
        pop, push = stack.pop, stack.append
        next_piece = chunk
        while stack:
            entry, depth, segment_start = pop()
            kids = children.get(entry.id, no_kids)
            append(make_row(entry, depth, segment_start, kids, entry.id in active, leaf, texts, describer))
            if kids:
                branches = len(kids) > 1
                child_depth = depth + 1 if branches else depth
                for kid in reversed(kids):
                    push((kid, child_depth, branches))
            if len(rows) >= next_piece:
                next_piece += chunk
                yield len(rows)
        by_id = {row.id: row for row in rows}
        yield len(rows)
        labels, label_times = labels_of(self.session, entries, by_id.__contains__)
        self.rows, self.by_id, self.labels, self.label_times = rows, by_id, labels, label_times
        self.entry_count = len(rows)
        self.partial = False

    def show_near_leaf(self, before: int, after: int) -> bool:
        """Take only the rows around the leaf, up to ``before`` visible rows above it and ``after``
        below (`tree_window`), when the whole tree's rows are not made yet; `rebuild` makes them all.
        False (nothing changed) when they are made, or when the leaf's row would not be shown."""
        if self._take_kept():
            return False
        from .tree_window import rows_near_leaf

        entries = self.session.get_entries()
        get_entry = self.session.get_entry
        self.labels, self.label_times = labels_of(self.session, entries, lambda k: get_entry(k) is not None)
        window = rows_near_leaf(self.session, entries, before, after, self._passes_filter)  # reads labels
        if window is None:
            return False
        self.rows = window
        self.by_id = {row.id: row for row in window}
        self.entry_count = len(entries) - sum(1 for entry in entries if entry.id is None)
        self.partial = True
        return True

    # --- visibility ------------------------------------------------------------------------------

    def _passes_filter(self, row: TreeRow) -> bool:
        if row.kind == "usage":
            return False
        mode = self.mode
        if mode == "all":
            return True
        if mode == "user-only":
            return row.kind == "user"
        if mode == "labeled-only":
            return row.id in self.labels
        if row.kind in _DEFAULT_HIDDEN:
            return False
        if row.hidden_by_default and not row.is_leaf:
            return False
        return not (mode == "no-tools" and row.kind == "toolResult")

    def _matches(self, row: TreeRow, tokens: list[str]) -> bool:
        """Every search word is in the row's text or its label (words hold no spaces, so looking in
        each is the same as looking in the two joined)."""
        label = self.labels.get(row.id)
        text = row.folded_text
        if label is None:
            return all(token in text for token in tokens)
        label = label.lower()
        return all(token in text or token in label for token in tokens)

    def _search(self, rows: list[TreeRow], tokens: list[str]) -> list[TreeRow]:
        """The ``rows`` that `_matches` ``tokens``; one word and no labels (the usual search) in one
        pass over the texts, without a call per row."""
        if len(tokens) == 1 and not self.labels:
            token = tokens[0]
            return [row for row in rows if token in row.folded_text]
        return [row for row in rows if self._matches(row, tokens)]

    def filtered(self) -> list[TreeRow]:
        """The rows the filter shows, with nothing folded or searched (do not change the list).

        Kept per filter while the rows and labels are the same: a filter key pressed again, or back,
        on a 20k-entry tree is a lookup instead of a pass over every row."""
        rows, labels = self.rows, self.labels
        kept = self._filtered
        if kept is None or kept[0] is not rows or kept[1] is not labels:
            kept = self._filtered = (rows, labels, {})
        out = kept[2].get(self.mode)
        if out is None:
            passes = self._passes_filter
            out = kept[2][self.mode] = [row for row in rows if passes(row)]
        return out

    def visible(self) -> list[TreeRow]:
        """Rows to show, in order: filtered, searched, and without the descendants of folded rows.

        Typing on (the query grows at its end, same filter, no folds) only narrows the last search's
        rows: a row matching every word of the longer query matches every word of the shorter one."""
        tokens = self.query.lower().split()
        searched = self._searched
        if (
            not self.folded
            and tokens
            and searched is not None
            and self.query.startswith(searched[0])
            and searched[1] == self.mode
        ):
            out = self._search(searched[2], tokens)
        elif not self.folded:
            filtered = self.filtered()
            out = self._search(filtered, tokens) if tokens else list(filtered)
        else:
            out = []
            folded_under: set[str] = set()  # folded rows and all below them (rows come parent first)
            for row in self.rows:
                if folded_under and row.parent_id in folded_under:
                    folded_under.add(row.id)
                    continue
                if row.id in self.folded:
                    folded_under.add(row.id)
                if self._passes_filter(row) and (not tokens or self._matches(row, tokens)):
                    out.append(row)
        self._searched = (self.query, self.mode, out) if not self.folded else None
        return out

    def set_mode(self, mode: FilterMode) -> None:
        """A filter change resets the folds, as in pi."""
        self.mode = mode
        self.folded.clear()

    def set_query(self, query: str) -> None:
        """A search change resets the folds, as in pi."""
        self.query = query
        self.folded.clear()

    def foldable(self, row: TreeRow) -> bool:
        return row.segment_start and bool(row.children)

    def segment_start_of(self, row_id: str) -> TreeRow | None:
        """The start of the branch segment holding ``row_id`` (itself if it is one)."""
        row = self.by_id.get(row_id)
        while row is not None and not row.segment_start:
            row = self.by_id.get(row.parent_id) if row.parent_id else None
        return row

    def leaving(self, target_id: str | None) -> list[str]:
        """Entry ids on the active path that moving to ``target_id`` would leave behind."""
        keep = {e.id for e in self.session.get_branch(target_id)} if target_id else set()
        return [e.id or "" for e in self.session.get_branch() if e.id not in keep]
