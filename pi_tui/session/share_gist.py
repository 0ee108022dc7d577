"""``/share``: the session's HTML page uploaded as a secret GitHub gist with the ``gh`` command-line tool.

As pi does: ``gh auth status`` first (so a missing tool or a missing login is said plainly), then the page
written to a temporary folder and ``gh gist create --public=false <page>``; ``gh`` prints the gist's address.
Every ``gh`` call runs as a child process with a time limit, awaited, so the screen never freezes;
cancelling the share (Escape in the app) kills the ``gh`` under way and removes the page.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.session import SessionManager

__all__ = ["AUTH_TIMEOUT", "GIST_TIMEOUT", "GistShare", "ShareError", "share_session_gist"]

AUTH_TIMEOUT = 20.0
"""Seconds ``gh auth status`` may take (it may ask GitHub whether the token still works)."""
GIST_TIMEOUT = 120.0
"""Seconds ``gh gist create`` may take to upload the page."""


class ShareError(Exception):
    """Why the session could not be shared, in words the user can act on."""


@dataclass(frozen=True)
class GistShare:
    """A shared session: the gist's address and, when ``PI_SHARE_VIEWER_URL`` is set, a viewer's."""

    gist_url: str
    gist_id: str
    viewer_url: str | None


async def _run_gh(gh: str, args: list[str], timeout: float) -> tuple[int, str, str]:
    """``gh args`` with ``timeout`` seconds to finish: (exit code, stdout, stderr). Killed when late."""
    try:
        proc = await asyncio.create_subprocess_exec(
            gh,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise ShareError("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/") from None
    except PermissionError as exc:
        raise ShareError(f"GitHub CLI (gh) could not be started: {exc}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise ShareError(f"gh {args[0]} {args[1]} did not finish within {timeout:g} s") from None
    return proc.returncode or 0, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


async def share_session_gist(
    manager: SessionManager, *, gh: str = "gh", auth_timeout: float = AUTH_TIMEOUT, timeout: float = GIST_TIMEOUT
) -> GistShare:
    """Upload the session's HTML page as a secret gist and return its address.

    Args:
        manager: the session to share (its current branch, as ``/export`` writes it).
        gh: the ``gh`` program (looked up on ``PATH``).
        auth_timeout: seconds ``gh auth status`` may take.
        timeout: seconds ``gh gist create`` may take.

    Raises:
        ShareError: nothing to share yet, ``gh`` missing, not logged in, late or failing.
    """
    from pi_tui.session.entries import MessageEntry
    from pi_tui.session.export_html import export_session_html

    if not any(isinstance(e, MessageEntry) for e in manager.get_entries()):
        raise ShareError("Nothing to share yet: start a conversation first")
    code, _out, _err = await _run_gh(gh, ["auth", "status"], auth_timeout)
    if code != 0:
        raise ShareError("GitHub CLI is not logged in. Run 'gh auth login' first.")
    folder = Path(tempfile.mkdtemp(prefix="pi-tui-share-"))
    try:
        page = folder / "session.html"
        try:
            export_session_html(manager, page)
        except OSError as exc:
            raise ShareError(f"Failed to export session: {exc}") from None
        code, out, err = await _run_gh(gh, ["gist", "create", "--public=false", str(page)], timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if code != 0:
        raise ShareError(f"Failed to create gist: {err.strip() or 'Unknown error'}")
    gist_url = out.strip().splitlines()[-1].strip() if out.strip() else ""
    gist_id = gist_url.rstrip("/").rsplit("/", 1)[-1] if gist_url else ""
    if not gist_id:
        raise ShareError("Failed to parse gist ID from gh output")
    viewer = os.environ.get("PI_SHARE_VIEWER_URL")
    return GistShare(gist_url, gist_id, f"{viewer}#{gist_id}" if viewer else None)
