"""Listing sessions for the resume picker and resolving ``--session``/``--fork`` arguments, cheaply.

A listing reads what it shows and parses almost nothing: the header line is decoded; the rest of the
file is scanned as bytes in large chunks. Entries are found by their line prefix (``{"type":"message"``),
which every pi and pi-tui writer produces; a line with another key order is decoded individually.
Only three kinds of line are ever decoded: ``session_info`` lines (small), the first user message and the
last user/assistant message (for ``modified``). Message bodies are never validated into records.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_tui.session.appended_lines import continues_after, feed_lines
from pi_tui.session.entries import SessionHeader, parse_header
from pi_tui.session.errors import AmbiguousSessionError, SessionNotFoundError
from pi_tui.session.paths import SESSION_SUFFIX, default_session_dir, parse_iso, sessions_root
from pi_tui.util import json_safe

__all__ = [
    "SessionInfo",
    "NO_MESSAGES",
    "read_header",
    "read_session_info",
    "scan_session_file",
    "ScanPoint",
    "list_sessions",
    "list_sessions_in_steps",
    "list_recent_sessions",
    "list_all_sessions",
    "most_recent_session",
    "find_session",
    "message_text",
    "line_role",
]

log = logging.getLogger(__name__)

NO_MESSAGES = "(no messages)"
_HEADER_LIMIT = 1 << 16  # a header line longer than this is not a header
_CHUNK = 4 << 20
_FIRST_MESSAGE_LIMIT = 2000
_ROLE_WINDOW = 512  # the role sits near the start of a message line

_MESSAGE_PREFIX = b'{"type":"message"'
_INFO_PREFIX = b'{"type":"session_info"'
_TYPED_PREFIX = b'{"type":"'
_ROLE_KEY = b'"message":{"role":"'


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of the resume picker."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime  # the last user/assistant message, else the header time, else the file mtime
    message_count: int
    first_message: str  # the first user message's text, or "(no messages)"
    size: int
    mtime: float


def read_header(path: Path) -> SessionHeader | None:
    """The header of a session file, reading only its first line; None when it has no valid header."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(_HEADER_LIMIT)
    except OSError:
        return None
    try:
        data = _decode(first)
    except ValueError:
        return None
    return parse_header(data) if isinstance(data, dict) else None


def _decode(line: bytes) -> Any:
    """One line's JSON value; a line nested too deeply raises `ValueError` like any unreadable one."""
    return json_safe.loads(line, limit=json_safe.MAX_RECORD_DEPTH)


def message_text(message: dict[str, Any]) -> str:
    """A message's text as pi searches and shows it: a string content, or its text blocks joined by
    spaces (thinking, tool calls and images left out)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and b.get("text")
        )
    return ""


def line_role(buf: bytes, start: int, end: int) -> str | None:
    """The message role of the line ``buf[start:end]`` (a message line), read from its first bytes
    (decoding the line only when its keys come in another order)."""
    window = buf[start : min(end, start + _ROLE_WINDOW)]
    pos = window.find(_ROLE_KEY)
    if pos >= 0:
        role_start = pos + len(_ROLE_KEY)
        role_end = window.find(b'"', role_start)
        if role_end > 0:
            return window[role_start:role_end].decode("ascii", "replace")
    try:  # unusual key order: decode the line
        message = _decode(buf[start:end]).get("message")
    except (ValueError, AttributeError):
        return None
    return message.get("role") if isinstance(message, dict) else None


def _activity_ms(line: bytes) -> int | None:
    """The message timestamp (ms) of a user/assistant line, else its entry timestamp."""
    try:
        data = _decode(line)
    except ValueError:
        return None
    message = data.get("message") if isinstance(data, dict) else None
    if isinstance(message, dict) and isinstance(message.get("timestamp"), int | float):
        return int(message["timestamp"])
    parsed = parse_iso(data.get("timestamp", "")) if isinstance(data, dict) else None
    return int(parsed.timestamp() * 1000) if parsed else None


class _Scan:
    """Accumulates what a listing needs while the file streams past in chunks.

    Lines are found with ``bytes.find`` (memchr) and classified by their first bytes, so the cost is a
    pass over the bytes plus a few operations per line, whatever the lines hold.
    """

    def __init__(self) -> None:
        self.count = 0
        self.first_message: str | None = None
        self.name: str | None = None
        self._last: tuple[bytes, int, int] | None = (
            None  # (chunk, start, end) of the last user/assistant line
        )

    @property
    def last_line(self) -> bytes | None:
        if self._last is None:
            return None
        buf, start, end = self._last
        return buf[start:end]

    def feed(self, buf: bytes, pos: int = 0, size: int | None = None) -> None:
        """Scan ``buf[pos:size]``, which holds whole lines (the last one may lack its newline)."""
        size = len(buf) if size is None else size
        while pos < size:
            end = buf.find(b"\n", pos, size)
            if end < 0:
                end = size
            if buf.startswith(_MESSAGE_PREFIX, pos):
                self._message(buf, pos, end)
            elif buf.startswith(_INFO_PREFIX, pos):
                self._info(_loads(buf[pos:end]))
            elif not buf.startswith(_TYPED_PREFIX, pos) and buf[pos:end].strip():
                self._odd(buf, pos, end)
            pos = end + 1

    def _message(self, buf: bytes, start: int, end: int) -> None:
        self.count += 1
        role = line_role(buf, start, end)
        if role not in ("user", "assistant"):
            return
        self._last = (buf, start, end)
        if role == "user" and self.first_message is None:
            try:
                message = _decode(buf[start:end]).get("message")
            except (ValueError, AttributeError):
                return
            text = message_text(message) if isinstance(message, dict) else ""
            if text:
                self.first_message = text[:_FIRST_MESSAGE_LIMIT]

    def _info(self, data: Any) -> None:
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str) and name.strip():
            self.name = name.strip()

    def _odd(self, buf: bytes, start: int, end: int) -> None:
        # A line written with another key order (never by pi or pi-tui): decode it to classify it.
        try:
            data = _decode(buf[start:end])
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        if data.get("type") == "message":
            self.count += 1
            message = data.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            if role in ("user", "assistant"):
                self._last = (buf, start, end)
            if role == "user" and self.first_message is None and isinstance(message, dict):
                self.first_message = message_text(message)[:_FIRST_MESSAGE_LIMIT] or None
        elif data.get("type") == "session_info":
            self._info(data)


def _loads(line: bytes) -> Any:
    try:
        return _decode(line)
    except ValueError:
        return None


def _ms_to_dt(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def read_session_info(path: Path) -> SessionInfo | None:
    """The picker row of one file; None when it is not a readable session file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    found = scan_session_file(path, stat)
    return None if found is None else found[0]


@dataclass(frozen=True, slots=True)
class ScanPoint:
    """Where a scan of a file stopped, and what it had gathered: a later scan of the grown file (appends
    only) goes on from here instead of reading the file again."""

    end: int  # bytes scanned: the file's size when it ended with a newline
    tail: bytes  # the bytes just before ``end`` (to check the file was only appended to)
    count: int
    first_message: str | None
    name: str | None
    activity_ms: int | None


def scan_session_file(
    path: Path, stat: os.stat_result, resume: ScanPoint | None = None
) -> tuple[SessionInfo, ScanPoint | None] | None:
    """The picker row of one file and where its scan ended (None when the file does not end with a
    newline). With ``resume`` (from an earlier scan of the same file, checked by its tail bytes), only
    the bytes after it are read. None when the file is not a readable session file."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        first = handle.readline(_HEADER_LIMIT)
        try:
            data = _decode(first)
        except json_safe.JsonTooDeepError as exc:
            log.warning("%s is not listed: its first line is %s", path, exc.msg)
            return None
        except ValueError:
            return None
        header = parse_header(data) if isinstance(data, dict) else None
        if header is None:
            return None
        scan = _Scan()
        activity: int | None = None
        if resume is not None and continues_after(handle, len(first), resume.end, resume.tail, stat.st_size):
            scan.count, scan.first_message, scan.name = resume.count, resume.first_message, resume.name
            activity = resume.activity_ms
        read = feed_lines(handle, scan, _CHUNK)
    if scan.last_line is not None:
        activity = _activity_ms(scan.last_line)
    mtime_dt = datetime.fromtimestamp(stat.st_mtime, UTC)
    created = parse_iso(header.timestamp) or mtime_dt
    modified = _ms_to_dt(activity) if activity else (parse_iso(header.timestamp) or mtime_dt)
    info = SessionInfo(
        path=path,
        id=header.id,
        cwd=header.cwd,
        name=scan.name,
        parent_session_path=header.parent_session,
        created=created,
        modified=modified,
        message_count=scan.count,
        first_message=scan.first_message or NO_MESSAGES,
        size=stat.st_size,
        mtime=stat.st_mtime,
    )
    if not read.ended:
        return info, None
    return info, ScanPoint(read.end, read.tail, scan.count, scan.first_message, scan.name, activity)


def _session_files(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as it:
            return [Path(e.path) for e in it if e.name.endswith(SESSION_SUFFIX) and e.is_file()]
    except OSError:
        return []


def _sorted(infos: list[SessionInfo]) -> list[SessionInfo]:
    infos.sort(key=lambda s: s.modified, reverse=True)
    return infos


def list_sessions(cwd: str | Path, session_dir: Path | None = None) -> list[SessionInfo]:
    """Sessions of one project (or of ``session_dir``), most recently modified first."""
    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    return _sorted(_infos_of(directory))


def list_sessions_in_steps(
    cwd: str | Path, session_dir: Path | None = None, chunk: int = 50, piece_seconds: float = 0.005
) -> Iterator[int]:
    """`list_sessions` in pieces, for a worker that lets other work go first: each ``next`` reads
    ``chunk`` files (a large one through the folder's cache), or fewer once it took ``piece_seconds``
    (a large file read for the first time takes ~20 ms: ten of them in one piece held up whatever
    waited for it), and yields how many are read. What it reads is kept (the process's rows of small
    files, the folder's cache), so listing afterwards reads none of them again."""
    import time

    from .listing_cache import ListingCache

    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    cache = ListingCache(directory)
    files = _session_files(directory)
    started, in_piece = time.perf_counter(), 0
    for done, path in enumerate(files, 1):
        cache.info(path)
        in_piece += 1
        if in_piece >= chunk or time.perf_counter() - started >= piece_seconds:
            yield done
            started, in_piece = time.perf_counter(), 0
    cache.save()


def list_recent_sessions(
    cwd: str | Path, session_dir: Path | None = None, count: int = 40
) -> list[SessionInfo]:
    """A quick first look at a project's sessions: the rows of the ``count`` files modified last (by
    mtime), most recently modified first, from the files that are quick to read (small ones, and large
    ones whose row the folder's cache holds); a large file never listed is left to `list_sessions`.
    What it reads is kept for the full listing, as `list_sessions` keeps it."""
    from .listing_cache import ListingCache

    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    stamped: list[tuple[float, Path]] = []
    for path in _session_files(directory):
        try:
            stamped.append((path.stat().st_mtime, path))
        except OSError:
            continue
    stamped.sort(key=lambda pair: pair[0], reverse=True)
    cache = ListingCache(directory)
    found = (cache.info(path, scan_large=False) for _, path in stamped[:count])
    return _sorted([info for info in found if info is not None])


def list_all_sessions(sessions_dir: Path | None = None) -> list[SessionInfo]:
    """Sessions of every project under ``<agent dir>/sessions``, most recently modified first."""
    root = Path(sessions_dir) if sessions_dir is not None else sessions_root()
    try:
        with os.scandir(root) as it:
            folders = [Path(e.path) for e in it if e.is_dir()]
    except OSError:
        return []
    return _sorted([info for folder in folders for info in _infos_of(folder)])


def _infos_of(directory: Path) -> list[SessionInfo]:
    """The rows of one folder's sessions; large files through the folder's listing cache."""
    from .listing_cache import ListingCache

    cache = ListingCache(directory)
    infos = [i for i in map(cache.info, _session_files(directory)) if i is not None]
    cache.save()
    return infos


def most_recent_session(cwd: str | Path, session_dir: Path | None = None) -> Path | None:
    """The session file of ``cwd`` modified last (by mtime, as pi does), reading only headers."""
    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    candidates: list[tuple[float, Path]] = []
    for path in _session_files(directory):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        candidates.append((mtime, path))
    for _, path in sorted(candidates, reverse=True):
        if read_header(path) is not None:
            return path
    return None


_NAME_ID = re.compile(r"_([0-9a-fA-F-]{8,})\.jsonl$")


def _matches_in(directory: Path, prefix: str) -> list[Path]:
    found: list[Path] = []
    for path in _session_files(directory):
        match = _NAME_ID.search(path.name)
        if match and match.group(1).lower().startswith(prefix):
            found.append(path)
            continue
        if match is None:  # a file not named by pi's scheme: ask its header
            header = read_header(path)
            if header is not None and header.id.lower().startswith(prefix):
                found.append(path)
    return found


def _pick(prefix: str, found: list[Path]) -> Path | None:
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    exact = [p for p in found if p.name.lower().endswith(f"_{prefix}{SESSION_SUFFIX}")]
    if len(exact) == 1:
        return exact[0]
    raise AmbiguousSessionError(prefix, sorted(found))


def find_exact_session(session_id: str, cwd: str | Path, session_dir: Path | None = None) -> Path | None:
    """This project's session whose header id is exactly ``session_id`` (``--session-id``), or None.

    Only headers are read. In a shared ``session_dir`` only sessions recorded in ``cwd`` count."""
    local = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    shared = session_dir is not None and local != default_session_dir(cwd)
    here = str(Path(cwd).resolve())
    for path in _session_files(local):
        header = read_header(path)
        if header is None or header.id != session_id:
            continue
        if shared and header.cwd and str(Path(header.cwd).resolve()) != here:
            continue
        return path
    return None


def find_session(arg: str, cwd: str | Path, session_dir: Path | None = None) -> Path:
    """Resolve ``--session``/``--fork``: a path to a file, or a (partial) session id.

    An id prefix is looked up in this project's sessions first, then in every project.

    Raises:
        SessionNotFoundError: nothing matches.
        AmbiguousSessionError: the prefix matches several sessions.
    """
    text = arg.strip()
    candidate = Path(os.path.expanduser(text))
    if not candidate.is_absolute():
        candidate = Path(cwd) / candidate
    if candidate.is_file():
        return candidate
    local = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    has_dir = os.sep in text or "/" in text
    if text.endswith(SESSION_SUFFIX) and not has_dir and (local / text).is_file():
        return local / text  # a bare file name from this project's session folder
    if has_dir or text.endswith(SESSION_SUFFIX) or not text:
        raise SessionNotFoundError(f"No session file at {candidate}")
    prefix = text.lower()
    hit = _pick(prefix, _matches_in(local, prefix))
    if hit is not None:
        return hit
    root = sessions_root()
    everywhere: list[Path] = []
    try:
        with os.scandir(root) as it:
            for entry in it:
                if entry.is_dir() and Path(entry.path) != local:
                    everywhere.extend(_matches_in(Path(entry.path), prefix))
    except OSError:
        pass
    hit = _pick(prefix, everywhere)
    if hit is None:
        raise SessionNotFoundError(
            f"No session with an id starting with '{arg}' in this project or any other"
        )
    return hit
