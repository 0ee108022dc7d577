"""``--plain``: the line-mode interface (prompt-toolkit), for terminals that cannot host the full-screen app.

Chosen with ``--plain``, and automatically when ``TERM=dumb`` or stdin/stdout is not a terminal (piped
*text* on stdin still means print mode; see `pi_tui.cli`). It never imports Textual. This module stays
import-light: the CLI asks `cannot_host_fullscreen` before anything heavy is loaded.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.ai.types import ImageContent
    from pi_tui.args import Args

__all__ = ["cannot_host_fullscreen", "run_plain_cli"]


def cannot_host_fullscreen() -> bool:
    """True when a full-screen app cannot run here: ``TERM=dumb`` or stdin/stdout is not a terminal."""
    if os.environ.get("TERM", "") == "dumb":
        return True
    try:
        return not (sys.stdin.isatty() and sys.stdout.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return True


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def run_plain_cli(
    args: Args,
    cwd: Path,
    prompts: Callable[[], list[str]],
    first_images: Sequence[ImageContent] | None = None,
) -> int:
    """Build the session from the command line and run the line mode; returns the exit code.

    ``prompts`` is called once extensions declared their flags (they may hand words back to the prompt);
    ``first_images`` (images given as ``@file``) go with the first of them.
    """
    import asyncio

    from pi_tui.runtime.factory import create_session_or_report

    startup = create_session_or_report(args, cwd, on_terminal=sys.stdin.isatty())  # pi asks, here
    if isinstance(startup, int):
        return startup
    for notice in startup.notices:
        _err(notice)

    from .app import run_plain

    async def go() -> int:
        try:
            return await run_plain(startup.session, prompts(), first_images=first_images)
        finally:
            await startup.session.close()

    try:
        return asyncio.run(go())
    except KeyboardInterrupt:
        return 130
