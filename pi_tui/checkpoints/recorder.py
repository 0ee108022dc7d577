"""`Checkpointer`: records file changes of one project into the store and says how to cite them.

``edit`` and ``write`` call `Checkpointer.record_file` under the file's mutation lock with the bytes
they read and wrote; ``bash`` and ``!cmd`` are covered by `Checkpointer.command_snapshot` before and
`Checkpointer.command_changes` after. Each returns the JSON that goes into the tool result's
``details["checkpoint"]`` (or a checkpoint ``custom`` entry).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.util.json_types import JsonObject

from .limits import CheckpointLimits, SettingsSource
from .store import BlobStore

if TYPE_CHECKING:
    from .snapshot import Snapshot, Snapshotter

# The records and the project snapshots are imported when something is recorded: every run builds a
# Checkpointer, most never change a file.

__all__ = ["Checkpointer", "store_root"]


def store_root(agent_dir: Path) -> Path:
    """Where the checkpoint store of an agent dir lives."""
    return Path(agent_dir) / "checkpoints"


class Checkpointer:
    """Checkpoints for the project at ``cwd``, stored under ``root`` (``<agent dir>/checkpoints``).

    Args:
        cwd: The session's working directory; recorded paths are relative to it when inside it.
        root: The store directory.
        limits: The ``checkpoints`` settings.
    """

    def __init__(self, cwd: Path, root: Path, limits: CheckpointLimits | None = None) -> None:
        self.cwd = Path(os.path.abspath(cwd))
        self.root = Path(root)
        self.limits = limits or CheckpointLimits()
        self.store = BlobStore(self.root)
        self._snapshotter: Snapshotter | None = None
        self._snap_lock = threading.Lock()

    @classmethod
    def for_settings(cls, cwd: Path, settings: SettingsSource | None, agent_dir: Path | None = None) -> Checkpointer:
        if agent_dir is None:
            from pi_tui.ai.paths import agent_dir as default_agent_dir

            agent_dir = default_agent_dir()
        return cls(cwd, store_root(agent_dir), CheckpointLimits.from_settings(settings))

    @property
    def enabled(self) -> bool:
        return self.limits.enabled

    # --- paths ---------------------------------------------------------------------------------

    def rel(self, path: Path | str) -> str:
        """How a path is recorded: relative to cwd (POSIX) when inside it, else absolute."""
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(self.cwd).as_posix()
        except ValueError:
            return str(absolute)

    def absolute(self, recorded: str) -> Path:
        path = Path(recorded)
        return path if path.is_absolute() else self.cwd / path

    # --- edit / write / extension tools ----------------------------------------------------------

    def record_file(
        self, path: Path | str, before: bytes | None, after: bytes | None, kind: str
    ) -> JsonObject:
        """Store ``before`` and ``after`` (None: the file did not exist / was deleted) and return the
        checkpoint JSON for the tool result's ``details["checkpoint"]``."""
        return self.record_files([(path, before, after)], kind)

    def record_files(
        self, changes: list[tuple[Path | str, bytes | None, bytes | None]], kind: str
    ) -> JsonObject:
        """`record_file` for several files at once (one checkpoint)."""
        from .records import Checkpoint, FileChange

        files = []
        for path, before, after in changes:
            b = self.store.put(before) if before is not None else None
            a = self.store.put(after) if after is not None else None
            if b != a or before is None or after is None:
                files.append(FileChange(self.rel(path), b, a))
        return Checkpoint(kind, files).to_json()

    # --- bash and !cmd ---------------------------------------------------------------------------

    @property
    def snapshotter(self) -> Snapshotter:
        if self._snapshotter is None:
            from .snapshot import Snapshotter

            manifest = self.root / "manifests" / Snapshotter.manifest_name(self.cwd)
            self._snapshotter = Snapshotter(self.cwd, self.store, manifest, self.limits)
        return self._snapshotter

    def command_snapshot(self) -> Snapshot:
        """The project before a command runs (call from a worker thread: it stats every file)."""
        with self._snap_lock:
            return self.snapshotter.take(save=False)

    def flush(self) -> None:
        """Write the snapshot baseline now (on close), so the next process starts from it."""
        if self._snapshotter is not None:
            with self._snap_lock:
                self._snapshotter.flush()

    def command_changes(self, before: Snapshot | None, kind: str) -> JsonObject:
        """The checkpoint JSON of a command: what changed since ``before`` (None: since the last
        snapshot of this project, from this process or an earlier one)."""
        from .records import Checkpoint
        from .snapshot import diff_snapshots

        with self._snap_lock:
            if before is None:
                before = self.snapshotter.last()
            after = self.snapshotter.take(save=True)
        if before is None:
            return Checkpoint(kind, [], partial=True, note="no earlier snapshot of this project").to_json()
        changes, partial = diff_snapshots(before, after)
        # A file that left the listing but is still there became ignored: it was not deleted.
        changes = [
            c for c in changes if c.after is not None or c.skipped or not self.absolute(c.path).exists()
        ]
        return Checkpoint(kind, changes, partial=partial).to_json()
