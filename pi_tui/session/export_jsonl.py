"""``/export <file>.jsonl``: the active branch as a session file of its own, as pi 0.87.1 writes it.

A fresh header (this session's id and working directory, the export's time) and the entries from the
root to the leaf, each one's ``parentId`` set to the entry before it, so the file reads as one straight
conversation. The session itself is not changed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from .entries import CURRENT_VERSION, SessionHeader, dumps_line, entry_to_line, header_to_line
from .errors import SessionError
from .manager import SessionManager

__all__ = ["export_branch_jsonl"]


def export_branch_jsonl(manager: SessionManager, out_path: str | Path | None = None) -> Path:
    """Write the active branch of ``manager`` as JSONL and return where it went.

    Args:
        manager: The open session.
        out_path: Where to write (folders are created); default ``session-<time>.jsonl`` in the cwd.
            An existing file there is replaced whole (never left half-written).

    Raises:
        SessionError: ``out_path`` is the session's own file.
    """
    now = datetime.now(UTC)
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if out_path is None:
        out_path = f"session-{stamp.replace(':', '-').replace('.', '-')}.jsonl"
    target = Path(out_path).expanduser()
    if not target.is_absolute():
        target = Path.cwd() / target
    _refuse_own_file(manager, target)
    header = SessionHeader(version=CURRENT_VERSION, id=manager.id, timestamp=stamp, cwd=manager.cwd)
    lines = [header_to_line(header)]
    parent: str | None = None
    for entry in manager.get_branch():
        data = json.loads(entry_to_line(entry))
        data["parentId"] = parent
        lines.append(dumps_line(data))
        parent = entry.id
    target.parent.mkdir(parents=True, exist_ok=True)
    from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

    replace_file_bytes(target, "".join(line + "\n" for line in lines).encode("utf-8"))
    return target


def _refuse_own_file(manager: SessionManager, target: Path) -> None:
    """The export must not replace the session file it is made from (through a link or another spelling too)."""
    own = manager.path
    if own is None:
        return
    try:
        same = target.exists() and target.samefile(own)
    except OSError:
        same = False
    if same:
        raise SessionError(
            f"{target} is the session being exported; nothing was written. Choose another file name."
        )
