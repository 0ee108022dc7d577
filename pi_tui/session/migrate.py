"""In-memory migrations of pi's older session formats to version 3.

- v1 → v2 (no ``version`` in the header): every entry gets an ``id`` and a ``parentId`` pointing at the
  previous entry (a linear chain), and a compaction's ``firstKeptEntryIndex`` becomes ``firstKeptEntryId``.
  The index counts the non-blank lines of the file with the **header as index 0**.
- v2 → v3: the message role ``hookMessage`` becomes ``custom``.

Migrations work on decoded JSON dicts, before they become models, so every field is carried over. They
never touch the file; the store decides when (and how safely) a migrated file is rewritten.

The rewritten file is not re-encoded from the dicts: a line that only gained its ``id`` and ``parentId``
is the original line with those two members spliced in after its ``type`` (`spliced_line`), and a line
the migration did not touch is written back byte for byte. Only lines whose content changed (a v1
compaction's index, a ``hookMessage`` role, a v1 line that already had an ``id``) are encoded again.
"""

from __future__ import annotations

import json
import os

from pi_tui.session.entries import CURRENT_VERSION, new_entry_id
from pi_tui.util.json_types import JsonObject

__all__ = ["header_version", "migrate_records", "spliced_line"]


def header_version(header: JsonObject | None) -> int:
    """The format version a header declares; a header without one is v1."""
    if header is None:
        return CURRENT_VERSION
    version = header.get("version")
    return version if isinstance(version, int) and version > 0 else 1


def _with_front(data: JsonObject, front: JsonObject) -> JsonObject:
    """A copy of ``data`` with ``front`` keys first (after ``type``), keeping the other keys' order."""
    result: JsonObject = {"type": data.get("type")}
    result.update(front)
    for key, value in data.items():
        if key not in result:
            result[key] = value
    return result


def _fresh_ids(count: int) -> list[str]:
    """``count`` distinct 8-hex-digit ids (as `new_entry_id` makes them), drawn in one go."""
    pool = os.urandom(4 * count).hex()
    ids: list[str] = []
    taken: set[str] = set()
    for i in range(count):
        candidate = pool[8 * i : 8 * i + 8]
        if candidate in taken:
            candidate = new_entry_id(taken)
        taken.add(candidate)
        ids.append(candidate)
    return ids


def _v1_to_v2(records: list[JsonObject], ordinals: list[int], rebuilt: set[int]) -> None:
    ids = _fresh_ids(len(records))
    previous: str | None = None
    for i, data in enumerate(records):
        entry_id = ids[i]
        if "id" in data or "parentId" in data:  # the front members replace these: not a plain splice
            rebuilt.add(i)
        records[i] = _with_front(data, {"id": entry_id, "parentId": previous})
        previous = entry_id
    id_at_ordinal = dict(zip(ordinals, ids, strict=True))
    for i, data in enumerate(records):
        if data.get("type") != "compaction" or "firstKeptEntryIndex" not in data:
            continue
        index = data["firstKeptEntryIndex"]
        # Index 0 is the header, which is not an entry: such a compaction keeps nothing.
        target = id_at_ordinal.get(index) if isinstance(index, int) and index > 0 else None
        changed: JsonObject = {}
        for key, value in data.items():
            if key == "firstKeptEntryIndex":
                if target is not None:
                    changed["firstKeptEntryId"] = target
            else:
                changed[key] = value
        records[i] = changed
        rebuilt.add(i)


def _v2_to_v3(records: list[JsonObject], rebuilt: set[int]) -> None:
    for i, data in enumerate(records):
        if data.get("type") != "message":
            continue
        message = data.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
            rebuilt.add(i)


def migrate_records(
    header: JsonObject,
    records: list[JsonObject],
    ordinals: list[int],
    rebuilt: set[int] | None = None,
) -> tuple[int, JsonObject]:
    """Bring a header and its entries to the current version.

    Args:
        header: the decoded header line.
        records: the decoded entry lines, in file order; replaced in place by their migrated versions.
        ordinals: for each record, its index among the file's non-blank lines (header = 0).
        rebuilt: receives the indexes of records whose content changed beyond gaining ``id`` and
            ``parentId`` at the front (v1) — the lines `spliced_line` cannot produce.

    Returns:
        The version the file had, and the migrated header (the same dict when nothing changed).
    """
    version = header_version(header)
    if version >= CURRENT_VERSION:
        return version, header
    changed = rebuilt if rebuilt is not None else set()
    if version < 2:
        _v1_to_v2(records, ordinals, changed)
    if version < 3:
        _v2_to_v3(records, changed)
    migrated = dict(header)
    migrated.pop("version", None)
    return version, {
        "type": "session",
        "version": CURRENT_VERSION,
        **{k: v for k, v in migrated.items() if k != "type"},
    }


_TYPE_PREFIXES: dict[str, bytes] = {}


def spliced_line(raw: bytes, data: JsonObject) -> bytes | None:
    """The v1 line ``raw`` with the ``id`` and ``parentId`` of its migrated ``data`` put after its type.

    This is what `migrate_records` did to the dict, done on the original bytes (pi writes ``type``
    first), so every other byte of the line is kept. None when ``raw`` does not start with its type
    member as pi writes it (then the caller encodes ``data`` instead).
    """
    entry_type = data.get("type")
    if not isinstance(entry_type, str):
        return None
    prefix = _TYPE_PREFIXES.get(entry_type)
    if prefix is None:
        prefix = b'{"type":' + json.dumps(entry_type, ensure_ascii=False).encode("utf-8") + b","
        if len(_TYPE_PREFIXES) < 64:  # a handful of entry types; do not grow on odd files
            _TYPE_PREFIXES[entry_type] = prefix
    if not raw.startswith(prefix):
        return None
    entry_id, parent_id = data.get("id"), data.get("parentId")
    if not isinstance(entry_id, str) or not (parent_id is None or isinstance(parent_id, str)):
        return None
    # The ids are the migration's own (hex digits or a UUID): nothing in them needs escaping.
    parent = "null" if parent_id is None else f'"{parent_id}"'
    return b"".join((prefix, f'"id":"{entry_id}","parentId":{parent},'.encode("ascii"), raw[len(prefix) :]))
