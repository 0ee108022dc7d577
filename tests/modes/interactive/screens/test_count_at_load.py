"""A long resumed session's token counts are made while it loads, before it is shown: a ``/context``
sent as soon as the session appears draws its figures at once, and the work ahead counts nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.context import report
from pi_tui.modes.interactive import app as app_module
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.modes.interactive.screens.prepare import ScreenPreparation, preparation_for

from ..helpers import make_app, until
from .test_prepared_screens import _session


def _record_counting(monkeypatch: pytest.MonkeyPatch, app: PiApp) -> list[tuple[str, bool]]:
    """Each message measured: the thread that measured it, and whether the session was shown then."""
    calls: list[tuple[str, bool]] = []
    real = report.message_chars

    def measured(message: Any) -> int:
        calls.append((threading.current_thread().name, app.ready.is_set()))
        return real(message)

    monkeypatch.setattr(report, "message_chars", measured)
    return calls


async def test_a_long_session_is_counted_while_it_loads_and_context_opens_with_its_figures(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "COUNT_AT_LOAD_FROM", 100)
    path = _session(tmp_path, 40)  # 160 messages
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    calls = _record_counting(monkeypatch, app)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        assert len(calls) == 160  # every message, before the session was shown
        assert not any(shown for _, shown in calls)
        assert all(thread != "pi-tui-prepare" for thread, _ in calls)  # not by the work ahead
        assert preparation_for(app.require_session()).done("tokens")  # its step is done
        await SCREEN_COMMANDS["context"](app, "")  # at once, as the session appears
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert screen.ready.is_set()  # pushed with its report
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
        await until(pilot, lambda: screen.view.projected is not None)  # filled in after the first frame
    assert len(calls) == 160  # the report and the work ahead counted nothing again


async def test_a_short_session_is_left_to_the_work_ahead(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _session(tmp_path, 40)  # 160 messages: under `COUNT_AT_LOAD_FROM`
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    calls = _record_counting(monkeypatch, app)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
    assert len(calls) == 160
    assert all(shown and thread == "pi-tui-prepare" for thread, shown in calls)


async def test_a_step_run_before_the_start_is_not_run_again() -> None:
    log: list[str] = []

    def step(name: str) -> Any:
        def pieces() -> Iterator[object]:
            for n in range(2):
                log.append(f"{name}{n}")
                yield None

        return pieces

    preparation = ScreenPreparation({"a": step("a"), "b": step("b")})
    preparation.run_now("b")  # whole, in this thread
    assert log == ["b0", "b1"] and preparation.done("b") and not preparation.done("a")
    await preparation.need("b")  # returns at once: done
    preparation.start()
    await preparation.wait()
    assert log == ["b0", "b1", "a0", "a1"]
    preparation.run_now("a")  # done already: nothing
    assert log == ["b0", "b1", "a0", "a1"]
