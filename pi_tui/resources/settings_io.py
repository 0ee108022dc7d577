"""Reading and atomically rewriting settings files under a directory lock."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_tui.resources.settings_schema import migrate_settings
from pi_tui.util import json_safe

__all__ = [
    "UnreadableSettings",
    "pi_settings_lock",
    "read_settings_file",
    "write_atomically",
]


class UnreadableSettings(Exception):
    """A settings file exists but is not a JSON object."""


def read_settings_file(path: Path) -> dict[str, Any]:
    """Read and migrate one settings file; a missing or blank file is ``{}``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UnreadableSettings(f"cannot read {path}: {exc.strerror or exc}") from exc
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return {}
    try:
        data = json_safe.loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableSettings(f"{path} is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise UnreadableSettings(f"{path} must contain a JSON object")
    return migrate_settings(data)


@contextlib.contextmanager
def pi_settings_lock(path: Path) -> Iterator[None]:
    """pi's own lock on a settings file (the ``<file>.lock`` directory of proper-lockfile), so a pi and
    a pi-tui rewriting the same file wait for each other instead of dropping each other's keys.

    pi holds it for a few milliseconds and counts one untouched for 10 s as left by a dead process; a
    write waits up to 2 s for it, then fails with a message (and the next write tries again).
    """
    from pi_tui.ai.auth_lock import hold_lock  # writers only: off start-up

    with hold_lock(path, wait_s=2.0, stale_s=10.0):
        yield


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a reader never sees a half-written file.

    A symbolic link (settings kept in a dotfiles repository) is followed and stays a link; the file's
    mode is kept (see `pi_tui.util.atomic_file`).
    """
    from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

    replace_file_bytes(path, text.encode("utf-8"))
