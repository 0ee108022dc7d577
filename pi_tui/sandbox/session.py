"""Building the session's sandbox and its escalation question (used by the runtime factory)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .runner import CommandSandbox

if TYPE_CHECKING:
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.runtime.agent_session import AgentSession

    from .diagnose import Refusal
    from .tool import EscalateFn

__all__ = ["make_sandbox"]

_ASKING_MODES = ("tui", "rpc")


def make_sandbox(
    settings: SettingsManager,
    cwd: Path,
    agent_dir: Path,
    override: str | None,
    session_box: Sequence[AgentSession],
) -> tuple[CommandSandbox, EscalateFn]:
    """The sandbox for a session in ``cwd`` and the function asking its user about refusals.

    ``session_box`` holds the session once it exists: the question goes through its UI bridge in the
    TUI and RPC modes; in print and JSON modes the refusal stands and its reason goes to stderr.
    """
    sandbox = CommandSandbox(lambda: settings.sandbox, cwd, agent_dir=agent_dir, override=override)

    async def escalate(refusal: Refusal, command: str, note: str) -> str | None:
        session = session_box[0] if session_box else None
        if session is None or session.mode not in _ASKING_MODES:
            sys.stderr.write(f"pi-tui: {note}\n")
            return None
        from .escalation import ask_about_refusal

        return await ask_about_refusal(session.ui, refusal, command, note)

    return sandbox, escalate
