"""Cheap before/after snapshots of a project's files around a shell command.

The files are the ones grep and find would search (`pi_tui.tools.walk`: hidden files in, ``.git``
out, ``.gitignore``/``.ignore`` obeyed): in a repository, the tracked and the untracked-but-not-ignored
ones. A baseline manifest per project (path → size, mtime, inode, content hash) is kept in the store,
so a snapshot only stats every file and hashes (and stores) the ones whose stat changed; the first
snapshot of a project stores every file once. A snapshot is bounded in time and file count; past the
bound it is marked partial and files it did not reach are unknown (never reported as created or
deleted). Binary and very large files are noted by their stat, never stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.util import json_safe
from pi_tui.util.ignore import IGNORE_FILE_NAMES
from pi_tui.util.json_types import JsonObject

from .limits import CheckpointLimits
from .listing import DirectoryCache, list_files
from .records import FileChange
from .store import BlobStore, content_hash

__all__ = ["FileState", "Snapshot", "Snapshotter", "diff_snapshots"]

_SAVE_EVERY_S = 5.0
_BINARY_SNIFF = 8000  # git's heuristic: a NUL byte in the first 8000 bytes means binary


@dataclass(frozen=True, slots=True)
class FileState:
    """One file as a snapshot saw it. ``digest`` is None when the content was not hashed."""

    size: int
    mtime_ns: int
    ino: int
    digest: str | None = None
    skipped: str | None = None  # "binary", "large" or "unknown" (not reached in time)

    def same_stat(self, st: os.stat_result) -> bool:
        return self.size == st.st_size and self.mtime_ns == st.st_mtime_ns and self.ino == st.st_ino


@dataclass(slots=True)
class Snapshot:
    files: dict[str, FileState] = field(default_factory=dict)
    complete: bool = True
    """Every file was listed (a partial listing cannot tell a deleted file from one not reached)."""
    partial: bool = False
    """The time or file bound was hit (some contents are unknown)."""


class Snapshotter:
    """Snapshots of ``root``, with the baseline manifest at ``manifest_path``."""

    def __init__(self, root: Path, store: BlobStore, manifest_path: Path, limits: CheckpointLimits) -> None:
        self.root = Path(os.path.abspath(root))
        self.store = store
        self.manifest_path = manifest_path
        self.limits = limits
        self._last: Snapshot | None = None
        self._stored: set[str] = set()  # digests known to be in the store (checked once per process)
        self._dirty = False
        self._saved_at = 0.0
        self._dirs = DirectoryCache()

    @staticmethod
    def manifest_name(root: Path) -> str:
        return hashlib.sha256(str(Path(os.path.abspath(root))).encode()).hexdigest()[:24] + ".json"

    def last(self) -> Snapshot | None:
        """The previous snapshot (this process's, or the manifest on disk)."""
        if self._last is None:
            self._last = self._load_manifest()
        return self._last

    def take(self, *, save: bool = True) -> Snapshot:
        """Look at the project now: stat everything, hash and store what changed since the last look."""
        previous = self.last() or Snapshot(complete=False)
        snap = self._take(previous)
        if _ignore_files_changed(previous, snap):
            # An ignore file edited in place leaves its directory's time alone: list everything afresh.
            self._dirs.clear()
            snap = self._take(previous)
        self._last = snap
        if save:
            # The manifest only spares a later process the hashing: write it at most every few seconds
            # (and on `flush`), not after every command.
            self._dirty = True
            if time.monotonic() - self._saved_at > _SAVE_EVERY_S:
                self.flush()
        return snap

    def _take(self, previous: Snapshot) -> Snapshot:
        deadline = time.monotonic() + self.limits.snapshot_ms / 1000
        snap = Snapshot()
        listed, snap.complete = list_files(self.root, self._dirs, deadline)
        if len(listed) > self.limits.max_files:
            listed, snap.complete = listed[: self.limits.max_files], False
        for rel, path in listed:
            try:
                st = os.stat(path)
            except OSError:
                continue
            old = previous.files.get(rel)
            if old is not None and old.same_stat(st) and old.skipped != "unknown":
                if (
                    old.digest is None
                    or old.skipped
                    or old.digest in self._stored
                    or self.store.has(old.digest)
                ):
                    if old.digest is not None and not old.skipped:
                        self._stored.add(old.digest)
                    snap.files[rel] = old
                    continue
            if time.monotonic() > deadline:
                snap.files[rel] = FileState(st.st_size, st.st_mtime_ns, st.st_ino, None, "unknown")
                snap.partial = True
                continue
            snap.files[rel] = self._read(path, st)
        if not snap.complete:
            snap.partial = True
            # Keep what the last look knew about files this one did not reach.
            for rel, state in previous.files.items():
                snap.files.setdefault(rel, state)
        return snap

    def flush(self) -> None:
        """Write the baseline manifest if the last snapshot has not been written yet."""
        if self._dirty and self._last is not None:
            self._save_manifest(self._last)
            self._dirty = False
            self._saved_at = time.monotonic()

    def _read(self, path: str, st: os.stat_result) -> FileState:
        if st.st_size > self.limits.max_file_bytes:
            return FileState(st.st_size, st.st_mtime_ns, st.st_ino, None, "large")
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return FileState(st.st_size, st.st_mtime_ns, st.st_ino, None, "unknown")
        if b"\0" in data[:_BINARY_SNIFF]:
            return FileState(st.st_size, st.st_mtime_ns, st.st_ino, content_hash(data), "binary")
        digest = self.store.put(data)
        self._stored.add(digest)
        return FileState(st.st_size, st.st_mtime_ns, st.st_ino, digest)

    def _load_manifest(self) -> Snapshot | None:
        try:
            raw = json_safe.loads(self.manifest_path.read_text("utf-8"))
            files = {
                rel: FileState(int(v[0]), int(v[1]), int(v[2]), v[3], v[4] if len(v) > 4 else None)
                for rel, v in raw["files"].items()
            }
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None
        return Snapshot(files=files, complete=bool(raw.get("complete", False)))

    def _save_manifest(self, snap: Snapshot) -> None:
        data: JsonObject = {
            "root": str(self.root),
            "complete": snap.complete,
            "files": {
                rel: [s.size, s.mtime_ns, s.ino, s.digest] + ([s.skipped] if s.skipped else [])
                for rel, s in snap.files.items()
            },
        }
        try:
            self.manifest_path.parent.mkdir(parents=True, exist_ok=True)
            from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

            # A fresh temporary name per write (two pi-tuis snapshotting one project never share one),
            # removed again should the write be killed.
            replace_file_bytes(
                self.manifest_path, json.dumps(data, separators=(",", ":")).encode(), durable=False
            )
        except OSError:
            pass  # the manifest is a cache: the next snapshot hashes again


def _ignore_files_changed(previous: Snapshot, snap: Snapshot) -> bool:
    def ignore_files(s: Snapshot) -> dict[str, tuple[int, int, int]]:
        return {
            rel: (f.size, f.mtime_ns, f.ino)
            for rel, f in s.files.items()
            if rel.rsplit("/", 1)[-1] in IGNORE_FILE_NAMES
        }

    return bool(previous.files) and ignore_files(previous) != ignore_files(snap)


def diff_snapshots(before: Snapshot, after: Snapshot) -> tuple[list[FileChange], bool]:
    """The changes from ``before`` to ``after`` and whether the result may be incomplete."""
    changes: list[FileChange] = []
    partial = before.partial or after.partial or not before.complete or not after.complete
    for rel, new in after.files.items():
        old = before.files.get(rel)
        if old is None:
            if not before.complete:
                continue  # not reached before: cannot tell a new file from an unseen one
            changes.append(_change(rel, None, new))
        elif _same(old, new):
            continue
        else:
            changes.append(_change(rel, old, new))
    if after.complete:
        for rel, old in before.files.items():
            if rel not in after.files:
                changes.append(_change(rel, old, None))
    changes.sort(key=lambda c: c.path)
    return changes, partial


def _same(old: FileState, new: FileState) -> bool:
    if old.digest is not None and new.digest is not None:
        return old.digest == new.digest
    return old.size == new.size and old.mtime_ns == new.mtime_ns and old.ino == new.ino


def _change(rel: str, old: FileState | None, new: FileState | None) -> FileChange:
    skipped = next((s.skipped for s in (old, new) if s is not None and s.skipped), None)
    if skipped:
        return FileChange(rel, None, None, skipped)
    return FileChange(rel, old.digest if old else None, new.digest if new else None)
