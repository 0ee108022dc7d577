"""Reading pi-tui's settings from a bundled extension (not an extension itself).

The extension API has no settings accessor, so the bundled extensions read the same two files pi-tui
reads: ``settings.json`` in the agent directory (``$PI_CODING_AGENT_DIR``, default ``~/.pi/agent``) and,
when the project is trusted (``ctx.is_project_trusted()``), ``<cwd>/.pi/settings.json``. They are merged
as pi-tui merges them: the project wins, objects merge one level deep. A file that is missing or does not
parse counts as empty (pi-tui itself reports broken settings files).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_tui.extensions.api import decode_json

__all__ = ["read_settings", "section"]


def _agent_dir() -> Path:
    configured = os.environ.get("PI_CODING_AGENT_DIR", "").strip()
    return Path(os.path.expanduser(configured)) if configured else Path.home() / ".pi" / "agent"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = decode_json(path.read_text(encoding="utf-8").removeprefix("\ufeff") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_settings(ctx: Any) -> dict[str, Any]:
    """The merged settings, as ``ctx`` (an ``ExtensionContext``) sees the project."""
    merged = _read(_agent_dir() / "settings.json")
    if ctx.is_project_trusted():
        for key, value in _read(Path(ctx.cwd) / ".pi" / "settings.json").items():
            base = merged.get(key)
            merged[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    return merged


def section(ctx: Any, name: str) -> dict[str, Any]:
    """One settings object (``{"permissionGate": {...}}`` → its dict), empty when absent or not an object."""
    value = read_settings(ctx).get(name)
    return value if isinstance(value, dict) else {}
