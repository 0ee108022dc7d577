"""Inside tmux, warn when its settings keep modified Enter keys from reaching the app (as pi 0.87 does).

With ``extended-keys`` off, tmux sends Shift+Enter and Ctrl+Enter as a plain Enter (Alt+Enter still
arrives, as Escape + Enter); with ``extended-keys-format xterm`` it sends them in xterm's form, which
pi-tui reads too (`input_filter`), though pi advises csi-u. Nothing is said when tmux cannot be asked (no
``tmux`` command, a timeout).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

__all__ = ["tmux_keys_warning"]

TIMEOUT = 2.0
"""Seconds to wait for ``tmux show`` (pi's limit)."""


async def _show(option: str) -> str | None:
    """``tmux show -gv option``, or None when tmux does not answer."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "tmux",
            "show",
            "-gv",
            option,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None
    return out.decode(errors="replace").strip() if proc.returncode == 0 else None


async def tmux_keys_warning(env: Mapping[str, str] = os.environ) -> str | None:
    """The warning to show inside a tmux whose keyboard settings lose modified Enter keys, else None."""
    if not env.get("TMUX"):
        return None
    extended, key_format = await asyncio.gather(_show("extended-keys"), _show("extended-keys-format"))
    if extended is None:
        return None
    if extended not in ("on", "always"):
        return (
            "tmux extended-keys is off: Shift+Enter and Ctrl+Enter arrive as Enter (Ctrl+J still adds a "
            "line). Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux."
        )
    if key_format == "xterm":
        return (
            "tmux extended-keys-format is xterm; pi-tui reads modified keys best in csi-u. Add "
            "`set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux."
        )
    return None
