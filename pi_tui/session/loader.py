"""Reading a session file: one linear pass, never a crash, everything odd written into a `LoadReport`.

Rules (see docs/session-format.md):
- Blank lines are ignored. A line that is not JSON, or not an object with a ``type``, is skipped and
  reported with its line number; it stays in the file (the loader never writes).
- An incomplete last line without its newline is a *torn tail* (a write interrupted by a crash); its
  offset is recorded so the first write can end it with a newline before appending (pi does the same).
- A broken line that has a complete entry glued to its end (a torn line followed by a later append, as
  other tools produce) gives that entry back.
- The first non-blank line must be the header (``type: session`` with a string ``id``); without one
  the entries still load and the header is reported missing.
- A big file's lines are decoded with orjson (a third of the time of `json`, and its decoded keys are
  shared between lines): a line it refuses, or might read differently (an integer of 19 or more
  digits, which it would turn into a float; nesting deeper than the limit), goes through `json` as
  before, so every line gets exactly the result or the error it got before.
- v1/v2 files are migrated in memory; the original lines and the migrated records are kept for the
  rewrite the first write does, which splices the new ids into the original lines (`spliced_line`)
  rather than encoding the whole file again.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
from pi_tui.session.migrate import header_version, migrate_records, spliced_line
from pi_tui.session.report import KeptRawEntry, LoadReport, SkippedLine, TornTail
from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject, JsonValue

__all__ = ["LoadedFile", "line_decoder", "load_session_file", "parse_session_bytes", "parse_session_lines"]

log = logging.getLogger(__name__)

_ENTRY_START = b'{"type":"'
_MAX_SALVAGE_TRIES = 50

REASON_INVALID_JSON = "invalid JSON"
REASON_TOO_DEEP = f"JSON nested deeper than {json_safe.MAX_RECORD_DEPTH} levels"
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
    # migrated records (None when not migrated) and the original lines. Both None when the file can
    # simply be appended to.
    rewrite_records: list[JsonObject] | None = None
    rewrite_texts: list[bytes] | None = None
    # Migrated records whose line must be encoded again (see `migrate_records`); whether the others
    # gained ids (v1) or are unchanged (v2).
    rewrite_rebuilt: set[int] = field(default_factory=set)
    ids_added: bool = False

    @property
    def needs_rewrite(self) -> bool:
        return self.header is None or self.rewrite_records is not None

    def rewrite_lines(self) -> list[bytes]:
        """The entry lines of the rewritten file (computed on demand: loading stays cheap)."""
        texts = self.rewrite_texts or []
        if self.rewrite_records is None:
            return list(texts)
        return [self.migrated_line(i) for i in range(len(self.rewrite_records))]

    def migrated_line(self, index: int) -> bytes:
        """The rewritten line of migrated record ``index``: its original bytes wherever possible."""
        assert self.rewrite_records is not None
        data = self.rewrite_records[index]
        if self.rewrite_texts is not None and index not in self.rewrite_rebuilt:
            raw = self.rewrite_texts[index]
            line = spliced_line(raw, data) if self.ids_added else raw
            if line is not None:
                return line
        return dumps_line(data).encode("utf-8")


_raw_decode = json.JSONDecoder().raw_decode
_check_depth = json_safe.check_depth
_LINE_DEPTH = json_safe.MAX_RECORD_DEPTH


def _loads(raw: bytes) -> JsonValue:
    """``json_safe.loads(raw)``, a fifth faster for the usual line (UTF-8, no leading whitespace).

    `json.loads` of bytes guesses the encoding first; a line that does not decode or parse this way
    goes through `json_safe.loads` itself, so every odd line gets exactly its result or its error. A line
    nested deeper than `json_safe.MAX_RECORD_DEPTH` raises `json_safe.JsonTooDeepError`.
    """
    try:
        text = raw.decode("utf-8", "surrogatepass")
    except ValueError:  # not UTF-8
        return json_safe.loads(raw, limit=_LINE_DEPTH)
    _check_depth(text, limit=_LINE_DEPTH)
    try:
        obj, end = _raw_decode(text)
    except ValueError:
        return json_safe.loads(raw, limit=_LINE_DEPTH)
    if end != len(text) and text[end:].strip(" \t\n\r"):
        return json_safe.loads(raw, limit=_LINE_DEPTH)  # data after the value: raises as json.loads does
    return obj


# Files at least this big are decoded with orjson; below it, importing orjson (~10 ms) would cost more
# than it saves.
FAST_DECODE_BYTES = 1 << 20
# Digits become nines and opening braces brackets, everything else stays: a run of 19 nines is then a
# number orjson could read as a float (it keeps integers within 64 bits only), or digits inside a string,
# which `json` reads as well; the brackets count the opening ones for the depth limit's quick test.
_DIGITS_TO_NINES = bytes.maketrans(b"0123456789{", b"9999999999[")
_LONG_NUMBER = b"9" * 19


def _fast_loads() -> Callable[[bytes], JsonValue]:
    """`_loads` with orjson in front (imported on first use): the same value, in a third of the time."""
    import orjson

    decode = orjson.loads
    refused = orjson.JSONDecodeError
    translate = bytes.translate

    def loads(raw: bytes) -> JsonValue:
        marked = translate(raw, _DIGITS_TO_NINES)
        if _LONG_NUMBER in marked or marked.count(b"[") > _LINE_DEPTH:
            return _loads(raw)
        try:
            return decode(raw)
        except refused:  # not UTF-8, a lone surrogate, NaN, an odd line: `json` decides, as before
            return _loads(raw)

    return loads


def line_decoder(fast: bool) -> Callable[[bytes], object]:
    """How `parse_session_lines` decodes a line (``fast``: with orjson in front, for a big file): the
    same value for every line, or the same `ValueError`."""
    return _fast_loads() if fast else _loads


def _predecoded(decoded: list[object], loads: Callable[[bytes], JsonValue]) -> Callable[[bytes], JsonValue]:
    """``loads`` that answers its first calls from ``decoded`` (emptied as it goes, so each value is
    the caller's alone once handed out)."""
    decoded.reverse()
    pop = decoded.pop

    def answer(raw: bytes) -> JsonValue:
        return pop() if decoded else loads(raw)

    return answer


def holds_glued_entry(raw: bytes) -> bool:
    """Whether a line that does not decode holds a complete entry after its broken start, which the
    loading recovers (`REASON_GLUED`): a line without one is only skipped."""
    return _salvage(raw) is not None


def _salvage(raw: bytes) -> tuple[JsonObject, int] | None:
    """A complete entry glued to the end of a broken line, and where it starts."""
    start = 1
    for _ in range(_MAX_SALVAGE_TRIES):
        pos = raw.find(_ENTRY_START, start)
        if pos < 0:
            return None
        try:
            obj = json_safe.loads(raw[pos:], limit=_LINE_DEPTH)
        except ValueError:
            start = pos + 1
            continue
        if isinstance(obj, dict) and obj.get("type") in ENTRY_TYPES:
            return obj, pos
        start = pos + 1
    return None


class _Collector:
    """Turns decoded records into entries: at once for a current-version file, after migration otherwise."""

    def __init__(self, report: LoadReport) -> None:
        self.report = report
        self.entries: list[SessionEntry] = []
        self.deferred = False  # True when records wait for a migration (or for a missing header)
        self.records: list[JsonObject] = []
        self.ordinals: list[int] = []
        self.line_nos: list[int] = []
        self.texts: list[bytes] = []

    def add(self, obj: JsonObject, raw: bytes, line_no: int, ordinal: int) -> None:
        if not self.deferred:
            entry = parse_entry(obj, "")
            if type(entry) is RawEntry:
                entry.line = raw.decode("utf-8", "surrogatepass").rstrip("\r\n")
                self.report.raw.append(KeptRawEntry(line_no, entry.type, entry.problem))
            self.entries.append(entry)
            return
        self.records.append(obj)
        self.ordinals.append(ordinal)
        self.line_nos.append(line_no)
        self.texts.append(raw.rstrip(b"\r\n"))

    def _parse(self, obj: JsonObject, line_no: int, text: Any) -> None:
        entry = parse_entry(obj, "")
        if isinstance(entry, RawEntry):
            entry.line = text()
            self.report.raw.append(KeptRawEntry(line_no, entry.type, entry.problem))
        self.entries.append(entry)

    def finish(self, line_of: Any) -> None:
        """Parse the deferred records; ``line_of(i)`` gives record i's line as it will be written."""
        for i, (obj, line_no) in enumerate(zip(self.records, self.line_nos, strict=True)):
            self._parse(obj, line_no, lambda i=i: line_of(i).decode("utf-8", "surrogatepass"))


def parse_session_lines(
    lines: Iterable[bytes],
    path: Path | None = None,
    *,
    fast_decode: bool = False,
    decoded: list[object] | None = None,
) -> LoadedFile:
    """Parse a session file given as its lines (each with its newline, except maybe the last).

    ``fast_decode`` decodes with orjson (see the module docstring): worth it for big files.

    Memory stays proportional to the entries kept, not to the file: lines are consumed one by one.
    The cyclic garbage collector is paused meanwhile: parsing makes millions of objects that all stay
    alive and form no cycles, and each full collection would walk every one of them again (over half
    the time of a 100,000-entry file, and growing faster than the file).
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    loads = _fast_loads() if fast_decode else _loads
    if decoded:
        loads = _predecoded(decoded, loads)
    try:
        return _parse_session_lines(lines, path, loads)
    finally:
        if paused:
            gc.enable()


def _parse_session_lines(
    lines: Iterable[bytes], path: Path | None, loads: Callable[[bytes], JsonValue]
) -> LoadedFile:
    report = LoadReport(path=path)
    collector = _Collector(report)
    header_data: JsonObject | None = None
    seen_first = False
    ordinal = 0
    offset = 0
    line_no = 0

    for raw in lines:
        line_no += 1
        start = offset
        offset += len(raw)
        if raw[:1] != b"{" and not raw.strip():
            continue
        report.lines += 1
        is_first = not seen_first
        seen_first = True
        unterminated = not raw.endswith(b"\n")
        try:
            obj = loads(raw)
        except ValueError as exc:
            obj = None
            if unterminated:
                report.torn_tail = TornTail(line_no=line_no, offset=start, length=len(raw))
                report.skipped.append(SkippedLine(line_no, REASON_TORN))
            else:
                found = _salvage(raw)
                if found is None:
                    too_deep = isinstance(exc, json_safe.JsonTooDeepError)
                    report.skipped.append(
                        SkippedLine(line_no, REASON_TOO_DEEP if too_deep else REASON_INVALID_JSON)
                    )
                else:
                    obj, pos = found
                    raw = raw[pos:]
                    report.skipped.append(SkippedLine(line_no, REASON_GLUED))
                    report.salvaged.append(line_no)
        else:
            if unterminated:
                report.unterminated_tail = True
        if obj is not None and not (isinstance(obj, dict) and isinstance(obj.get("type"), str)):
            report.skipped.append(SkippedLine(line_no, REASON_NOT_ENTRY))
            obj = None
        if is_first:
            if obj is not None and parse_header(obj) is not None:
                header_data = obj
                collector.deferred = header_version(obj) < 3
                ordinal += 1
                continue
            report.header_missing = True
            collector.deferred = True
        if obj is None:
            ordinal += 1
            continue
        if obj["type"] == "session":
            report.skipped.append(SkippedLine(line_no, REASON_SECOND_HEADER))
            ordinal += 1
            continue
        collector.add(obj, raw, line_no, ordinal)
        ordinal += 1

    migrated = False
    rebuilt: set[int] = set()
    version = 3
    if header_data is not None and collector.deferred:
        version, header_data = migrate_records(header_data, collector.records, collector.ordinals, rebuilt)
        report.migrated_from = version
        migrated = True
    elif header_data is None and collector.records and not any("id" in r for r in collector.records):
        # No header and no ids: the entries can only be v1; chain them as pi's v1 → v2 step does.
        version, _ = migrate_records(
            {"type": "session", "id": ""}, collector.records, collector.ordinals, rebuilt
        )
        migrated = True

    loaded = LoadedFile(
        header=parse_header(header_data) if header_data is not None else None,
        entries=collector.entries,
        report=report,
        size=offset,
        has_content=seen_first,
        rewrite_records=collector.records if migrated else None,
        rewrite_texts=collector.texts if collector.deferred else None,
        rewrite_rebuilt=rebuilt,
        ids_added=migrated and version < 2,
    )
    if migrated:
        collector.finish(loaded.migrated_line)
    else:
        texts = collector.texts
        collector.finish(lambda i: texts[i])
    report.entries = len(collector.entries)
    return loaded


def parse_session_bytes(data: bytes, path: Path | None = None) -> LoadedFile:
    """Parse the bytes of a whole session file (see the module docstring for the rules)."""
    return parse_session_lines(io.BytesIO(data), path, fast_decode=len(data) >= FAST_DECODE_BYTES)


def load_session_file(path: Path, decoded: list[object] | None = None) -> LoadedFile:
    """Read and parse a session file. Raises only ``OSError`` (the file cannot be read).

    ``decoded``: the values of the file's first non-blank lines, decoded already by `line_decoder`
    (a reading that stopped part way, `pi_tui.session.fast_context`): used instead of decoding those
    lines again, and consumed.
    """
    with open(path, "rb") as handle:
        big = os.fstat(handle.fileno()).st_size >= FAST_DECODE_BYTES
        if decoded:
            loaded = parse_session_lines(handle, path, fast_decode=big, decoded=decoded)
        else:
            loaded = parse_session_lines(handle, path, fast_decode=big)
    if loaded.report.has_problems:
        log.warning("%s", loaded.report.summary())
    return loaded
