"""A per-folder cache of the resume picker's rows for large session files, keyed by size and mtime.

Listing a folder scans every file (`pi_tui.session.listing`); for a session of tens of megabytes that
scan is most of the listing's time. The rows of files above `MIN_SIZE` are kept in the folder's
``.pi-tui-listing.json`` with the file's size, mtime and where the scan ended. A file whose size and
mtime are unchanged is not opened again; a file that grew (sessions are appended to) is scanned only
from where the last scan ended, after checking the bytes just before that point are still the same;
anything else is scanned in full. Smaller files are read each time, except that this process keeps their
rows by path, size and mtime, so listing again re-reads only the files that changed. The cache is only an aid: a missing, unreadable or stale cache
costs a full scan, never a wrong row, and failing to write it is ignored.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .listing import NO_MESSAGES, ScanPoint, SessionInfo, read_session_info, scan_session_file

__all__ = ["CACHE_NAME", "MIN_SIZE", "ListingCache"]

CACHE_NAME = ".pi-tui-listing.json"
MIN_SIZE = 256 * 1024  # smaller files are scanned each time (cheaper than keeping their rows)
_VERSION = 2  # 2: header times without an offset are local time (rows kept by 1 read them as UTC)


# Rows of small files read by this process, by path, with the size and mtime they were read at: opening
# the picker again (or pressing Tab) re-reads only files that changed. Cleared when it grows past
# `_SMALL_LIMIT` rows.
_SMALL: dict[str, tuple[int, int, SessionInfo]] = {}
_SMALL_LIMIT = 50_000


def _small_info(path: Path, stat: os.stat_result) -> SessionInfo | None:
    key = str(path)
    known = _SMALL.get(key)
    if known is not None and known[0] == stat.st_size and known[1] == stat.st_mtime_ns:
        return known[2]
    info = read_session_info(path)
    if info is None:
        _SMALL.pop(key, None)
        return None
    if len(_SMALL) >= _SMALL_LIMIT:
        _SMALL.clear()
    _SMALL[key] = (stat.st_size, stat.st_mtime_ns, info)
    return info


class ListingCache:
    """The cached rows of one session folder; `info` answers from it, `save` writes what changed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / CACHE_NAME
        self._rows: dict[str, dict[str, Any]] = {}
        self._seen: set[str] = set()
        self._dirty = False
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == _VERSION and isinstance(data.get("rows"), dict):
            self._rows = data["rows"]

    def info(self, path: Path, *, scan_large: bool = True) -> SessionInfo | None:
        """The picker row of ``path`` (see the module docstring for when the file is read).

        Args:
            path: the session file.
            scan_large: False: a large file the cache has no current row for is not read (None), for
                a quick first look that leaves the long scans to the full listing.
        """
        try:
            stat = path.stat()
        except OSError:
            return None
        if stat.st_size < MIN_SIZE:
            return _small_info(path, stat)
        name = path.name
        self._seen.add(name)
        row = self._rows.get(name)
        if row is not None and row.get("size") == stat.st_size and row.get("mtime_ns") == stat.st_mtime_ns:
            cached = _info_of(path, row)
            if cached is not None:
                return cached
        if not scan_large:
            return None
        found = scan_session_file(path, stat, _point_of(row) if row is not None else None)
        if found is None:
            if self._rows.pop(name, None) is not None:
                self._dirty = True
            return None
        info, point = found
        if point is None:
            self._rows.pop(name, None)
        else:
            self._rows[name] = _row_of(info, point, stat)
        self._dirty = True
        return info

    def save(self) -> None:
        """Write the cache when a row changed or a file went away (atomically; errors are ignored)."""
        gone = [name for name in self._rows if name not in self._seen]
        for name in gone:
            del self._rows[name]
        if not (self._dirty or gone):
            return
        data = json.dumps({"version": _VERSION, "rows": self._rows}, separators=(",", ":"))
        from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

        # A cache: not worth an fsync, but atomic, and a killed write's temporary file is removed later.
        with contextlib.suppress(OSError):
            replace_file_bytes(self.path, data.encode("utf-8"), durable=False)


def _row_of(info: SessionInfo, point: ScanPoint, stat: os.stat_result) -> dict[str, Any]:
    return {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "mtime": stat.st_mtime,
        "id": info.id,
        "cwd": info.cwd,
        "parent": info.parent_session_path,
        "created": info.created.timestamp(),
        "modified": info.modified.timestamp(),
        "end": point.end,
        "tail": base64.b64encode(point.tail).decode("ascii"),
        "count": point.count,
        "first": point.first_message,
        "name": point.name,
        "activity": point.activity_ms,
    }


def _point_of(row: dict[str, Any]) -> ScanPoint | None:
    try:
        return ScanPoint(
            int(row["end"]),
            base64.b64decode(row["tail"]),
            int(row["count"]),
            row["first"],
            row["name"],
            row["activity"],
        )
    except (KeyError, TypeError, ValueError):
        return None


def _info_of(path: Path, row: dict[str, Any]) -> SessionInfo | None:
    try:
        return SessionInfo(
            path=path,
            id=str(row["id"]),
            cwd=str(row["cwd"]),
            name=row["name"],
            parent_session_path=row["parent"],
            created=datetime.fromtimestamp(float(row["created"]), UTC),
            modified=datetime.fromtimestamp(float(row["modified"]), UTC),
            message_count=int(row["count"]),
            first_message=row["first"] or NO_MESSAGES,
            size=int(row["size"]),
            mtime=float(row["mtime"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
