"""What every chat block shares (kept apart so the chat log can load before the block widgets)."""

from __future__ import annotations

__all__ = ["Block"]


class Block:
    """Mixin for chat blocks: ``source_index`` ties a widget to the message it shows (windowing)."""

    source_index: int = -1
