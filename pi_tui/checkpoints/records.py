"""What a checkpoint looks like in a session file, and how to find them all.

A checkpoint is a JSON object (``details["checkpoint"]`` of a tool result, or the ``data`` of a
``custom`` entry of type `CUSTOM_TYPE` for ``!cmd`` and restores)::

    {"v": 1, "kind": "edit", "files": [{"path": "src/a.py", "before": "<sha256>", "after": "<sha256>"}]}

``before``/``after`` are content hashes in the blob store, or null when the file did not exist.
A change whose content was not stored (``"skipped": "binary" | "large" | "unknown"``) is noted but
cannot be restored. ``partial`` says a command's snapshot hit its time or size bound, so some changes
may be missing. pi keeps ``details`` and ``custom`` entries as they are and never reads them, so a
session with checkpoints still opens in pi.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from pi_tui.util.json_types import JsonObject

__all__ = [
    "CHECKPOINT_KEY",
    "CUSTOM_TYPE",
    "FileChange",
    "Checkpoint",
    "CheckpointCarrier",
    "RecordedChange",
    "checkpoint_of",
    "recorded_changes",
]

CHECKPOINT_KEY = "checkpoint"
"""The key in a tool result's ``details`` that holds its checkpoint."""

CUSTOM_TYPE = "pi-tui.checkpoint"
"""The ``customType`` of entries recording ``!cmd`` changes and restores."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's content before and after a change (hashes; None = the file did not exist).

    Attributes:
        path: Relative to the session's cwd (POSIX), or absolute for a file outside it.
        before: The content hash before the change, None when the file did not exist.
        after: The content hash after the change, None when the file was deleted.
        skipped: Why the content was not stored (``binary``, ``large``, ``unknown``); such a change is
            shown but cannot be restored.
    """

    path: str
    before: str | None
    after: str | None
    skipped: str | None = None

    def to_json(self) -> JsonObject:
        data: JsonObject = {"path": self.path, "before": self.before, "after": self.after}
        if self.skipped:
            data["skipped"] = self.skipped
        return data

    @classmethod
    def from_json(cls, data: object) -> FileChange | None:
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            return None
        before, after = data.get("before"), data.get("after")
        skipped = data.get("skipped")
        return cls(
            path=data["path"],
            before=before if isinstance(before, str) else None,
            after=after if isinstance(after, str) else None,
            skipped=skipped if isinstance(skipped, str) else None,
        )


@dataclass(slots=True)
class Checkpoint:
    """The file changes of one tool call, one ``!cmd`` or one restore."""

    kind: str
    files: list[FileChange] = field(default_factory=list)
    partial: bool = False
    note: str | None = None
    target: str | None = None
    """For a restore: the entry whose file state was restored."""

    def to_json(self) -> JsonObject:
        data: JsonObject = {"v": 1, "kind": self.kind, "files": [f.to_json() for f in self.files]}
        if self.partial:
            data["partial"] = True
        if self.note:
            data["note"] = self.note
        if self.target is not None:
            data["target"] = self.target
        return data

    @classmethod
    def from_json(cls, data: object) -> Checkpoint | None:
        if not isinstance(data, dict) or not isinstance(data.get("files"), list):
            return None
        files = [c for c in (FileChange.from_json(f) for f in data["files"]) if c is not None]
        target = data.get("target")
        note = data.get("note")
        return cls(
            kind=str(data.get("kind", "unknown")),
            files=files,
            partial=bool(data.get("partial", False)),
            note=note if isinstance(note, str) else None,
            target=target if isinstance(target, str) else None,
        )


@dataclass(frozen=True, slots=True)
class RecordedChange:
    """A `FileChange` and where it sits in the session."""

    entry_id: str
    order: int
    """The entry's position in the file (append order, so chronological)."""
    kind: str
    change: FileChange


class CheckpointCarrier(Protocol):
    """What checkpoints read of a session entry. The session's entry records provide it (this layer
    sits below the session's, so it names the shape, not the classes)."""

    @property
    def id(self) -> str | None: ...

    def checkpoint_json(self) -> object:
        """The checkpoint the entry carries, as JSON: a tool result's ``details["checkpoint"]`` or a
        checkpoint ``custom`` entry's data; ``None`` otherwise."""
        ...


def checkpoint_of(entry: CheckpointCarrier) -> Checkpoint | None:
    """The checkpoint an entry carries: a tool result's ``details["checkpoint"]`` or a checkpoint
    ``custom`` entry; None for any other entry."""
    return Checkpoint.from_json(entry.checkpoint_json())


def recorded_changes(entries: Iterable[CheckpointCarrier]) -> list[RecordedChange]:
    """Every file change in ``entries``, in their order."""
    out: list[RecordedChange] = []
    for order, entry in enumerate(entries):
        checkpoint = checkpoint_of(entry)
        if checkpoint is None:
            continue
        entry_id = str(entry.id)
        out.extend(RecordedChange(entry_id, order, checkpoint.kind, change) for change in checkpoint.files)
    return out
