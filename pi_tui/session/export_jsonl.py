"""``/export <file>.jsonl``: the active branch as a session file of its own, as pi 0.87.1 writes it.

A fresh header (this session's id and working directory, the export's time) and the entries from the
root to the leaf, each one's ``parentId`` set to the entry before it, so the file reads as one straight
conversation. The session itself is not changed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from .entries import CURRENT_VERSION, dumps_line, entry_to_line
from .manager import SessionManager

__all__ = ["export_branch_jsonl"]


def export_branch_jsonl(manager: SessionManager, out_path: str | Path | None = None) -> Path:
    """Write the active branch of ``manager`` as JSONL and return where it went.

    Args:
        manager: The open session.
        out_path: Where to write (folders are created); default ``session-<time>.jsonl`` in the cwd.
    """
    now = datetime.now(UTC)
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if out_path is None:
        out_path = f"session-{stamp.replace(':', '-').replace('.', '-')}.jsonl"
    target = Path(out_path).expanduser()
    if not target.is_absolute():
        target = Path.cwd() / target
    header = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": manager.id,
        "timestamp": stamp,
        "cwd": manager.cwd,
    }
    lines = [dumps_line(header)]
    parent: str | None = None
    for entry in manager.get_branch():
        data = json.loads(entry_to_line(entry))
        data["parentId"] = parent
        lines.append(dumps_line(data))
        parent = entry.id
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return target
