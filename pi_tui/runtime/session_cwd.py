"""Where a session named with ``--session`` runs: the working directory its file records, as pi 0.87.1.

A session started in one project and opened from another directory goes back to its own directory, so
its tools, settings and resources are that project's. When the recorded directory no longer exists, pi
asks in the full-screen app whether to continue in the current directory, and stops the other modes
with an error (exit 1); `MissingSessionCwdError` carries what both need.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.session import SessionManager

from .factory import StartupError

if TYPE_CHECKING:
    from pi_tui.args import Args

__all__ = [
    "MissingSessionCwdError",
    "SessionInOtherProjectError",
    "ask_on_terminal",
    "peek_run_cwd",
    "session_run_cwd",
]


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


class SessionInOtherProjectError(StartupError):
    """``--session <id>`` found the session among another project's: pi offers to fork it here.

    Accepting (`accept`) turns the command line into ``--fork <file>``: a copy of the session becomes a new
    session of the current directory. Declining leaves without changing anything (exit 0, "Aborted.").
    """

    question = "Fork this session into current directory?"

    def __init__(self, path: Path, session_cwd: str) -> None:
        super().__init__(f"Session found in different project: {session_cwd}", 0)
        self.path = path
        self.session_cwd = session_cwd

    def accept(self, args: Args) -> None:
        """Fork instead of opening: what a yes to `question` does."""
        args.fork = str(self.path)
        args.session = None


def ask_on_terminal(question: str, *, from_pipe: bool = False) -> bool:
    """A ``[y/N]`` question on stderr, answered on stdin; end of input answers no.

    Without a terminal the answer is no, unless ``from_pipe``: then the first line of stdin is the
    answer, as pi reads it in RPC mode (``y`` or ``yes``; a command line answers no). Only that line is
    read, so what follows it stays for the RPC reader.
    """
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    try:
        if from_pipe and not sys.stdin.isatty():
            answer = _first_line(sys.stdin.fileno())
        elif not sys.stdin.isatty():
            sys.stderr.write("\n")
            return False
        else:
            answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def _first_line(fd: int) -> str:
    """One line read from ``fd`` a byte at a time (a buffered read would take the lines after it)."""
    read = bytearray()
    while len(read) < 4096:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            break
        read += byte
    return read.decode("utf-8", "replace")


def peek_run_cwd(args: Args, cwd: Path, *, keep_cwd: bool = False) -> Path:
    """Where the run will work, read before the session is built: the directory a ``--session`` file
    records (what the trust question is about, as in pi), else ``cwd``.

    Raises:
        MissingSessionCwdError: the recorded directory is gone and ``keep_cwd`` is False.
        SessionInOtherProjectError: ``--session`` names another project's session by id.
    """
    from pi_tui.session import SessionNotFoundError
    from pi_tui.session.errors import SessionError
    from pi_tui.session.listing import read_header

    if not args.session or args.fork or args.no_session:
        return cwd
    from .factory import locate_session

    try:
        path = locate_session(args, cwd)
    except (SessionNotFoundError, SessionError, OSError):
        return cwd  # building the session reports it
    header = read_header(path) if path.is_file() else None
    if header is None or not header.cwd:
        return cwd
    recorded = Path(header.cwd)
    if recorded.is_dir():
        return recorded.resolve()
    if keep_cwd:
        return cwd
    raise MissingSessionCwdError(path, header.cwd, cwd)
