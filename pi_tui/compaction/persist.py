"""Storing a compaction: one ``context_transform`` entry with a single ``compaction_apply`` op.

The context engine replays it like any other patch: the cached region becomes the summary followed by
the messages from ``firstKeptEntryId`` on. pi's legacy ``compaction`` entries are still read (the engine
treats them as the same op).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_tui.context.patches import validate_ops
from pi_tui.util.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from pi_tui.session.entries import ContextTransformEntry
    from pi_tui.session.manager import SessionManager

__all__ = [
    "TRANSFORMER_NAME",
    "INVALIDATE_REASON",
    "CompactionResult",
    "compaction_patch",
    "compaction_display",
    "append_compaction",
]

TRANSFORMER_NAME = "compaction"
INVALIDATE_REASON = "compaction"


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """A finished compaction (pi's ``CompactionResult``, plus who wrote the summary)."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: JsonValue = None
    from_hook: bool = False
    estimated_tokens_after: int | None = None
    """pi's estimate of the compacted context (set once the entry is applied; not stored in the file)."""

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.estimated_tokens_after is not None:
            data["estimatedTokensAfter"] = self.estimated_tokens_after
        if self.details is not None:
            data["details"] = self.details
        return data


def compaction_patch(result: CompactionResult) -> list[JsonObject]:
    """The op list of the ``context_transform`` entry."""
    op: JsonObject = {
        "op": "compaction_apply",
        "scope": "cached",
        "summary": result.summary,
        "firstKeptEntryId": result.first_kept_entry_id,
        "tokensBefore": result.tokens_before,
    }
    if result.details is not None:
        op["details"] = result.details
    if result.from_hook:
        op["fromHook"] = True
    op["invalidateCacheReason"] = INVALIDATE_REASON
    return [op]


def compaction_display(result: CompactionResult) -> JsonObject:
    """What a UI shows for the entry (the full summary is in the op)."""
    who = "an extension" if result.from_hook else "the model"
    return {
        "title": "Compaction",
        "summary": f"About {result.tokens_before:,} tokens of context summarised by {who}",
    }


def append_compaction(session: SessionManager, result: CompactionResult) -> ContextTransformEntry:
    """Append the compaction to ``session`` (a `SessionManager`) and return the new entry."""
    patch = validate_ops(compaction_patch(result), phase="builtin", source=TRANSFORMER_NAME)
    return session.append_context_transform(TRANSFORMER_NAME, patch, compaction_display(result))
