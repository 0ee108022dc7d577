"""Where the project's shared material (pi's real session files) is: beside the clone, or /work/shared.

CI puts ``shared/`` beside the clone; the engineers' checkouts (/work/main, /work/wt/NAME) find it at
/work/shared. Every test reading pi's sessions takes the folder from here, so none looks only at one place
and skips (a failure under ``CI=true``) where the other is the one present.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PI_SESSIONS"]

_RELATIVE = Path("shared") / "fixtures" / "pi-sessions"
_REPO = Path(__file__).resolve().parents[1]

PI_SESSIONS = next(
    (p for p in (_REPO.parent / _RELATIVE, Path("/work") / _RELATIVE) if p.exists()),
    Path("/work") / _RELATIVE,
)
"""pi 0.58's session files: ``large-session.jsonl``, ``before-compaction.jsonl``."""
