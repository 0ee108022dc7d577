"""pi 0.87+'s ``context_edit`` entries: what the model sees of an earlier entry, changed append-only.

An edit names a target entry (a user, assistant, toolResult or custom message) and a ``replacement``:
``None`` omits the target from the model's context; ``{"content": ...}`` replaces only its content (a
string for an assistant or tool result becomes one text block). The latest edit per target on the
active path wins; edits on other branches do not count. The raw entry, the UI, exports and billing keep
the original.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from pi_tui.ai.types import Message, dump_message, load_message
from pi_tui.util.json_types import JsonObject
from pi_tui.util.record import ValidationError

from .entries import ContextEditEntry, SessionEntry

__all__ = ["OMIT", "latest_context_edits", "apply_context_edit"]

log = logging.getLogger(__name__)

OMIT: Final = None
"""The replacement value that omits a target (pi's ``replacement: null``)."""

_TEXT_BLOCK_ROLES = ("assistant", "toolResult")


def latest_context_edits(path: Sequence[SessionEntry]) -> dict[str, JsonObject | None]:
    """Target id → the latest replacement on ``path`` (`OMIT` for an omission)."""
    edits: dict[str, JsonObject | None] = {}
    for entry in path:
        if isinstance(entry, ContextEditEntry):
            edits[entry.target_id] = entry.replacement
    return edits


def apply_context_edit(message: Message, replacement: JsonObject | None) -> Message | None:
    """The message as the model should see it after ``replacement``; None when it is omitted.

    A replacement whose content the message's shape cannot hold leaves the message unchanged (and is
    logged), so a malformed edit never loses a message.
    """
    if replacement is None:
        return None
    if "content" not in replacement:
        return message
    content = replacement["content"]
    data = dump_message(message)
    if isinstance(content, str) and data.get("role") in _TEXT_BLOCK_ROLES:
        content = [{"type": "text", "text": content}]
    data["content"] = content
    try:
        return load_message(data)
    except ValidationError as exc:
        log.warning("ignoring a context_edit replacement for a %s message: %s", data.get("role"), exc)
        return message
