"""The ``checkpoints`` settings: what is recorded and how much time and space it may take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["CheckpointLimits", "SettingsSource"]


class SettingsSource(Protocol):
    """What the limits are read from: the session's `SettingsManager` (a layer this one may not import)."""

    def get(self, key: str, default: object = None) -> object:
        """The merged value of a top-level setting, or ``default``."""
        ...


@dataclass(frozen=True, slots=True)
class CheckpointLimits:
    """Settings under ``"checkpoints"`` in settings.json (all optional).

    Attributes:
        enabled: Record checkpoints at all (``enabled``).
        max_file_bytes: A file larger than this is noted, not stored, by a command snapshot
            (``maxFileBytes``; ``edit`` and ``write`` always store what they wrote).
        snapshot_ms: A command snapshot (list, stat, hash) stops after this long and says it is partial
            (``snapshotTimeoutMs``); the next snapshot continues where it stopped.
        max_files: A command snapshot looks at no more files than this (``maxFiles``).
        budget_mb: The store's size budget; past it, garbage collection also drops the snapshot
            baselines (``budgetMb``).
    """

    enabled: bool = True
    max_file_bytes: int = 1024 * 1024
    snapshot_ms: int = 2000
    max_files: int = 20_000
    budget_mb: int = 512

    @classmethod
    def from_settings(cls, settings: SettingsSource | None) -> CheckpointLimits:
        """Read ``settings.get("checkpoints")``; bad values fall back to the defaults."""
        raw = settings.get("checkpoints", {}) if settings is not None else {}
        if not isinstance(raw, dict):
            return cls()
        defaults = cls()

        def number(key: str, default: int) -> int:
            value = raw.get(key)
            return (
                int(value)
                if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
                else default
            )

        enabled = raw.get("enabled")
        return cls(
            enabled=enabled if isinstance(enabled, bool) else True,
            max_file_bytes=number("maxFileBytes", defaults.max_file_bytes),
            snapshot_ms=number("snapshotTimeoutMs", defaults.snapshot_ms),
            max_files=number("maxFiles", defaults.max_files),
            budget_mb=number("budgetMb", defaults.budget_mb),
        )
