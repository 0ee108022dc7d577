"""Loading the extensions again (a part of `ExtensionRunner`): ``/reload``, and a switch to another
session (``/new``, ``/resume``, ``/fork``, ``/clone``, ``/import``), which replaces them as pi replaces its
runtime, with those of the directory the session works in.

Both tear the loaded extensions down after ``session_shutdown`` (keeping what the session had switched
on), discover and import them again, and send ``session_start``: reason ``reload`` for the one; for a
switch its own reason (``new``, ``resume``, ``fork``), with ``session_shutdown`` sent before the session
moves (naming the file moved to) and ``session_start`` after (naming the file left).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._host import RunnerHost

if TYPE_CHECKING:
    from .discovery import Discovery, ExtensionSource
    from .extension import Extension
    from .reload import ExtensionWatcher

__all__ = ["Kept", "RenewalMixin"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class Kept:
    """What a reload keeps across tearing the extensions down: the active tools, the tools known,
    the names of the extensions that were loaded (their panels go unless registered again)."""

    active_tools: list[str]
    tools: set[str]
    extensions: set[str]


class RenewalMixin(RunnerHost):
    """Mixed into `ExtensionRunner`."""

    _moving: Kept | None = None
    """What `leave_session` kept, until `enter_session`."""

    # what it relies on from `ExtensionRunner` (declarations only)
    extensions: list[Extension]
    warnings: list[str]
    reload_count: int
    shutdown_grace: float
    _sources: list[ExtensionSource]
    _rediscover: Callable[[], Discovery] | None
    _announce_load_errors: bool
    _started: bool
    _slow_reported: set[tuple[str, str]]
    _reloading: asyncio.Lock | None
    _reloaded: asyncio.Event | None
    _watcher: ExtensionWatcher | None

    if TYPE_CHECKING:

        def load(self, sources: Sequence[ExtensionSource]) -> None: ...

        def _unload(self, ext: Extension, *, keep_panels: bool = False) -> None: ...

        async def drain(self, timeout: float | None = None) -> None: ...

        async def start(
            self,
            *,
            reason: str = "startup",
            watch: bool = False,
            discover_reason: str | None = None,
            previous_session_file: str | None = None,
        ) -> None: ...

    async def reload(self) -> list[str]:
        """session_shutdown → tear down → re-import → session_start (reason "reload") → resources_discover.

        Extensions that fail to load are reported (``extension_error`` events) before this returns.

        Returns:
            What else the user should be told, in the order it happened: extensions of an untrusted
            project that were not loaded, discovery problems and registration warnings.
        """
        self._reloading = self._reloading or asyncio.Lock()
        async with self._reloading:
            kept = await self._tear_down(reason="reload")
            notes = await self._bring_up(kept, reason="reload")
            reloaded, self._reloaded = self._reloaded, None
            if reloaded is not None:
                reloaded.set()
        if self._watcher is not None:
            self._watcher.paths_changed()
        return notes

    async def leave_session(self, reason: str, target_session_file: str | None) -> None:
        """Before the session switches to another (``reason``: ``new``, ``resume`` or ``fork``):
        ``session_shutdown`` to the loaded extensions, naming the session file moved to when there is
        one, then they are torn down; `enter_session` loads them afresh once the switch is done."""
        self._reloading = self._reloading or asyncio.Lock()
        async with self._reloading:
            fields = {"target_session_file": target_session_file} if target_session_file else {}
            self._moving = await self._tear_down(reason=reason, **fields)
            self._next_turn = []  # messages queued for the session left

    async def enter_session(self, reason: str, previous_session_file: str | None) -> list[str]:
        """After the switch `leave_session` began: discover the extensions of the directory the session
        works in (its project folder only when trusted there), import them, ``session_start`` (the
        switch's reason and the session file left) and ``resources_discover`` (reason ``startup``, as
        pi's new runtime). Returns what the user should be told, as `reload`."""
        self._reloading = self._reloading or asyncio.Lock()
        async with self._reloading:
            session = self.session
            fresh = Kept(list(session.active_tools), set(session.tools), set())  # nothing was loaded
            kept, self._moving = self._moving or fresh, None
            notes = await self._bring_up(
                kept, reason=reason, discover_reason="startup", previous_session_file=previous_session_file
            )
        if self._watcher is not None:
            self._watcher.paths_changed()
        return notes

    async def _tear_down(self, *, reason: str, **fields: Any) -> Kept:
        """``session_shutdown`` and unload every extension; what `_bring_up` needs to restore."""
        session = self.session
        self.ui_state.clear(session.ui)
        if self._started:
            await self.notify("session_shutdown", timeout=self.lifecycle_timeout, reason=reason, **fields)
        await self.drain(timeout=self.shutdown_grace)
        kept = Kept(list(session.active_tools), set(session.tools), {ext.name for ext in self.extensions})
        for ext in reversed(list(self.extensions)):
            self._unload(ext, keep_panels=True)
        self.dispatch.forget_arities()
        self._slow_reported.clear()
        return kept

    async def _bring_up(
        self,
        kept: Kept,
        *,
        reason: str,
        discover_reason: str | None = None,
        previous_session_file: str | None = None,
    ) -> list[str]:
        """Discover again (when the runner can), import, then ``session_start``; returns the notes."""
        notes: list[str] = []
        session = self.session
        sources = self._sources
        if self._rediscover is not None:
            found = self._rediscover()
            sources = found.sources
            for error in found.errors:
                log.warning(error)
            notes += found.errors
            if found.skipped_untrusted:
                from .setup import untrusted_notice

                notes.append(
                    untrusted_notice(Path(session.cwd), found.skipped_untrusted, session.has_trust_command)
                )
        self._announce_load_errors = True
        self._started = False  # load errors and warnings wait for `start`, which reports them in order
        self.load(sources)
        registered = {name for ext in self.extensions for name in ext.panels}
        for name, state in list(session.panels.panels.items()):
            if state.panel.source in kept.extensions and name not in registered:
                del session.panels.panels[name]
        added = [n for n in session.active_tools if n not in kept.tools]
        session.set_active_tools([n for n in kept.active_tools if n in session.tools] + added)
        await self.start(
            reason=reason, discover_reason=discover_reason, previous_session_file=previous_session_file
        )
        notes += self.warnings
        self.warnings = []
        self.reload_count += 1
        return notes
