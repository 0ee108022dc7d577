"""What every chat block shares (kept apart so the chat log can load before the block widgets)."""

from __future__ import annotations

__all__ = ["Block", "TypingClock"]


class Block:
    """Mixin for chat blocks: ``source_index`` ties a widget to the message it shows (windowing)."""

    source_index: int = -1


class TypingClock:
    """When the user last pressed a key in the editor (``time.monotonic()``).

    While the user types, streamed text is written less often: each write re-lays out the chat, and a
    key that arrives during a layout pass waits for it.
    """

    last_key: float = 0.0
