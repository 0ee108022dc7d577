"""Building the agent's message history from a session's active path (pi's ``buildSessionContext``).

1. A leaf of None gives an empty context; an unknown leaf falls back to the last entry.
2. Walk parents from the leaf to the root: the path.
3. The thinking level is the last ``thinking_level_change`` on the path (default ``off``); the model is
   the last ``model_change`` or assistant message; only the **latest** compaction counts.
4. Without a compaction every path entry is emitted in order: ``message`` → its message,
   ``custom_message`` → `CustomMessage`, a non-empty ``branch_summary`` → `BranchSummaryMessage`.
5. With one, the `CompactionSummaryMessage` comes first, then the path entries from its
   ``firstKeptEntryId`` up to the compaction, then the entries after it.

pi 0.86+ entries: ``context_edit`` entries change or omit their target (the latest on the path wins);
system messages, ``usage`` entries and entries kept raw add no message. The system messages are folded
into `SessionContext.system` (a compaction's ``systemMessage`` checkpoint restarts the fold).

The conversion to provider messages (bash/custom/summary → user text) happens later, at send time.

Extension point for the context engine: ``context_transform`` entries are not interpreted here. They
are returned in path order (`SessionContext.context_transforms`) together with the path itself and the
entry each message came from (`SessionContext.message_entry_ids`), which is what a replay needs to place
each transform's patch relative to the messages.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from pi_tui.ai.types import (
    AssistantMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    Message,
)
from pi_tui.session.edits import apply_context_edit, latest_context_edits
from pi_tui.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextTransformEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
)
from pi_tui.session.paths import parse_iso
from pi_tui.session.system import SystemState, system_message_dict
from pi_tui.util.json_types import JsonObject

__all__ = [
    "LastEntry",
    "ModelRef",
    "RestoreState",
    "SessionContext",
    "LAST_ENTRY",
    "build_session_context",
    "iso_to_ms",
    "restore_state",
]


class LastEntry(enum.Enum):
    """The type of `LAST_ENTRY`, its one value."""

    LAST_ENTRY = "LAST_ENTRY"

    def __repr__(self) -> str:
        return "LAST_ENTRY"


LAST_ENTRY: Final = LastEntry.LAST_ENTRY
"""Default leaf for `build_session_context`: the last entry of the list (pi's ``undefined``)."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    provider: str
    model_id: str


@dataclass
class SessionContext:
    """What the agent needs from a session to continue it."""

    messages: list[Message] = field(default_factory=list)
    message_entry_ids: list[str] = field(default_factory=list)  # the compaction's id for its summary
    thinking_level: str = "off"
    model: ModelRef | None = None
    context_transforms: list[ContextTransformEntry] = field(default_factory=list)  # path order
    path: list[SessionEntry] = field(default_factory=list)  # root → leaf, every entry type
    compaction: CompactionEntry | None = None  # the latest compaction on the path
    system: SystemState = field(default_factory=SystemState)  # pi's persisted prompt and tools
    context_edits: dict[str, JsonObject | None] = field(default_factory=dict)  # target id → latest replacement

    def path_index(self, entry_id: str) -> int:
        """Position of an entry on the path (-1 when it is not on it)."""
        for i, entry in enumerate(self.path):
            if entry.id == entry_id:
                return i
        return -1


@dataclass(frozen=True, slots=True)
class RestoreState:
    """What resuming a session takes from its path before the agent exists: the model and thinking level
    it ran with, and whether its context holds any message. The same values as `build_session_context`'s
    ``model``, ``thinking_level`` and ``bool(messages)``, without building the messages."""

    model: ModelRef | None = None
    thinking_level: str = "off"
    has_messages: bool = False


def restore_state(path: Sequence[SessionEntry]) -> RestoreState:
    """The `RestoreState` of a path (root first), read from its end.

    The latest assistant message or model change gives the model, the latest thinking level change
    the level, and one message the context emits (or a compaction) makes ``has_messages``: once all
    three are known the rest of the path is not read, and once the first two are, message entries
    are passed over without reading their messages.
    """
    model: ModelRef | None = None
    model_known = False
    thinking_level = "off"
    level_known = False
    compacted = False
    emits = False  # an entry `_emit` turns into a message, unless a context edit omits it
    omitted = {target for target, replacement in latest_context_edits(path).items() if replacement is None}
    for entry in reversed(path):
        if type(entry) is MessageEntry:
            if model_known and emits:
                continue
            message = entry.message
            if not model_known and isinstance(message, AssistantMessage):
                model, model_known = ModelRef(message.provider, message.model), True
            if not emits and entry.id not in omitted:
                emits = True
        elif isinstance(entry, ThinkingLevelChangeEntry):
            if not level_known:
                thinking_level, level_known = entry.thinking_level, True
        elif isinstance(entry, ModelChangeEntry):
            if not model_known:
                model, model_known = ModelRef(entry.provider, entry.model_id), True
        elif isinstance(entry, CompactionEntry):
            compacted = True
        elif isinstance(entry, CustomMessageEntry):
            if entry.id not in omitted:
                emits = True
        elif isinstance(entry, BranchSummaryEntry) and entry.summary:  # never edited away
            emits = True
        if level_known and model_known and (emits or compacted):
            break
    return RestoreState(model, thinking_level, compacted or emits)


def iso_to_ms(timestamp: str) -> int:
    """An entry's ISO timestamp as epoch milliseconds (0 when unparsable)."""
    parsed = parse_iso(timestamp)
    return int(parsed.timestamp() * 1000) if parsed else 0


def _walk(entries: Sequence[SessionEntry], leaf_id: str | LastEntry) -> list[SessionEntry]:
    by_id: dict[str, SessionEntry] = {}
    for entry in entries:
        if entry.id is not None:
            by_id[entry.id] = entry
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        leaf = next((e for e in reversed(entries) if e.id is not None), None)
    path: list[SessionEntry] = []
    seen: set[str | None] = set()
    while leaf is not None and leaf.id not in seen:
        seen.add(leaf.id)
        path.append(leaf)
        parent = leaf.parent_id
        leaf = by_id.get(parent) if parent is not None else None
    path.reverse()
    return path


def _emit(entry: SessionEntry, ctx: SessionContext) -> None:
    message: Message | None
    if isinstance(entry, MessageEntry | CustomMessageEntry):
        if isinstance(entry, MessageEntry):
            message = entry.message
        else:
            message = CustomMessage(
                custom_type=entry.custom_type,
                content=entry.content,
                display=entry.display,
                details=entry.details,
                timestamp=iso_to_ms(entry.timestamp),
            )
        if entry.id in ctx.context_edits:
            message = apply_context_edit(message, ctx.context_edits[entry.id])
            if message is None:
                return
        ctx.messages.append(message)
    elif isinstance(entry, BranchSummaryEntry) and entry.summary:
        ctx.messages.append(
            BranchSummaryMessage(
                summary=entry.summary, from_id=entry.from_id, timestamp=iso_to_ms(entry.timestamp)
            )
        )
    else:
        return
    ctx.message_entry_ids.append(entry.id)


def build_session_context(
    entries: Sequence[SessionEntry],
    leaf_id: str | None | LastEntry = LAST_ENTRY,
    *,
    path: Sequence[SessionEntry] | None = None,
) -> SessionContext:
    """The context of the path ending at ``leaf_id`` (see the module docstring for the rules).

    Args:
        entries: the session's entries in file order (the header excluded).
        leaf_id: the leaf; None for "before the first entry" (an empty context); `LAST_ENTRY` or an
            unknown id for the last entry.
        path: the path to ``leaf_id``, root first, when the caller has it already (a `SessionTree`
            keeps the last one): the entries are then not indexed and walked again.
    """
    ctx = SessionContext()
    if leaf_id is None:
        return ctx
    path = list(path) if path is not None else _walk(entries, leaf_id)
    ctx.path = path
    ctx.context_edits = latest_context_edits(path)
    compaction_index = -1
    for i, entry in enumerate(path):
        kind = type(entry)
        if kind is MessageEntry:  # most entries: one type test instead of the chain below
            message = entry.message  # type: ignore[union-attr]
            if isinstance(message, AssistantMessage):
                ctx.model = ModelRef(message.provider, message.model)
            continue
        system = system_message_dict(entry)
        if system is not None:
            ctx.system.apply(system)
        elif isinstance(entry, ThinkingLevelChangeEntry):
            ctx.thinking_level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            ctx.model = ModelRef(entry.provider, entry.model_id)
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            ctx.model = ModelRef(entry.message.provider, entry.message.model)
        elif isinstance(entry, CompactionEntry):
            ctx.compaction = entry
            compaction_index = i
            ctx.system.reset()  # pi keeps only the checkpoint of its latest compaction
            if entry.system_message is not None:
                ctx.system.apply(entry.system_message)
        elif isinstance(entry, ContextTransformEntry):
            ctx.context_transforms.append(entry)

    compaction = ctx.compaction
    if compaction is None:
        _emit_all(path, ctx)
        return ctx

    ctx.messages.append(
        CompactionSummaryMessage(
            summary=compaction.summary,
            tokens_before=compaction.tokens_before,
            timestamp=iso_to_ms(compaction.timestamp),
        )
    )
    ctx.message_entry_ids.append(compaction.id)
    kept = False
    for entry in path[:compaction_index]:
        if entry.id == compaction.first_kept_entry_id:
            kept = True
        if kept:
            _emit(entry, ctx)
    _emit_all(path[compaction_index + 1 :], ctx)
    return ctx


def _emit_all(entries: Sequence[SessionEntry], ctx: SessionContext) -> None:
    """`_emit` of each entry; a plain message entry without an edit is added right here (most are)."""
    messages, ids, edits = ctx.messages, ctx.message_entry_ids, ctx.context_edits
    for entry in entries:
        if type(entry) is MessageEntry and (not edits or entry.id not in edits):
            messages.append(entry.message)
            ids.append(entry.id)
        else:
            _emit(entry, ctx)
