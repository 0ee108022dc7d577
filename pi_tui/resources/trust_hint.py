"""What a notice about an untrusted project tells the user to do, in the mode they are in.

The full-screen app has ``/trust`` (pi's wording: save a decision, then restart); the other modes
(print, JSON, RPC and the line mode) have only the command line: ``--approve`` for one run, or
``--trust-project`` to record the trust.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.args import Args

__all__ = ["COMMAND_HINT", "FLAG_HINT", "full_screen", "trust_hint"]

COMMAND_HINT = "Use /trust to save a trust decision, then restart pi-tui."
FLAG_HINT = "Run with --approve to trust it for one run, or once with --trust-project to record it."


def full_screen(args: Args) -> bool:
    """Whether ``args`` start the full-screen app, the one mode with ``/trust``."""
    return not (args.print_mode or args.plain or args.mode != "text")


def trust_hint(has_trust_command: bool) -> str:
    """The sentence telling how to trust the project: ``/trust`` where the mode has it, else the flags."""
    return COMMAND_HINT if has_trust_command else FLAG_HINT
