"""Reading a session's active path the way compaction needs it.

A compaction on the path is either pi's legacy ``compaction`` entry or a ``context_transform`` entry whose
patch holds a ``compaction_apply`` op (how pi-tui stores them). `CompactionMark` gives both one
shape. Entries may be entry records, `RawEntry` objects or plain camelCase dicts; they are read with
`pi_tui.session.entry_reader`, as the context engine reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pi_tui.ai.types import CompactionSummaryMessage, Message
from pi_tui.context.engine import replay_entries
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.session.entries import MessageEntry, RawEntry, SessionEntry
from pi_tui.session.entry_reader import (
    EntryLike,
    branch_summary_message,
    custom_message,
    entry_id,
    entry_timestamp_ms,
    entry_type,
    read_compaction,
    read_transform,
)
from pi_tui.util.json_types import JsonValue

__all__ = [
    "CompactionMark",
    "entry_type",
    "entry_id",
    "compaction_mark",
    "latest_compaction_index",
    "entry_message",
    "compaction_message",
    "context_messages",
]


@dataclass(frozen=True, slots=True)
class CompactionMark:
    """A compaction on the path, legacy or patch-based."""

    entry_id: str | None
    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    details: JsonValue = None
    from_hook: bool = False


def compaction_mark(entry: EntryLike) -> CompactionMark | None:
    """The compaction an entry applies, or None when it applies none."""
    if type(entry) is MessageEntry:  # most entries of a path: answered without reading any field
        return None
    legacy = read_compaction(entry)
    if legacy is not None:
        return CompactionMark(
            entry_id(entry),
            legacy.summary,
            legacy.first_kept_entry_id,
            legacy.tokens_before,
            legacy.details,
            legacy.from_hook,
        )
    transform = read_transform(entry)
    found = [op for op in transform.ops if op.get("op") == "compaction_apply"] if transform else []
    if found:
        op = found[-1]
        return CompactionMark(
            entry_id(entry),
            str(op.get("summary") or ""),
            op.get("firstKeptEntryId"),
            int(op.get("tokensBefore") or 0),
            op.get("details"),
            bool(op.get("fromHook")),
        )
    return None


def latest_compaction_index(path: Sequence[EntryLike], end: int | None = None) -> int:
    """Index of the newest compaction in ``path[:end]``, or -1."""
    stop = len(path) if end is None else end
    for i in range(stop - 1, -1, -1):
        if compaction_mark(path[i]) is not None:
            return i
    return -1


def entry_message(entry: EntryLike) -> Message | None:
    """The history message an entry contributes (pi's ``getMessageFromEntry``), or None."""
    if isinstance(entry, MessageEntry):
        return entry.message
    kind = entry_type(entry)
    if kind == "message":
        message = entry.data.get("message") if isinstance(entry, RawEntry) else None
        if isinstance(entry, Mapping):
            message = entry.get("message")
        if isinstance(message, dict):
            from pi_tui.ai.types import load_message

            return load_message(message)
        return None
    if kind == "custom_message":
        return custom_message(entry)
    if kind == "branch_summary":
        return branch_summary_message(entry)
    return None


def compaction_message(mark: CompactionMark, entry: EntryLike) -> CompactionSummaryMessage:
    return CompactionSummaryMessage(
        summary=mark.summary,
        tokens_before=mark.tokens_before,
        timestamp=entry_timestamp_ms(entry),
    )


def context_messages(path: Sequence[SessionEntry]) -> ContextEnvelope:
    """The durable context of ``path`` (messages plus the entry each came from), as the engine replays it."""
    return replay_entries(ContextEnvelope(), path)
