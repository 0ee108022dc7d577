"""Reading a session's active path the way compaction needs it.

A compaction on the path is either pi's legacy ``compaction`` entry or a ``context_transform`` entry whose
patch holds a ``compaction_apply`` op (how pi-tui stores them). `CompactionMark` gives both one
shape. Entries may be entry records, `RawEntry` objects or plain camelCase dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_tui.ai.types import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from pi_tui.context.engine import iso_to_ms, replay_entries
from pi_tui.context.envelope import ContextEnvelope

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


def _field(entry: Any, name: str, camel: str | None = None) -> Any:
    if isinstance(entry, dict):
        return entry.get(camel or name)
    value = getattr(entry, name, None)
    if value is None and camel is not None:
        value = getattr(entry, camel, None)
    data = getattr(entry, "data", None)  # RawEntry
    if value is None and isinstance(data, dict):
        value = data.get(camel or name)
    return value


def entry_type(entry: Any) -> str:
    value = _field(entry, "type")
    return value if isinstance(value, str) else ""


def entry_id(entry: Any) -> str | None:
    value = _field(entry, "id")
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class CompactionMark:
    """A compaction on the path, legacy or patch-based."""

    entry_id: str | None
    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    details: Any = None
    from_hook: bool = False


def compaction_mark(entry: Any) -> CompactionMark | None:
    """The compaction an entry applies, or None when it applies none."""
    kind = entry_type(entry)
    if kind == "compaction":
        return CompactionMark(
            entry_id(entry),
            str(_field(entry, "summary") or ""),
            _field(entry, "first_kept_entry_id", "firstKeptEntryId"),
            int(_field(entry, "tokens_before", "tokensBefore") or 0),
            _field(entry, "details"),
            bool(_field(entry, "from_hook", "fromHook")),
        )
    if kind == "context_transform":
        ops = _field(entry, "patch") or []
        found = [op for op in ops if isinstance(op, dict) and op.get("op") == "compaction_apply"]
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


def latest_compaction_index(path: Sequence[Any], end: int | None = None) -> int:
    """Index of the newest compaction in ``path[:end]``, or -1."""
    stop = len(path) if end is None else end
    for i in range(stop - 1, -1, -1):
        if compaction_mark(path[i]) is not None:
            return i
    return -1


def entry_message(entry: Any) -> Any | None:
    """The history message an entry contributes (pi's ``getMessageFromEntry``), or None."""
    kind = entry_type(entry)
    if kind == "message":
        message = _field(entry, "message")
        if isinstance(message, dict):
            from pi_tui.ai.types import load_message

            return load_message(message)
        return message
    if kind == "custom_message":
        display = _field(entry, "display")
        return CustomMessage(
            custom_type=_field(entry, "custom_type", "customType") or "",
            content=_field(entry, "content") or "",
            display=True if display is None else bool(display),
            details=_field(entry, "details"),
            timestamp=iso_to_ms(_field(entry, "timestamp")),
        )
    if kind == "branch_summary":
        summary = _field(entry, "summary")
        if summary:
            return BranchSummaryMessage(
                summary=summary,
                from_id=_field(entry, "from_id", "fromId") or "root",
                timestamp=iso_to_ms(_field(entry, "timestamp")),
            )
    return None


def compaction_message(mark: CompactionMark, entry: Any) -> CompactionSummaryMessage:
    return CompactionSummaryMessage(
        summary=mark.summary,
        tokens_before=mark.tokens_before,
        timestamp=iso_to_ms(_field(entry, "timestamp")),
    )


def context_messages(path: Sequence[Any]) -> ContextEnvelope:
    """The durable context of ``path`` (messages plus the entry each came from), as the engine replays it."""
    return replay_entries(ContextEnvelope(), path)
