"""Errors of compaction and branch summarisation, with messages a user can act on."""

from __future__ import annotations

__all__ = [
    "CompactionError",
    "CompactionCancelled",
    "NothingToCompact",
    "AlreadyCompacted",
    "NOTHING_TO_COMPACT",
    "ALREADY_COMPACTED",
    "COMPACTION_CANCELLED",
    "OVERFLOW_RECOVERY_FAILED",
]

NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
ALREADY_COMPACTED = "Already compacted"
COMPACTION_CANCELLED = "Compaction cancelled"
OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing the context (/compact, a new session) or switch to a model with a larger context window."
)


class CompactionError(Exception):
    """Compaction could not produce or apply a summary (the session is left unchanged)."""


class CompactionCancelled(CompactionError):
    """The user or an extension cancelled the compaction."""

    def __init__(self, message: str = COMPACTION_CANCELLED) -> None:
        super().__init__(message)


class NothingToCompact(CompactionError):
    """The active path has nothing old enough to summarise."""

    def __init__(self, message: str = NOTHING_TO_COMPACT) -> None:
        super().__init__(message)


class AlreadyCompacted(CompactionError):
    """The newest entry on the active path is already a compaction."""

    def __init__(self, message: str = ALREADY_COMPACTED) -> None:
        super().__init__(message)
