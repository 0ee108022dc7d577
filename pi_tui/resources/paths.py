"""``~`` handling for configured paths, and the agent directory (re-exported from the ai layer)."""

from __future__ import annotations

import os
from pathlib import Path

from pi_tui.ai.paths import AGENT_DIR_ENV, agent_dir

__all__ = ["AGENT_DIR_ENV", "CONFIG_DIR_NAME", "agent_dir", "expand_home", "resolve_path"]

CONFIG_DIR_NAME = ".pi"
"""The per-project configuration directory below the working directory."""


def expand_home(value: str) -> str:
    """Expand a leading ``~`` (alone or followed by a separator) to the home directory.

    ``~user`` forms are left alone on purpose: configuration is per user, and resolving other
    users' homes would only surprise.
    """
    if value == "~":
        return str(Path.home())
    if value.startswith(("~/", "~\\")):
        return str(Path.home() / value[2:])
    return value


def resolve_path(value: str | os.PathLike[str], base: Path) -> Path:
    """Resolve a configured path: ``~`` expanded, relative paths taken against ``base``.

    The result is absolute but symlinks are kept, so paths shown to the user look like what they
    typed.
    """
    expanded = Path(expand_home(os.fspath(value).strip()))
    if not expanded.is_absolute():
        expanded = base / expanded
    return Path(os.path.normpath(expanded))
