"""An app that has ended, and the session it ran, are freed: nothing the process keeps holds them."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

from pi_tui.modes.interactive.app import PiApp
from pi_tui.runtime.agent_session import AgentSession

from .helpers import make_app, until


def test_an_ended_app_and_its_session_are_freed(tmp_path: Path, agent_dir: Path) -> None:
    async def run() -> tuple[weakref.ref[PiApp], weakref.ref[AgentSession]]:
        app = make_app(tmp_path, agent_dir)
        async with app.run_test(size=(80, 24)) as pilot:
            # the work ahead for /tree, /context and /resume has run for the session
            await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
            return weakref.ref(app), weakref.ref(app.require_session())

    # The app's whole life in a loop of its own: once it is closed, its worker threads are gone too.
    ended, session = asyncio.run(run())
    gc.collect()
    assert ended() is None, "the ended app is still alive"
    assert session() is None, "the ended app's session is still alive"
