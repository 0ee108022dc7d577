"""Where pi-tui keeps its per-user configuration (pi's "agent dir").

``PI_CODING_AGENT_DIR`` wins when set (``~`` is expanded, as pi does); otherwise ``~/.pi/agent``.
Nothing here creates directories: callers that write create what they need.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["AGENT_DIR_ENV", "agent_dir", "models_json_path", "auth_json_path"]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def agent_dir() -> Path:
    """The agent directory, read from the environment on every call (tests change it per test)."""
    configured = os.environ.get(AGENT_DIR_ENV, "").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return Path.home() / ".pi" / "agent"


def models_json_path(base: Path | None = None) -> Path:
    """``models.json`` inside ``base`` (default: the agent dir)."""
    return (base if base is not None else agent_dir()) / "models.json"


def auth_json_path(base: Path | None = None) -> Path:
    """``auth.json`` inside ``base`` (default: the agent dir)."""
    return (base if base is not None else agent_dir()) / "auth.json"
