"""Planning and applying a rewind of the project's files to their state at a session entry.

The state of a file at entry E: when E is on the current branch and the file changed after E on it,
the ``before`` of the first such change (exactly what was on disk then, your own edits included);
otherwise the ``after`` of the last change to it on the path from the root to E; a file the agent
changed only elsewhere (on another branch) is as it was before the agent first touched it (the
``before`` of its first change in the file). What the agent last left a file as
is the ``after`` of its latest change anywhere in the session (restores included). When the file on
disk is neither that nor the target, someone else changed it: that is a conflict, and it is never
overwritten without consent. Every restore stores what it overwrites, so it can itself be undone.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .recorder import Checkpointer
from .records import Checkpoint, FileChange, RecordedChange, recorded_changes
from .store import BlobMissingError, content_hash

__all__ = [
    "FileChangedError",
    "FilePlan",
    "RewindPlan",
    "Resolution",
    "RestoreOutcome",
    "plan_restore",
    "plan_undo",
    "apply_restore",
    "file_diff",
]

Resolution = Literal["restore", "keep"]
"""A user's answer for a conflicting file: overwrite it with the target state, or leave it."""

_MAX_DIFF_LINES = 200


@dataclass(slots=True)
class FilePlan:
    """One file a rewind would change.

    Attributes:
        path: As recorded (relative to cwd, or absolute).
        current: Hash of the file on disk now (None: absent).
        target: Hash of the content to restore (None: the file must not exist).
        expected: What the agent last left it as (None: deleted); ``unknown`` when that was not stored.
        conflict: The file on disk is not what the agent left: someone else changed it.
        diff: For a conflict, the unified diff from the file on disk to the target.
    """

    path: str
    current: str | None
    target: str | None
    expected: str | None
    conflict: bool
    diff: str = ""


@dataclass(slots=True)
class RewindPlan:
    """What restoring the files to ``entry_id``'s state would do."""

    entry_id: str | None
    files: list[FilePlan] = field(default_factory=list)
    unrestorable: list[tuple[str, str]] = field(default_factory=list)
    """``(path, reason)`` for changes whose content was never stored (binary, large, unknown, missing)."""

    @property
    def conflicts(self) -> list[FilePlan]:
        return [f for f in self.files if f.conflict]

    @property
    def empty(self) -> bool:
        return not self.files


def _disk_hash(path: Path) -> tuple[str | None, bytes | None]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except IsADirectoryError:
        return "<directory>", None
    return content_hash(data), data


def plan_restore(
    checkpointer: Checkpointer,
    all_entries: Sequence[Any],
    path_entries: Sequence[Any],
    entry_id: str | None,
    current_branch: Sequence[Any] = (),
) -> RewindPlan:
    """Plan restoring every file the session changed to its state at the end of ``path_entries``.

    Args:
        checkpointer: The project's store.
        all_entries: Every entry of the session file, in file order.
        path_entries: The entries from the root to the target entry (empty: before the first entry).
        entry_id: The target entry (for the record).
        current_branch: The entries from the root to the current leaf.
    """
    changes = recorded_changes(all_entries)
    on_path = {e.id for e in path_entries}
    branch_ids = [e.id for e in current_branch]
    later: set[Any] = set()
    if entry_id is None:
        later = set(branch_ids)
    elif entry_id in branch_ids:
        later = set(branch_ids[branch_ids.index(entry_id) + 1 :])
    first: dict[str, RecordedChange] = {}
    last: dict[str, RecordedChange] = {}
    last_on_path: dict[str, RecordedChange] = {}
    first_later: dict[str, RecordedChange] = {}
    for rc in changes:
        first.setdefault(rc.change.path, rc)
        last[rc.change.path] = rc
        if rc.entry_id in on_path:
            last_on_path[rc.change.path] = rc
        if rc.entry_id in later:
            first_later.setdefault(rc.change.path, rc)
    plan = RewindPlan(entry_id)
    for path in sorted(first):
        if path in first_later:  # the disk as it was when the agent next touched the file
            change, target_side = first_later[path].change, "before"
        elif path in last_on_path:
            change, target_side = last_on_path[path].change, "after"
        else:
            change, target_side = first[path].change, "before"
        if change.skipped:
            plan.unrestorable.append((path, change.skipped))
            continue
        target = change.before if target_side == "before" else change.after
        expected_change = last[path].change
        expected = None if expected_change.skipped else expected_change.after
        current, data = _disk_hash(checkpointer.absolute(path))
        if current == target:
            continue
        if target is not None and not checkpointer.store.has(target):
            plan.unrestorable.append((path, "content no longer in the store"))
            continue
        conflict = expected_change.skipped is not None or current != expected
        diff = file_diff(checkpointer, path, data, target) if conflict else ""
        plan.files.append(FilePlan(path, current, target, expected, conflict, diff))
    return plan


def file_diff(checkpointer: Checkpointer, path: str, current: bytes | None, target: str | None) -> str:
    """A unified diff from the file as it is (``current``) to the content ``target`` would restore."""
    try:
        new = checkpointer.store.get(target) if target is not None else b""
    except BlobMissingError as exc:
        return str(exc)
    old = current or b""
    if b"\0" in old[:8000] or b"\0" in new[:8000]:
        return f"Binary file {path} differs"
    lines = list(
        difflib.unified_diff(
            old.decode("utf-8", "replace").splitlines(keepends=True),
            new.decode("utf-8", "replace").splitlines(keepends=True),
            fromfile=f"{path} (on disk now)" if current is not None else "/dev/null",
            tofile=f"{path} (checkpoint)" if target is not None else "/dev/null",
        )
    )
    if len(lines) > _MAX_DIFF_LINES:
        lines = lines[:_MAX_DIFF_LINES] + [f"... {len(lines) - _MAX_DIFF_LINES} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(slots=True)
class RestoreOutcome:
    checkpoint: Checkpoint
    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """``(path, error)`` for files that could not be written (the others are still restored)."""


class FileChangedError(OSError):
    """A planned file no longer holds what the plan saw: it is not written."""


def apply_restore(
    checkpointer: Checkpointer,
    plan: RewindPlan,
    resolutions: Mapping[str, Resolution],
    *,
    force: bool = False,
) -> RestoreOutcome:
    """Write every planned file; a conflicting one only when ``force`` or its resolution is ``restore``.

    What is on disk is stored first, so the returned restore checkpoint can undo this restore. A file
    that cannot be written, or that changed on disk since the plan was made (unless ``force``), is
    reported in ``failed`` and the rest go on (the checkpoint lists only what
    was written, so it always describes the disk).
    """
    outcome = RestoreOutcome(Checkpoint("restore", target=plan.entry_id))
    for item in plan.files:
        if item.conflict and not force and resolutions.get(item.path) != "restore":
            outcome.kept.append(item.path)
            continue
        absolute = checkpointer.absolute(item.path)
        try:
            current, data = _disk_hash(absolute)
            if current == "<directory>":
                raise IsADirectoryError(f"{item.path} is a directory now")
            if current != item.current and not force:
                # Saved (by the user, an editor, a formatter) after the plan was shown or settled:
                # a newer change nobody was asked about, so it stays.
                raise FileChangedError(
                    f"{item.path} changed on disk while the rewind was running; left as it is now"
                )
            before = checkpointer.store.put(data) if data is not None else None
            if item.target is None:
                if current is not None:
                    absolute.unlink()
            else:
                content = checkpointer.store.get(item.target)
                absolute.parent.mkdir(parents=True, exist_ok=True)
                # As the tools write: whole or not at all, through links, mode and owner kept.
                from pi_tui.util.atomic_file import replace_file_bytes

                replace_file_bytes(absolute, content)
        except (OSError, BlobMissingError) as exc:
            outcome.failed.append((item.path, str(exc)))
            continue
        outcome.checkpoint.files.append(FileChange(item.path, before, item.target))
        outcome.restored.append(item.path)
    return outcome


def plan_undo(checkpointer: Checkpointer, record: Checkpoint, record_id: str) -> RewindPlan:
    """Plan undoing one restore: every file it wrote goes back to what it overwrote.

    A file changed since the restore (neither what the restore wrote nor what it overwrote) is a
    conflict.
    """
    plan = RewindPlan(record_id)
    for change in record.files:
        current, data = _disk_hash(checkpointer.absolute(change.path))
        if current == change.before:
            continue
        if change.before is not None and not checkpointer.store.has(change.before):
            plan.unrestorable.append((change.path, "content no longer in the store"))
            continue
        conflict = current != change.after
        diff = file_diff(checkpointer, change.path, data, change.before) if conflict else ""
        plan.files.append(FilePlan(change.path, current, change.before, change.after, conflict, diff))
    return plan
