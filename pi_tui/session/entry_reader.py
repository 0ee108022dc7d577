"""One typed, tolerant reader of session entries, for everything that folds a path into messages.

The context engine's replay, the ``/context`` report, compaction and `build_session_context` all read
the same entries. A path holds entry records and, for a line this version keeps raw (an unknown type,
or a known type that failed validation), a `RawEntry`; compaction also accepts entries as camelCase
dicts (their JSON form). The readers here take any of the three and return typed values: a record's
fields as they are, a raw entry's or a dict's JSON for whatever it still says (a wrong type reads as
absent). None of them raises on a damaged entry; whether a damaged entry counts is the caller's choice
(the replay skips raw entries; the report lists them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, overload

from pi_tui.ai.types import BranchSummaryMessage, CustomMessage
from pi_tui.util.json_types import JsonObject, JsonValue

from .entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextTransformEntry,
    CustomMessageEntry,
    MessageEntry,
    RawEntry,
    SessionEntry,
)
from .paths import parse_iso

__all__ = [
    "CompactionFields",
    "EntryLike",
    "TransformFields",
    "branch_summary_message",
    "custom_message",
    "entry_id",
    "entry_timestamp_ms",
    "entry_type",
    "iso_to_ms",
    "message_role",
    "read_compaction",
    "read_transform",
]

EntryLike: TypeAlias = SessionEntry | Mapping[str, Any]
"""An entry record, a `RawEntry`, or an entry's camelCase JSON."""


def _json(entry: EntryLike) -> Mapping[str, Any] | None:
    """The JSON a raw entry or a dict holds; ``None`` for a parsed record."""
    if isinstance(entry, RawEntry):
        return entry.data
    if isinstance(entry, Mapping):
        return entry
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def iso_to_ms(value: object) -> int:
    """An entry's timestamp as epoch milliseconds: an ISO string, or a number taken as milliseconds
    already (0 when neither)."""
    if isinstance(value, int | float):
        return int(value)
    parsed = parse_iso(value) if isinstance(value, str) else None
    return int(parsed.timestamp() * 1000) if parsed is not None else 0


def entry_type(entry: EntryLike) -> str:
    """The entry's ``type`` ("" when it has none)."""
    if isinstance(entry, Mapping):
        return _str(entry.get("type")) or ""
    return entry.type


def entry_id(entry: EntryLike) -> str | None:
    """The entry's ``id``, or ``None`` when it has none."""
    value = _str(entry.get("id")) if isinstance(entry, Mapping) else entry.id
    return value or None


def entry_timestamp_ms(entry: EntryLike) -> int:
    """The entry's own timestamp in epoch milliseconds (0 when absent or unreadable)."""
    return iso_to_ms(entry.get("timestamp") if isinstance(entry, Mapping) else entry.timestamp)


def message_role(entry: EntryLike) -> str | None:
    """The role of the message a ``message`` entry holds (``None`` for another type, or when unreadable;
    pi's system messages have none here, as they are not part of the history)."""
    if isinstance(entry, MessageEntry):
        return entry.message.role
    data = _json(entry)
    message = data.get("message") if data is not None and data.get("type") == "message" else None
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else None


@dataclass(frozen=True, slots=True)
class TransformFields:
    """What a ``context_transform`` entry says.

    Attributes:
        transformer: the extension that wrote it ("" when unreadable).
        ops: its patch ops (those that are JSON objects).
        title: the display title, if any.
        damaged: the entry was kept raw (its line failed validation); the replay does not apply it.
    """

    transformer: str
    ops: tuple[JsonObject, ...]
    title: str | None
    damaged: bool


def read_transform(entry: EntryLike) -> TransformFields | None:
    """The fields of a ``context_transform`` entry, or ``None`` for another type."""
    if isinstance(entry, ContextTransformEntry):
        display = entry.display or {}
        return TransformFields(
            entry.transformer_name or "",
            tuple(op for op in entry.patch if isinstance(op, dict)),
            _str(display.get("title")),
            damaged=False,
        )
    data = _json(entry)
    if data is None or data.get("type") != "context_transform":
        return None
    patch = data.get("patch")
    shown = data.get("display")
    return TransformFields(
        _str(data.get("transformerName")) or "",
        tuple(op for op in patch if isinstance(op, dict)) if isinstance(patch, list) else (),
        _str(shown.get("title")) if isinstance(shown, dict) else None,
        damaged=isinstance(entry, RawEntry),
    )


@dataclass(frozen=True, slots=True)
class CompactionFields:
    """What a legacy ``compaction`` entry (pi's own) says."""

    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    details: JsonValue
    from_hook: bool
    system_message: JsonObject | None


def read_compaction(entry: EntryLike) -> CompactionFields | None:
    """The fields of a ``compaction`` entry, or ``None`` for another type."""
    if isinstance(entry, CompactionEntry):
        return CompactionFields(
            entry.summary or "",
            entry.first_kept_entry_id,
            entry.tokens_before or 0,
            entry.details,
            bool(entry.from_hook),
            entry.system_message,
        )
    data = _json(entry)
    if data is None or data.get("type") != "compaction":
        return None
    tokens = data.get("tokensBefore")
    checkpoint = data.get("systemMessage")
    return CompactionFields(
        str(data.get("summary") or ""),
        _str(data.get("firstKeptEntryId")),
        int(tokens) if isinstance(tokens, int | float) else 0,
        data.get("details"),
        bool(data.get("fromHook")),
        checkpoint if isinstance(checkpoint, dict) else None,
    )


@overload
def custom_message(entry: CustomMessageEntry) -> CustomMessage: ...


@overload
def custom_message(entry: EntryLike) -> CustomMessage | None: ...


def custom_message(entry: EntryLike) -> CustomMessage | None:
    """The message a ``custom_message`` entry adds to the context, or ``None`` for another type."""
    if isinstance(entry, CustomMessageEntry):
        return CustomMessage(
            custom_type=entry.custom_type or "",
            content=entry.content,
            display=entry.display,
            details=entry.details,
            timestamp=iso_to_ms(entry.timestamp),
        )
    data = _json(entry)
    if data is None or data.get("type") != "custom_message":
        return None
    display = data.get("display")
    try:
        return CustomMessage(
            custom_type=_str(data.get("customType")) or "",
            content=data.get("content") or "",
            display=True if display is None else bool(display),
            details=data.get("details"),
            timestamp=iso_to_ms(data.get("timestamp")),
        )
    except ValueError:  # content that is no message content: the entry adds nothing
        return None


def branch_summary_message(entry: EntryLike) -> BranchSummaryMessage | None:
    """The message a ``branch_summary`` entry with a summary adds to the context, or ``None``."""
    if isinstance(entry, BranchSummaryEntry):
        if not entry.summary:
            return None
        return BranchSummaryMessage(
            summary=entry.summary, from_id=entry.from_id or "root", timestamp=iso_to_ms(entry.timestamp)
        )
    data = _json(entry)
    summary = _str(data.get("summary")) if data is not None and data.get("type") == "branch_summary" else None
    if not summary or data is None:
        return None
    return BranchSummaryMessage(
        summary=summary,
        from_id=_str(data.get("fromId")) or "root",
        timestamp=iso_to_ms(data.get("timestamp")),
    )
