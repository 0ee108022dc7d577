"""``/diff``: what the agent changed, per prompt and per file, and the net diff of each file."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from .records import FileChange
from .store import BlobMissingError, BlobStore

__all__ = ["render_changes"]

_MAX_DIFF_LINES = 400


def _lines(store: BlobStore, digest: str | None) -> list[str] | None:
    if digest is None:
        return []
    try:
        data = store.get(digest)
    except BlobMissingError:
        return None
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", "replace").splitlines(keepends=True)


def _counts(store: BlobStore, change: FileChange) -> str:
    if change.skipped:
        return f"({change.skipped}, not stored)"
    if change.before is None:
        state = "created"
    elif change.after is None:
        state = "deleted"
    else:
        state = "modified"
    old, new = _lines(store, change.before), _lines(store, change.after)
    if old is None or new is None:
        return state
    added = removed = 0
    for line in difflib.unified_diff(old, new, n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"{state} +{added} -{removed}"


def render_changes(
    store: BlobStore, groups: Sequence[tuple[str, Sequence[tuple[str, FileChange]]]], only: str | None = None
) -> str:
    """Text for ``/diff``.

    Args:
        store: The blob store the changes cite.
        groups: ``(prompt text, [(kind, change), ...])`` in order (`AgentSession.checkpoint_changes`).
        only: Show just this path.
    """
    picked = [
        (prompt, [(k, c) for k, c in changes if only is None or c.path == only]) for prompt, changes in groups
    ]
    picked = [(p, c) for p, c in picked if c]
    if not picked:
        return (
            "No file changes recorded on this branch." if only is None else f"No recorded changes to {only}."
        )
    out: list[str] = []
    first: dict[str, FileChange] = {}
    last: dict[str, FileChange] = {}
    for number, (prompt, changes) in enumerate(picked, 1):
        title = prompt.strip().splitlines()[0] if prompt.strip() else "(empty prompt)"
        out.append(f"Prompt {number}: {title[:80]}")
        for kind, change in changes:
            out.append(f"  {change.path}  [{kind}] {_counts(store, change)}")
            first.setdefault(change.path, change)
            last[change.path] = change
    out.append("")
    for path in first:
        before, after = first[path].before, last[path].after
        if first[path].skipped or last[path].skipped:
            out.append(f"{path}: content not stored ({first[path].skipped or last[path].skipped})")
            continue
        old, new = _lines(store, before), _lines(store, after)
        if old is None or new is None:
            out.append(f"Binary or missing content: {path}")
            continue
        diff: list[Any] = list(
            difflib.unified_diff(
                old,
                new,
                fromfile=f"a/{path}" if before is not None else "/dev/null",
                tofile=f"b/{path}" if after is not None else "/dev/null",
            )
        )
        if not diff:
            out.append(f"{path}: back to how it was")
            continue
        if len(diff) > _MAX_DIFF_LINES:
            diff = diff[:_MAX_DIFF_LINES] + [f"... {len(diff) - _MAX_DIFF_LINES} more lines\n"]
        out.append("".join(line if line.endswith("\n") else line + "\n" for line in diff).rstrip("\n"))
    return "\n".join(out)
