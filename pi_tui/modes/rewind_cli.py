"""``--rewind ENTRY`` in print and JSON mode: rewind the opened session before (or instead of) prompting."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pi_tui.args import Args
    from pi_tui.runtime.agent_session import AgentSession
    from pi_tui.session.manager import SessionManager

__all__ = ["run_rewind_flag", "find_entry"]


def find_entry(session: SessionManager, ref: str) -> str:
    """The id of the entry ``ref`` names: a whole id, a unique prefix, or ``root`` (before the first).

    Raises:
        ValueError: no entry, or several, match.
    """
    if ref == "root":
        return ""
    ids = [e.id or "" for e in session.get_entries()]
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ValueError(f"No entry {ref!r} in session {session.path or session.id}")
    raise ValueError(f"Entry {ref!r} is ambiguous: {', '.join(matches[:5])}")


async def run_rewind_flag(
    agent_session: AgentSession, args: Args, err: Callable[[str], None], stdout: TextIO | None
) -> int:
    """Run ``--rewind``; 0 when it was applied, 1 on bad input or unresolved conflicts (nothing changed)."""
    try:
        entry_id = find_entry(agent_session.session_manager, args.rewind or "") or None
        result = await agent_session.rewind(entry_id, args.rewind_mode, force=args.rewind_force, ask=False)
    except (ValueError, LookupError, RuntimeError, OSError) as exc:
        err(f"Rewind failed: {exc}")
        return 1
    if args.mode == "json" and stdout is not None:
        stdout.write(json.dumps({"type": "checkpoint_restore", **result.to_json()}) + "\n")
        stdout.flush()
    err(result.summary())
    if not result.applied:
        err(
            "Run again with --rewind-force to overwrite them, or --rewind-mode conversation to leave the files."
        )
        return 1
    return 0
