"""Where session files live and how they are named (pi's layout, so pi and pi-tui share sessions).

``<agent dir>/sessions/--<cwd, leading slash removed, / \\ : replaced by ->--/<timestamp>_<uuid>.jsonl``
"""

from __future__ import annotations

import os
import re
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from pi_tui.ai.paths import AGENT_DIR_ENV, agent_dir

__all__ = [
    "AGENT_DIR_ENV",
    "agent_dir",
    "sessions_root",
    "encode_cwd",
    "default_session_dir",
    "new_session_filename",
    "iso_now",
    "parse_iso",
    "new_session_id",
    "SESSION_SUFFIX",
]

SESSION_SUFFIX = ".jsonl"


def sessions_root(base: Path | None = None) -> Path:
    """The folder holding one sub-folder per project (``<agent dir>/sessions``)."""
    return (base if base is not None else agent_dir()) / "sessions"


def encode_cwd(cwd: str | Path) -> str:
    """The per-project folder name pi uses: ``/Users/x/proj`` → ``--Users-x-proj--``."""
    text = str(cwd)
    if text[:1] in ("/", "\\"):
        text = text[1:]
    return "--" + re.sub(r"[/\\:]", "-", text) + "--"


def default_session_dir(cwd: str | Path, base: Path | None = None) -> Path:
    """Where sessions started in ``cwd`` are stored (not created here)."""
    return sessions_root(base) / encode_cwd(cwd)


def iso_now() -> str:
    """The current UTC time as pi writes it in entries: ``2025-12-09T00:52:54.397Z``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime | None:
    """An ISO timestamp as an aware datetime, read as pi (JavaScript's ``Date``) reads it; None when it
    is not one.

    This is the one place a session's timestamps are parsed. pi writes UTC with ``Z``; a hand-made or
    older file may carry no offset, and then JavaScript's rule applies: a date with a time is local time,
    a date alone is UTC midnight. An explicit offset or ``Z`` is kept.
    """
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if value.tzinfo is not None:
        return value
    if len(text) <= 10:  # a date alone, "2025-01-01"
        return value.replace(tzinfo=UTC)
    return value.astimezone()  # the local time zone at that date (summer time included)


def new_session_id(now_ms: int | None = None) -> str:
    """A UUIDv7 (RFC 9562), as pi 0.67+ uses: 48 bits of Unix milliseconds, then random bits.

    Ids made later sort later, so a directory listing by id is also by creation time.
    """
    ms = (time.time_ns() // 1_000_000 if now_ms is None else now_ms) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def new_session_filename(session_id: str, timestamp: str) -> str:
    """``<ISO timestamp with : and . replaced by ->_<uuid>.jsonl``."""
    return re.sub(r"[:.]", "-", timestamp) + "_" + session_id + SESSION_SUFFIX
