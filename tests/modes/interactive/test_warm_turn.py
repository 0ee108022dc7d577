"""The warm-up's mounting (sample markdown widgets, ~0.2 s of the UI thread after a session shows) gives
way to the user: not while a slash command is in the editor or a screen is over the chat."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.worker import Worker, WorkerState

from pi_tui.ai import registry
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.prepare import preparation_for
from pi_tui.modes.interactive.warm_turn import WarmUpTurn

from .helpers import make_app, until
from .screens.test_prepared_screens import _session


def _warm_up(app: PiApp) -> Worker[None] | None:
    return next((worker for worker in app.workers if worker.group == "warm-up"), None)


async def test_the_warm_up_waits_while_a_command_is_typed_and_while_a_screen_is_up(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[str] = []
    real = registry.resolve_stream_fn

    def counting(api: str) -> Any:
        loaded.append(api)
        return real(api)

    monkeypatch.setattr(registry, "resolve_stream_fn", counting)
    path = _session(tmp_path, 5)
    loading = threading.Event()
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)], hold=loading)
    async with app.run_test(size=(120, 40)) as pilot:
        app.editor.insert("/tre")  # typed while the session loads
        loading.set()
        await until(pilot, lambda: _warm_up(app) is not None)
        warm_up = _warm_up(app)
        assert warm_up is not None
        session = app.require_session()
        await until(pilot, lambda: preparation_for(session).done("tree_index"))  # the typed command's step
        for _ in range(20):
            await pilot.pause()
        assert not warm_up.is_finished
        assert loaded == []  # not even its loading in a thread (it would slow the command's first frame)
        await SCREEN_COMMANDS["hotkeys"](app, "")  # a screen over the chat
        app.editor.clear()
        for _ in range(20):
            await pilot.pause()
        assert not warm_up.is_finished
        app.pop_screen()  # back at the chat with an empty editor: it goes on
        await until(pilot, lambda: warm_up.is_finished)
        assert warm_up.state == WorkerState.SUCCESS
        assert loaded


async def test_a_turn_comes_once_keys_stop_for_a_moment() -> None:
    on_top = [True]
    text = [""]
    turn = WarmUpTurn(lambda: on_top[0], lambda: text[0])
    assert not turn.blocked()
    text[0] = "  /model"
    assert turn.blocked()
    text[0] = "hello"
    on_top[0] = False
    assert turn.blocked()
    on_top[0] = True
    turn.notice_key()

    async def unheld() -> None:
        return None

    await turn.wait(unheld)  # returns after the quiet time (a key just came)
    assert not turn.blocked()
