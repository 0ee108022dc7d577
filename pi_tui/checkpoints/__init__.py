"""File checkpoints on the session tree: a content-addressed store of file contents, the records that
cite it from the session file, and the planning of a rewind (`docs/user-guide.md`, "Rewinding").

Imports only the standard library and `pi_tui.util` (the file listing follows `pi_tui.tools.walk`'s rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.util.lazy import lazy_exports

if TYPE_CHECKING:
    from .gc import GcReport, collect_garbage, maybe_collect_garbage
    from .limits import CheckpointLimits
    from .recorder import Checkpointer, store_root
    from .records import (
        CHECKPOINT_KEY,
        CUSTOM_TYPE,
        Checkpoint,
        FileChange,
        RecordedChange,
        checkpoint_of,
        recorded_changes,
    )
    from .rewind import FilePlan, Resolution, RewindPlan, apply_restore, file_diff, plan_restore, plan_undo
    from .store import BlobMissingError, BlobStore, content_hash

__all__ = [
    "CHECKPOINT_KEY",
    "CUSTOM_TYPE",
    "BlobMissingError",
    "BlobStore",
    "Checkpoint",
    "CheckpointLimits",
    "Checkpointer",
    "FileChange",
    "FilePlan",
    "GcReport",
    "RecordedChange",
    "Resolution",
    "RewindPlan",
    "apply_restore",
    "checkpoint_of",
    "collect_garbage",
    "maybe_collect_garbage",
    "content_hash",
    "file_diff",
    "plan_restore",
    "plan_undo",
    "recorded_changes",
    "store_root",
]

# Lazy exports: a run that never rewinds needs the recorder, not the rewind planner, the garbage\n# collector or the project snapshots; importing the package must not load them.
_LAZY: dict[str, str] = {  # name -> the module that defines it, imported on first use
    "GcReport": ".gc",
    "collect_garbage": ".gc",
    "maybe_collect_garbage": ".gc",
    "CheckpointLimits": ".limits",
    "Checkpointer": ".recorder",
    "store_root": ".recorder",
    "CHECKPOINT_KEY": ".records",
    "CUSTOM_TYPE": ".records",
    "Checkpoint": ".records",
    "FileChange": ".records",
    "RecordedChange": ".records",
    "checkpoint_of": ".records",
    "recorded_changes": ".records",
    "FilePlan": ".rewind",
    "Resolution": ".rewind",
    "RewindPlan": ".rewind",
    "apply_restore": ".rewind",
    "file_diff": ".rewind",
    "plan_restore": ".rewind",
    "plan_undo": ".rewind",
    "BlobMissingError": ".store",
    "BlobStore": ".store",
    "content_hash": ".store",
}


__getattr__ = lazy_exports(__name__, _LAZY)
