"""An OS sandbox for the agent's shell commands (the ``bash`` tool and ``!cmd``).

Linux: bubblewrap (`pi_tui.sandbox.bwrap`); macOS: ``sandbox-exec`` (`pi_tui.sandbox.seatbelt`).
`CommandSandbox` is the session's entry point; `pi_tui.sandbox.policy` holds what is allowed and
`pi_tui.sandbox.diagnose` reads refusals. Only the runner loads at start; the rest with the first command.
"""

from __future__ import annotations

from .runner import CommandSandbox, Launch, SandboxUnavailableError

__all__ = ["CommandSandbox", "Launch", "SandboxUnavailableError"]
