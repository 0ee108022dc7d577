"""Garbage collection of the checkpoint store, and its size budget.

A blob is alive while a session file cites it (its hash appears in the file) or a project's snapshot
baseline does. Unreferenced blobs older than a grace period (a live session may have stored a blob
whose tool result is not written yet) are deleted. Past the size budget, the oldest snapshot
baselines are dropped too (the next command snapshot of that project stores its files again); blobs
that session files cite are never deleted, however large the store.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pi_tui.util import json_safe

from .store import BlobStore

__all__ = ["GcReport", "collect_garbage", "maybe_collect_garbage"]

_HASH = re.compile(rb"\b[0-9a-f]{64}\b")


@dataclass(slots=True)
class GcReport:
    blobs_before: int = 0
    blobs_deleted: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    manifests_dropped: int = 0
    leftovers_removed: int = 0  # temporary files of killed blob writes


def _session_refs(session_dirs: Iterable[Path]) -> set[str]:
    refs: set[str] = set()
    for folder in session_dirs:
        if not folder.is_dir():
            continue
        for path in folder.rglob("*.jsonl"):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if b"pi-tui.checkpoint" in data or b'"checkpoint"' in data:
                refs.update(m.decode() for m in _HASH.findall(data))
    return refs


def _manifest_refs(path: Path) -> set[str]:
    try:
        raw = json_safe.loads(path.read_text("utf-8"))
        return {v[3] for v in raw["files"].values() if isinstance(v[3], str)}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return set()


def collect_garbage(
    root: Path,
    session_dirs: Iterable[Path],
    *,
    budget_bytes: int,
    grace_s: float = 3600.0,
) -> GcReport:
    """Delete blobs nothing refers to; past ``budget_bytes`` drop old snapshot baselines as well.

    Args:
        root: The store directory (``<agent dir>/checkpoints``).
        session_dirs: Folders whose ``*.jsonl`` session files (searched recursively) may cite blobs.
        budget_bytes: The store's size budget.
        grace_s: Blobs younger than this are kept even when unreferenced.
    """
    store = BlobStore(root)
    report = GcReport()
    sessions = _session_refs(session_dirs)
    manifests = sorted((root / "manifests").glob("*.json"), key=lambda p: p.stat().st_mtime)
    blobs = {digest: path for digest, path in store.iter_blobs()}
    sizes = {}
    for digest, path in blobs.items():
        try:
            sizes[digest] = path.stat().st_size
        except OSError:
            sizes[digest] = 0
    report.blobs_before = len(blobs)
    report.bytes_before = sum(sizes.values())
    now = time.time()

    def sweep(alive: set[str]) -> None:
        for digest, path in list(blobs.items()):
            if digest in alive:
                continue
            try:
                if now - path.stat().st_mtime < grace_s:
                    continue
                path.unlink()
            except OSError:
                continue
            del blobs[digest]
            report.blobs_deleted += 1

    alive = sessions.union(*(_manifest_refs(m) for m in manifests))
    sweep(alive)
    while sum(sizes[d] for d in blobs) > budget_bytes and manifests:
        manifests.pop(0).unlink(missing_ok=True)
        report.manifests_dropped += 1
        sweep(sessions.union(*(_manifest_refs(m) for m in manifests)))
    report.bytes_after = sum(sizes[d] for d in blobs)
    report.leftovers_removed = store.remove_leftovers(grace_s, now)
    return report


_GC_EVERY_S = 24 * 3600


def maybe_collect_garbage(root: Path, session_dirs: Iterable[Path], *, budget_bytes: int) -> GcReport | None:
    """At most once a day: when the store is over its budget, collect garbage. None when skipped."""
    stamp = root / "last-gc"
    try:
        if not root.is_dir() or time.time() - stamp.stat().st_mtime < _GC_EVERY_S:
            return None
    except FileNotFoundError:
        pass
    try:
        stamp.touch()
    except OSError:
        return None
    if BlobStore(root).size_bytes() <= budget_bytes:
        return None
    return collect_garbage(root, session_dirs, budget_bytes=budget_bytes)
