"""Sessions: pi-compatible JSONL entry trees, their store, listing, context building and export.

The runtime uses `SessionManager`; the resume picker uses `list_sessions`/`list_all_sessions` and
`search_sessions`; the CLI resolves arguments with `find_session`/`most_recent_session`.
"""

from __future__ import annotations

from pi_tui.session.context import LAST_ENTRY, ModelRef, SessionContext, build_session_context
from pi_tui.session.entries import (
    CURRENT_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    ContextTransformEntry,
    CustomEntry,
    CustomMessageEntry,
    EphemeralEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    RawEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    SystemMessageEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
)
from pi_tui.session.errors import (
    AmbiguousSessionError,
    EntryNotFoundError,
    SessionError,
    SessionLockedError,
    SessionNotConfirmed,
    SessionNotFoundError,
)
from pi_tui.session.listing import (
    SessionInfo,
    find_session,
    list_all_sessions,
    list_sessions,
    most_recent_session,
    read_header,
)
from pi_tui.session.manager import SessionManager
from pi_tui.session.paths import default_session_dir, encode_cwd
from pi_tui.session.report import LoadReport
from pi_tui.session.search import parse_query, search_sessions
from pi_tui.session.tree import TreeNode

__all__ = [
    "CURRENT_VERSION",
    "LAST_ENTRY",
    "AmbiguousSessionError",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "ContextTransformEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "EntryNotFoundError",
    "EphemeralEntry",
    "LabelEntry",
    "LoadReport",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "RawEntry",
    "SessionContext",
    "SessionEntry",
    "SessionError",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionLockedError",
    "SessionNotConfirmed",
    "SessionManager",
    "SessionNotFoundError",
    "SystemMessageEntry",
    "ThinkingLevelChangeEntry",
    "TreeNode",
    "UsageEntry",
    "build_session_context",
    "default_session_dir",
    "encode_cwd",
    "find_session",
    "list_all_sessions",
    "list_sessions",
    "most_recent_session",
    "parse_query",
    "read_header",
    "search_sessions",
]
