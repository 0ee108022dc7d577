"""Work done ahead, while the app is idle after a session is shown, so the first ``/tree``, ``/context``
and ``/resume`` open as fast as the later ones.

Each screen keeps what it computed for the next open (`tree_rows` keeps the rows per session, the
session keeps each message's token count, the listing keeps the rows of session files by size and
mtime). The first open used to pay for all of it while the user waited (~0.2–0.3 s on a 20k-entry
session or a folder of 1,000 sessions). `preparation_steps` returns the same work as plain functions:
pure Python over data already loaded or read from disk, with no Textual calls, so the app runs them in
a worker thread one by one while nothing else is going on. Every step is only an aid: a screen opened
before its step ran (or after the session changed) computes what it needs itself, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["preparation_steps"]


def _import_screens() -> None:
    """The screens' modules and the Textual widgets they use (a first open imported them)."""
    from textual.widgets import Input, Tree  # noqa: F401

    from . import context_screen, resume_screen, tree_screen  # noqa: F401


def preparation_steps(session: AgentSession) -> list[Callable[[], object]]:
    """The steps that make the first opens of ``/tree``, ``/context`` and ``/resume`` cheap, cheapest
    first; each may run in a worker thread (they read the loaded session and the session folder)."""

    def tree_rows() -> object:
        from .tree_rows import TreeModel

        return TreeModel(session.session_manager)  # its rows are kept for the session's next /tree

    def listing() -> object:
        from pi_tui.session.listing import list_sessions

        return list_sessions(session.cwd, session.new_session_dir())

    return [_import_screens, session.count_context_tokens, tree_rows, listing]
