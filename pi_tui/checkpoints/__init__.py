"""File checkpoints on the session tree: a content-addressed store of file contents, the records that
cite it from the session file, and the planning of a rewind (`docs/user-guide.md`, "Rewinding").

Imports only the standard library and `pi_tui.util` (the file listing follows `pi_tui.tools.walk`'s rules).
"""

from __future__ import annotations

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
