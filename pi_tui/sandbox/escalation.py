"""Asking the user what to do when the sandbox refused something a command needed.

The question goes through the session's UI bridge (the TUI's dialog, or the RPC client's extension
UI ``select``), so it works wherever extensions can ask. Nothing is ever allowed without an answer:
no UI, a dismissed dialog or a timeout keep the refusal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .diagnose import Refusal
from .policy import nearest_existing

__all__ = ["ask_about_refusal", "RUN_ONCE", "ALLOW_FOR_SESSION", "KEEP_REFUSED", "choices_for"]

RUN_ONCE = "Run this once outside the sandbox"
KEEP_REFUSED = "Keep it refused"
ALLOW_FOR_SESSION = "Allow {what} for this session"


class _Asker(Protocol):
    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None: ...


def choices_for(refusal: Refusal) -> list[str]:
    """The options offered for ``refusal`` (no "allow" when the output did not name the path or host)."""
    options = [RUN_ONCE]
    if refusal.target and refusal.kind != "read":
        if refusal.kind == "write":
            what = f"writes to {nearest_existing(Path(refusal.target))}"
        else:
            what = f"network access to {refusal.target}"
        options.append(ALLOW_FOR_SESSION.format(what=what))
    options.append(KEEP_REFUSED)
    return options


async def ask_about_refusal(ui: _Asker, refusal: Refusal, command: str, note: str) -> str | None:
    """Ask through ``ui``; ``"once"``, ``"allow"`` or None (keep the refusal)."""
    options = choices_for(refusal)
    shown = command if len(command) <= 200 else command[:200] + "…"
    title = f"The sandbox refused a command\n\n$ {shown}\n\n{note.removeprefix('[sandbox] ')}"
    answer = await ui.select(title, options)
    if answer == RUN_ONCE:
        return "once"
    if answer is not None and answer.startswith("Allow "):
        return "allow"
    return None
