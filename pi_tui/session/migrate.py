"""In-memory migrations of pi's older session formats to version 3.

- v1 → v2 (no ``version`` in the header): every entry gets an ``id`` and a ``parentId`` pointing at the
  previous entry (a linear chain), and a compaction's ``firstKeptEntryIndex`` becomes ``firstKeptEntryId``.
  The index counts the non-blank lines of the file with the **header as index 0**.
- v2 → v3: the message role ``hookMessage`` becomes ``custom``.

Migrations work on decoded JSON dicts, before they become models, so every field is carried over. They
never touch the file; the store decides when (and how safely) a migrated file is rewritten.
"""

from __future__ import annotations

from typing import Any

from pi_tui.session.entries import CURRENT_VERSION, new_entry_id

__all__ = ["header_version", "migrate_records"]


def header_version(header: dict[str, Any] | None) -> int:
    """The format version a header declares; a header without one is v1."""
    if header is None:
        return CURRENT_VERSION
    version = header.get("version")
    return version if isinstance(version, int) and version > 0 else 1


def _with_front(data: dict[str, Any], front: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with ``front`` keys first (after ``type``), keeping the other keys' order."""
    result: dict[str, Any] = {"type": data.get("type")}
    result.update(front)
    for key, value in data.items():
        if key not in result:
            result[key] = value
    return result


def _v1_to_v2(records: list[dict[str, Any]], ordinals: list[int]) -> None:
    taken: set[str] = set()
    ids: list[str] = []
    previous: str | None = None
    for i, data in enumerate(records):
        entry_id = new_entry_id(taken)
        taken.add(entry_id)
        ids.append(entry_id)
        records[i] = _with_front(data, {"id": entry_id, "parentId": previous})
        previous = entry_id
    id_at_ordinal = dict(zip(ordinals, ids, strict=True))
    for i, data in enumerate(records):
        if data.get("type") != "compaction" or "firstKeptEntryIndex" not in data:
            continue
        index = data["firstKeptEntryIndex"]
        # Index 0 is the header, which is not an entry: such a compaction keeps nothing.
        target = id_at_ordinal.get(index) if isinstance(index, int) and index > 0 else None
        rebuilt: dict[str, Any] = {}
        for key, value in data.items():
            if key == "firstKeptEntryIndex":
                if target is not None:
                    rebuilt["firstKeptEntryId"] = target
            else:
                rebuilt[key] = value
        records[i] = rebuilt


def _v2_to_v3(records: list[dict[str, Any]]) -> None:
    for data in records:
        if data.get("type") != "message":
            continue
        message = data.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"


def migrate_records(
    header: dict[str, Any], records: list[dict[str, Any]], ordinals: list[int]
) -> tuple[int, dict[str, Any]]:
    """Bring a header and its entries to the current version.

    Args:
        header: the decoded header line.
        records: the decoded entry lines, in file order; replaced in place by their migrated versions.
        ordinals: for each record, its index among the file's non-blank lines (header = 0).

    Returns:
        The version the file had, and the migrated header (the same dict when nothing changed).
    """
    version = header_version(header)
    if version >= CURRENT_VERSION:
        return version, header
    if version < 2:
        _v1_to_v2(records, ordinals)
    if version < 3:
        _v2_to_v3(records)
    migrated = dict(header)
    migrated.pop("version", None)
    return version, {
        "type": "session",
        "version": CURRENT_VERSION,
        **{k: v for k, v in migrated.items() if k != "type"},
    }
