"""Hot reload: when a loaded extension's file changes, reload the extensions.

The watcher runs in a background task (watchfiles, debounced). A change while the agent is working
waits until it is idle, then ``AgentSession.reload()`` runs the same steps as ``/reload``:
``session_shutdown`` → tear down (tools, commands, handlers) → re-import → ``session_start`` (reason
``"reload"``) → ``resources_discover``. Extensions rebuild their in-memory state from the session's
entries in ``session_start`` (``ctx.session_manager.get_branch()``); the session itself is untouched.

Watching is off unless a mode asks for it (``AgentSession.start(watch=True)``): print/json runs and
tests do not watch.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runner import ExtensionRunner

__all__ = ["ExtensionWatcher", "DEBOUNCE_MS"]

log = logging.getLogger(__name__)

DEBOUNCE_MS = 200


class ExtensionWatcher:
    """Watches the loaded extensions' files and folders and reloads on change."""

    def __init__(self, runner: ExtensionRunner, debounce_ms: int = DEBOUNCE_MS) -> None:
        self._runner = runner
        self._debounce_ms = debounce_ms
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._restart = False
        self._closing = False

    def _targets(self) -> tuple[list[Path], set[Path]]:
        """Folders to watch and the paths whose changes matter (files, or package folders)."""
        relevant = {p.resolve() for p in self._runner.watched_paths()}
        folders = sorted({p if p.is_dir() else p.parent for p in relevant if p.exists()})
        return folders, relevant

    def start(self) -> None:
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        self._task = asyncio.ensure_future(self._run())

    async def wait_ready(self) -> None:
        """Return once file changes are being recorded."""
        await self.ready.wait()

    def paths_changed(self) -> None:
        """The set of extensions changed (after a reload): watch the new set.

        A watcher that had nothing to watch has ended; it starts again, so an extension that a reload
        loads later (written after start-up) is hot-reloaded from then on.
        """
        if self._closing or self._stop is None:
            return
        if self._task is None or self._task.done():
            self.start()
            return
        self._restart = True
        self.ready.clear()
        self._stop.set()

    async def stop(self) -> None:
        self._closing = True
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        from watchfiles import awatch

        while True:
            folders, relevant = self._targets()
            if not folders:
                self.ready.set()
                return
            assert self._stop is not None
            changes_seen = awatch(
                *folders, stop_event=self._stop, debounce=self._debounce_ms, step=50, recursive=True
            )
            try:
                first = asyncio.ensure_future(anext(changes_seen))
                # awatch installs its watches synchronously on its first step, before it first awaits:
                # one pass of the loop later, changes are recorded.
                await asyncio.sleep(0)
                self.ready.set()
                try:
                    changes = await first
                except StopAsyncIteration:
                    changes = None
                while changes is not None:
                    if any(_matters(Path(path), relevant) for _, path in changes):
                        await self._reload()
                    changes = await anext(changes_seen, None)
            except Exception:  # a watcher failure must not take the session down
                log.warning("extension watcher stopped", exc_info=True)
                return
            finally:
                await changes_seen.aclose()
            if not self._restart or self._closing:
                return
            self._restart = False
            self._stop = asyncio.Event()

    async def _reload(self) -> None:
        session = self._runner.session
        await session.wait_for_idle()
        try:
            await session.reload()
        except Exception:
            log.warning("hot reload failed", exc_info=True)


def _matters(path: Path, relevant: set[Path]) -> bool:
    resolved = path.resolve()
    if resolved.suffix not in (".py", "") or "__pycache__" in resolved.parts:
        return False
    return any(resolved == p or p in resolved.parents for p in relevant)
