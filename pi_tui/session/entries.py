"""Session file entries: the header line and every entry type, as records in pi's JSON shape.

Fields are snake_case in Python and camelCase on disk (`WireModel`). Unknown fields are kept, so an
entry written by a newer pi survives a rewrite. An entry whose ``type`` this version does not know,
or that fails validation, becomes a `RawEntry`: it keeps its original line text and is written back
byte for byte; it still takes part in the tree when it has an ``id``.

pi-tui adds two entry types to pi's format: ``context_transform`` (persistent patch ops,
replayed by the context engine) and ``ephemeral`` (request-only messages, logged, never replayed).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from pi_tui.ai.types import AssistantMessage, Message, ToolResultMessage, UserContent, WireModel
from pi_tui.util.json_types import JsonObject, JsonValue
from pi_tui.util.record import ValidationError, field
from pi_tui.util.record_checks import Invalid

__all__ = [
    "CURRENT_VERSION",
    "SessionHeader",
    "EntryBase",
    "MessageEntry",
    "ModelChangeEntry",
    "ThinkingLevelChangeEntry",
    "CompactionEntry",
    "BranchSummaryEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "SessionInfoEntry",
    "ContextTransformEntry",
    "EphemeralEntry",
    "PiSystemMessage",
    "SystemMessageEntry",
    "UsageEntry",
    "ContextEditEntry",
    "RawEntry",
    "SessionEntry",
    "ENTRY_TYPES",
    "new_entry_id",
    "parse_entry",
    "parse_header",
    "entry_to_line",
    "header_to_line",
    "dumps_line",
    "is_assistant_entry",
]

CURRENT_VERSION = 3
"""The session format version pi-tui writes (pi's current version)."""


class SessionHeader(WireModel):
    """The first line of a session file; not part of the tree."""

    type: Literal["session"] = "session"
    version: int | None = None  # absent in v1 files
    id: str
    timestamp: str = ""
    cwd: str = ""
    parent_session: str | None = None


class EntryBase(WireModel):
    """Fields every tree entry has. ``parent_id`` is None for a root."""

    type: str
    id: str
    parent_id: str | None = None
    timestamp: str = ""  # ISO string; messages carry their own ms timestamp inside

    def checkpoint_json(self) -> object:
        """The file checkpoint this entry carries, as JSON (`pi_tui.checkpoints.records`); ``None``
        for an entry that carries none (every type but a tool result and a checkpoint ``custom`` entry)."""
        return None


class MessageEntry(EntryBase):
    type: Literal["message"] = "message"
    message: Message

    def checkpoint_json(self) -> object:
        """A tool result's ``details["checkpoint"]``."""
        from pi_tui.checkpoints.records import CHECKPOINT_KEY

        details = self.message.details if isinstance(self.message, ToolResultMessage) else None
        return details.get(CHECKPOINT_KEY) if isinstance(details, dict) else None


class PiSystemMessage(WireModel):
    """pi 0.86+'s persisted system prompt and tool list (``role: "system"``), or a patch of them.

    ``content`` is a forced prompt (no sections); ``sections`` maps a section name to its text
    (``None`` removes it); ``tools_added`` are full tool declarations and ``tools_removed`` names. Replaying
    every system message of a path in order gives the current prompt and tools (`pi_tui.session.system`).
    """

    role: Literal["system"] = "system"
    content: str | list[JsonObject] = ""
    sections: dict[str, str | None] | None = None
    timestamp: int = 0  # (before the tool lists: the order pi writes the keys in)
    tools_added: list[JsonObject] | None = None
    tools_removed: list[JsonObject] | None = None
    replace: bool | None = None


class SystemMessageEntry(EntryBase):
    """A ``message`` entry holding a `PiSystemMessage` (pi 0.86+).

    The message lives in ``system`` (``message`` on disk) rather than ``message``, so code that looks
    for conversation messages through ``entry.message`` never mistakes it for one.
    """

    type: Literal["message"] = "message"
    system: PiSystemMessage = field(alias="message")


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class CompactionEntry(EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: str
    # None only for a migrated v1 compaction whose firstKeptEntryIndex pointed nowhere.
    first_kept_entry_id: str | None = None
    tokens_before: int = 0
    details: JsonValue = None
    from_hook: bool | None = None
    # pi 0.86+: the full prompt/tool checkpoint at the boundary (a system message as a JSON dict).
    system_message: JsonObject | None = None
    usage: JsonObject | None = None  # the summary call's usage (pi 0.81+), counted in totals


class BranchSummaryEntry(EntryBase):
    """``from_id`` is the leaf the user left (pi 0.84.3+; older files: where the new branch grew)."""

    type: Literal["branch_summary"] = "branch_summary"
    from_id: str = "root"
    summary: str
    details: JsonValue = None
    from_hook: bool | None = None
    usage: JsonObject | None = None


class UsageEntry(EntryBase):
    """pi 0.86+: model usage outside the context (e.g. ``kind: "cache_warm"``); in totals, never in context.

    Any ``kind`` is accepted; ``usage`` stays a JSON dict so an unfamiliar shape still loads.
    """

    type: Literal["usage"] = "usage"
    kind: str = ""
    provider: str = ""
    model: str = ""
    usage: JsonObject = field(default_factory=dict)
    note: str | None = None


class ContextEditEntry(EntryBase):
    """pi 0.87+: changes what the model sees of one earlier entry (the latest edit per target wins).

    ``replacement`` None omits the target from the context; otherwise ``{"content": ...}`` replaces only
    its content. The raw entry, the UI and billing keep the original.
    """

    type: Literal["context_edit"] = "context_edit"
    target_id: str
    replacement: JsonObject | None = None


class CustomEntry(EntryBase):
    """Extension state; never part of the LLM context."""

    type: Literal["custom"] = "custom"
    custom_type: str
    data: JsonValue = None

    def checkpoint_json(self) -> object:
        """The data of a checkpoint ``custom`` entry."""
        from pi_tui.checkpoints.records import CUSTOM_TYPE

        return self.data if self.custom_type == CUSTOM_TYPE else None


class CustomMessageEntry(EntryBase):
    """An extension message that *is* part of the LLM context (as a user message)."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: JsonValue = None


class LabelEntry(EntryBase):
    """Sets (or, with no label, clears) the label of ``target_id``. The last one wins."""

    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class ContextTransformEntry(EntryBase):
    """pi-tui addition: persistent patch ops, replayed by the context engine, never re-run."""

    type: Literal["context_transform"] = "context_transform"
    schema_version: int = 1
    transformer_name: str
    patch: list[JsonObject] = field(default_factory=list)
    display: JsonObject | None = None


class EphemeralEntry(EntryBase):
    """pi-tui addition: request-only messages, kept for observability, never replayed."""

    type: Literal["ephemeral"] = "ephemeral"
    messages: list[Message] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class RawEntry:
    """An entry kept exactly as read: an unknown type, or a known type that failed validation.

    ``line`` is the original text (without the newline) and is what gets written back.
    """

    data: JsonObject
    line: str
    problem: str | None = None  # why a known type was not parsed; None for an unknown type

    @property
    def type(self) -> str:
        value = self.data.get("type")
        return value if isinstance(value, str) else ""

    @property
    def id(self) -> str | None:
        value = self.data.get("id")
        return value if isinstance(value, str) and value else None

    @property
    def parent_id(self) -> str | None:
        value = self.data.get("parentId")
        return value if isinstance(value, str) and value else None

    @property
    def timestamp(self) -> str:
        value = self.data.get("timestamp")
        return value if isinstance(value, str) else ""

    def checkpoint_json(self) -> object:
        """None: a damaged or unknown entry carries no checkpoint that counts."""
        return None


ModelEntry: TypeAlias = (
    MessageEntry
    | SystemMessageEntry
    | UsageEntry
    | ContextEditEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | ContextTransformEntry
    | EphemeralEntry
)
SessionEntry: TypeAlias = ModelEntry | RawEntry
"""Any entry of a session's tree (the header excluded)."""

# Records build their field tables on first use; reading the class default keeps import free of that.
ENTRY_TYPES: dict[str, type[EntryBase]] = {
    cls.type: cls
    for cls in (
        MessageEntry,
        ModelChangeEntry,
        ThinkingLevelChangeEntry,
        CompactionEntry,
        BranchSummaryEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        SessionInfoEntry,
        ContextTransformEntry,
        EphemeralEntry,
        UsageEntry,
        ContextEditEntry,
    )
}


def new_entry_id(taken: Container[str]) -> str:
    """8 hex characters (the start of a UUID) not in ``taken``; a full UUID after 100 collisions."""
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid"))


_MESSAGE_ENTRY_MAKER: list[Callable[[Mapping[Any, Any]], MessageEntry]] = []


def _message_entry_maker() -> Callable[[Mapping[Any, Any]], MessageEntry]:
    """`MessageEntry`'s maker, its ``type`` already matched (built on first use: the class's field table)."""
    if not _MESSAGE_ENTRY_MAKER:
        _MESSAGE_ENTRY_MAKER.append(MessageEntry.maker(tag_checked="type"))
    return _MESSAGE_ENTRY_MAKER[0]


def parse_entry(data: JsonObject, line: str) -> SessionEntry:
    """Turn one decoded JSON line into an entry model, or a `RawEntry` when that is not possible.

    Never raises: a known type that fails validation is kept raw with ``problem`` set.
    """
    kind = data.get("type")
    cls: type[EntryBase] | None
    if kind == "message":  # most entries
        message = data.get("message")
        if type(message) is dict and message.get("role") != "system":
            # `model_validate` without its per-call steps: a big session makes ~100,000 of these
            try:
                return _message_entry_maker()(data)
            except Invalid as exc:
                return RawEntry(data, line, problem=_first_error(exc.public(MessageEntry.__name__)))
        system = isinstance(message, dict) and message.get("role") == "system"
        cls = SystemMessageEntry if system else MessageEntry
    else:
        cls = ENTRY_TYPES.get(kind)  # type: ignore[arg-type]
        if cls is None:
            return RawEntry(data, line)
    try:
        # the class was chosen by ``type``: its value needs no second check
        return cls.model_validate(data, tag_checked="type")  # type: ignore[return-value]
    except ValidationError as exc:
        return RawEntry(data, line, problem=_first_error(exc))


def parse_header(data: JsonObject) -> SessionHeader | None:
    """The header model when ``data`` is a valid header (``type: session`` and a string id)."""
    if data.get("type") != "session" or not isinstance(data.get("id"), str):
        return None
    try:
        return SessionHeader.model_validate(data)
    except ValidationError:
        return None


def dumps_line(data: JsonObject) -> str:
    """Compact JSON as pi writes it (no spaces, non-ASCII kept), one line.

    Text with lone surrogates cannot be encoded as UTF-8; such a line is written ASCII-escaped instead,
    which is still valid JSON and loses nothing.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


def _entry_dict(entry: EntryBase) -> JsonObject:
    body = entry.model_dump(by_alias=True, exclude_none=True, mode="json")
    # pi writes parentId even when null, right after id.
    ordered: JsonObject = {"type": body.pop("type"), "id": body.pop("id"), "parentId": entry.parent_id}
    body.pop("parentId", None)
    ordered.update(body)
    if isinstance(entry, ContextEditEntry):  # ``replacement: null`` means "omit"; pi writes it
        ordered["replacement"] = entry.replacement
    return ordered


def entry_to_line(entry: SessionEntry) -> str:
    """The JSON line for an entry, without the trailing newline."""
    if isinstance(entry, RawEntry):
        return entry.line
    return dumps_line(_entry_dict(entry))


def header_to_line(header: SessionHeader) -> str:
    return dumps_line(header.model_dump(by_alias=True, exclude_none=True, mode="json"))


def is_assistant_entry(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
