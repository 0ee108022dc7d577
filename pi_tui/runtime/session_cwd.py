"""Where a session named with ``--session`` runs: the working directory its file records, as pi 0.87.1.

A session started in one project and opened from another directory goes back to its own directory, so
its tools, settings and resources are that project's. When the recorded directory no longer exists, pi
asks in the full-screen app whether to continue in the current directory, and stops the other modes
with an error (exit 1); `MissingSessionCwdError` carries what both need.
"""

from __future__ import annotations

from pathlib import Path

from pi_tui.session import SessionManager

from .factory import StartupError

__all__ = ["MissingSessionCwdError", "session_run_cwd"]


class MissingSessionCwdError(StartupError):
    """The session file records a working directory that no longer exists."""

    def __init__(self, session_file: Path | None, session_cwd: str, current_cwd: Path) -> None:
        where = f"\nSession file: {session_file}" if session_file is not None else ""
        super().__init__(
            f"Stored session working directory does not exist: {session_cwd}{where}\n"
            f"Current working directory: {current_cwd}",
            1,
        )
        self.session_file = session_file
        self.session_cwd = session_cwd
        self.current_cwd = current_cwd

    @property
    def question(self) -> str:
        """What the full-screen app asks before it continues in the current directory."""
        return (
            f"The session's working directory no longer exists:\n{self.session_cwd}\n\n"
            f"Continue in the current one?\n{self.current_cwd}"
        )


def session_run_cwd(session: SessionManager, cwd: Path, *, keep_cwd: bool = False) -> Path:
    """The directory ``session`` runs in: the one its file records when that exists, else ``cwd``.

    Args:
        session: The session opened for ``--session`` (a new file records ``cwd`` itself).
        cwd: The directory pi-tui was started in.
        keep_cwd: The user chose to continue in ``cwd`` although the recorded directory is gone; the
            session then works in ``cwd`` (its file keeps what it recorded).

    Raises:
        MissingSessionCwdError: the recorded directory is gone and ``keep_cwd`` is False.
    """
    recorded = session.cwd
    if not recorded:
        return cwd
    path = Path(recorded)
    if path.is_dir():
        return path.resolve()
    if keep_cwd:
        session.work_in(cwd)
        return cwd
    raise MissingSessionCwdError(session.path, recorded, cwd)
