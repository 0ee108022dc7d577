"""Exceptions raised by the session layer, each with a message a user can act on."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "SessionError",
    "SessionNotConfirmed",
    "SessionLockedError",
    "SessionNotFoundError",
    "AmbiguousSessionError",
    "EntryNotFoundError",
]


class SessionError(Exception):
    """Base class of every error the session layer raises on purpose."""


class SessionNotConfirmed(SessionError):
    """The entry was written, but the disk refused to confirm (fsync) earlier lines of the session file.

    Nothing is lost while the process runs: the unconfirmed lines are kept in memory and written again until
    the disk takes them. The message is the whole notice for the user (no "not saved" prefix applies).
    """

    def __init__(self, path: Path | None, error: OSError) -> None:
        self.path = path
        self.error = error
        super().__init__(
            f"Session file not confirmed by the disk: {path} ({error}). Nothing is lost while pi-tui runs: the"
            " entries since the last confirmed write are kept in memory and written to the file again until"
            " the disk confirms them. Check the disk (free space, errors) before relying on this session file."
        )


class SessionLockedError(SessionError):
    """Another process (or another open in this one) is writing to the same session file."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f"another pi-tui process (pid {pid})" if pid is not None else "another pi-tui process"
        super().__init__(
            f"Session {path.name} is already open in {holder}. "
            "Close it there first, or fork it (--fork) to continue in a new session."
        )


class SessionNotFoundError(SessionError):
    """No session file matches a path or id prefix."""


class AmbiguousSessionError(SessionError):
    """An id prefix matches more than one session."""

    def __init__(self, prefix: str, paths: list[Path]) -> None:
        self.prefix = prefix
        self.paths = paths
        shown = ", ".join(p.name for p in paths[:5])
        more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
        super().__init__(
            f"Session id '{prefix}' matches {len(paths)} sessions ({shown}{more}); type more characters of the id."
        )


class EntryNotFoundError(SessionError, KeyError):
    """An entry id that is not in this session."""

    def __init__(self, entry_id: str) -> None:
        self.entry_id = entry_id
        super().__init__(f"Entry {entry_id} not found in this session")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])
