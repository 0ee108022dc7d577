"""Reading a session file: one linear pass, never a crash, everything odd written into a `LoadReport`.

Rules (see docs/session-format.md):
- Blank lines are ignored. A line that is not JSON, or not an object with a ``type``, is skipped and
  reported with its line number; it stays in the file (the loader never writes).
- An incomplete last line without its newline is a *torn tail* (a write interrupted by a crash); its
  offset is recorded so the first write can move it to a backup and cut it off.
- A broken line that has a complete entry glued to its end (a torn line followed by a later append, as
  other tools produce) gives that entry back.
- The first non-blank line must be the header (``type: session`` with a string ``id``); without one
  the entries still load and the header is reported missing.
- v1/v2 files are migrated in memory; the migrated lines are kept for the rewrite the first write does.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.session.entries import (
    ENTRY_TYPES,
    RawEntry,
    SessionEntry,
    SessionHeader,
    dumps_line,
    parse_entry,
    parse_header,
)
from pi_tui.session.migrate import header_version, migrate_records
from pi_tui.session.report import KeptRawEntry, LoadReport, SkippedLine, TornTail

__all__ = ["LoadedFile", "load_session_file", "parse_session_bytes"]

log = logging.getLogger(__name__)

_ENTRY_START = b'{"type":"'
_MAX_SALVAGE_TRIES = 50

REASON_INVALID_JSON = "invalid JSON"
REASON_TORN = "incomplete last line (an interrupted write)"
REASON_NOT_ENTRY = "not a session entry (no type)"
REASON_SECOND_HEADER = "a second session header"
REASON_GLUED = "incomplete entry (an interrupted write); the complete entry after it was recovered"


@dataclass
class LoadedFile:
    """The parsed content of a session file."""

    header: SessionHeader | None  # None when the file has no valid header
    entries: list[SessionEntry]
    report: LoadReport
    size: int  # bytes read
    has_content: bool  # at least one non-blank line
    # What to write after a header when the file must be rewritten (migrated or header missing): the
    # migrated records, or the original lines. Both None when the file can simply be appended to.
    rewrite_records: list[dict[str, Any]] | None = None
    rewrite_texts: list[bytes] | None = None

    @property
    def needs_rewrite(self) -> bool:
        return self.header is None or self.rewrite_records is not None

    def rewrite_lines(self) -> list[str]:
        """The entry lines of the rewritten file (computed on demand: loading stays cheap)."""
        if self.rewrite_records is not None:
            return [dumps_line(d) for d in self.rewrite_records]
        return [t.decode("utf-8", "surrogatepass") for t in self.rewrite_texts or []]


def _salvage(raw: bytes) -> tuple[dict[str, Any], int] | None:
    """A complete entry glued to the end of a broken line, and where it starts."""
    start = 1
    for _ in range(_MAX_SALVAGE_TRIES):
        pos = raw.find(_ENTRY_START, start)
        if pos < 0:
            return None
        try:
            obj = json.loads(raw[pos:])
        except ValueError:
            start = pos + 1
            continue
        if isinstance(obj, dict) and obj.get("type") in ENTRY_TYPES:
            return obj, pos
        start = pos + 1
    return None


def parse_session_bytes(data: bytes, path: Path | None = None) -> LoadedFile:
    """Parse the bytes of a session file (see the module docstring for the rules)."""
    report = LoadReport(path=path)
    segments = data.split(b"\n")
    last_index = len(segments) - 1
    terminated = data.endswith(b"\n")
    header_data: dict[str, Any] | None = None
    seen_first = False
    ordinal = 0
    records: list[dict[str, Any]] = []
    ordinals: list[int] = []
    line_nos: list[int] = []
    texts: list[bytes] = []

    for index, raw in enumerate(segments):
        if not raw.strip():
            continue
        line_no = index + 1
        report.lines += 1
        is_first = not seen_first
        seen_first = True
        unterminated = index == last_index and not terminated
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
            if unterminated:
                report.torn_tail = TornTail(line_no=line_no, offset=len(data) - len(raw), length=len(raw))
                report.skipped.append(SkippedLine(line_no, REASON_TORN))
            else:
                found = _salvage(raw)
                if found is None:
                    report.skipped.append(SkippedLine(line_no, REASON_INVALID_JSON))
                else:
                    obj, pos = found
                    raw = raw[pos:]
                    report.skipped.append(SkippedLine(line_no, REASON_GLUED))
                    report.salvaged.append(line_no)
            if obj is None:
                if is_first:
                    report.header_missing = True
                ordinal += 1
                continue
        else:
            if unterminated:
                report.unterminated_tail = True
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            report.skipped.append(SkippedLine(line_no, REASON_NOT_ENTRY))
            if is_first:
                report.header_missing = True
            ordinal += 1
            continue
        if is_first:
            if parse_header(obj) is not None:
                header_data = obj
                ordinal += 1
                continue
            report.header_missing = True
        elif obj["type"] == "session":
            report.skipped.append(SkippedLine(line_no, REASON_SECOND_HEADER))
            ordinal += 1
            continue
        records.append(obj)
        ordinals.append(ordinal)
        line_nos.append(line_no)
        texts.append(raw)
        ordinal += 1

    migrated = False
    if header_data is not None and header_version(header_data) < 3:
        report.migrated_from, header_data = migrate_records(header_data, records, ordinals)
        migrated = True
    elif header_data is None and records and not any("id" in r for r in records):
        # No header and no ids: the entries can only be v1; chain them as pi's v1 → v2 step does.
        migrate_records({"type": "session", "id": ""}, records, ordinals)
        migrated = True

    entries: list[SessionEntry] = []
    for data_obj, line_no, text in zip(records, line_nos, texts, strict=True):
        entry = parse_entry(data_obj, "")
        if isinstance(entry, RawEntry):
            entry.line = dumps_line(data_obj) if migrated else text.decode("utf-8", "surrogatepass")
            report.raw.append(KeptRawEntry(line_no, entry.type, entry.problem))
        entries.append(entry)
    report.entries = len(entries)

    header = parse_header(header_data) if header_data is not None else None
    return LoadedFile(
        header=header,
        entries=entries,
        report=report,
        size=len(data),
        has_content=seen_first,
        rewrite_records=records if migrated else None,
        rewrite_texts=texts if header_data is None and not migrated else None,
    )


def load_session_file(path: Path) -> LoadedFile:
    """Read and parse a session file. Raises only ``OSError`` (the file cannot be read)."""
    data = path.read_bytes()
    loaded = parse_session_bytes(data, path)
    if loaded.report.has_problems:
        log.warning("%s", loaded.report.summary())
    return loaded
