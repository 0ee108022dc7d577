"""Recording the files an extension tool changes, so ``/undo``, ``/diff`` and rewinds cover them too.

`pi_tui.extensions.api.track_file_changes` is the public entry point; see ``docs/extensions.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pi_tui.util.json_types import JsonObject

from .recorder import Checkpointer
from .records import CHECKPOINT_KEY

__all__ = ["FileChangeTracker"]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


class FileChangeTracker:
    """Reads ``paths`` when created; `details` reads them again and records what changed.

    Args:
        checkpointer: The session's `Checkpointer` (None: recording is off; `details` returns ``{}``).
        paths: The files the tool is about to change (relative to ``cwd`` or absolute).
        kind: The name the change is recorded under (the tool's name).
    """

    def __init__(self, checkpointer: Checkpointer | None, paths: Sequence[str | Path], kind: str) -> None:
        self.checkpointer = checkpointer if checkpointer is not None and checkpointer.enabled else None
        self.kind = kind
        self.paths: list[Path] = []
        self._before: list[bytes | None] = []
        if self.checkpointer is not None:
            self.paths = [self.checkpointer.absolute(str(p)) for p in paths]
            self._before = [_read(p) for p in self.paths]

    def details(self, details: JsonObject | None = None) -> JsonObject:
        """``details`` (or a new dict) with the checkpoint added: return it as the tool result's
        ``details``. Call once, after the tool changed the files."""
        out = dict(details or {})
        if self.checkpointer is None:
            return out
        changes = [(p, b, _read(p)) for p, b in zip(self.paths, self._before, strict=True)]
        changes = [(p, b, a) for p, b, a in changes if b != a]
        out[CHECKPOINT_KEY] = self.checkpointer.record_files(list(changes), self.kind)
        return out
