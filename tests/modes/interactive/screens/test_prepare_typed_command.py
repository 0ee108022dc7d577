"""The work ahead of the big screens (`screens.prepare`) starts with the screen whose command is in
the editor, and the warm-up leaves the interpreter to a command sent from the editor until its screen
is up."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pi_tui.ai import registry
from pi_tui.context import report
from pi_tui.modes.interactive.screens import tree_rows
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.modes.interactive.screens.prepare import ScreenPreparation, preparation_for, step_for_command
from pi_tui.modes.interactive.warm_turn import WarmUpTurn

from ..helpers import make_app, until
from .test_prepare_at_once import Gate, HeldFirstPiece, _steps
from .test_prepared_screens import _session


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("/context", "tokens"),
        ("/co", "tokens"),
        ("/c", "tokens"),
        ("/tree", "tree_index"),
        ("/t", "tree_index"),
        ("/resume", "recent"),
        ("/re", "recent"),
        ("/context extra words", "tokens"),
        ("/model", None),
        ("/", None),
        ("/ context", None),
        ("context", None),
        ("", None),
    ],
)
def test_the_step_of_a_command_follows_the_word_typed_after_the_slash(text: str, step: str | None) -> None:
    assert step_for_command(text) == step


async def test_the_step_of_the_command_being_typed_runs_before_the_others() -> None:
    log: list[str] = []
    preparation = ScreenPreparation(_steps(log, 2))
    preparation.prefer("c")
    preparation.start()
    await preparation.wait()
    assert log == ["c0", "c1", "a0", "a1", "b0", "b1"]


async def test_a_preferred_step_takes_over_at_the_next_piece_and_a_needed_one_still_goes_first() -> None:
    log: list[str] = []
    held = HeldFirstPiece(log)  # the user types the command of "c" while "a" is in its first piece
    preparation = ScreenPreparation(held.steps)
    try:
        preparation.start()
        await asyncio.to_thread(held.in_first_piece.wait, 20)
        preparation.prefer("c")
        held.go_on.set()
        await preparation.wait()
        assert log == ["a0", "c0", "c1", "a1", "b0", "b1"]
    finally:
        held.go_on.set()

    log.clear()
    preparation = ScreenPreparation(_steps(log, 2))
    release = preparation.hold()
    preparation.prefer("c")
    await preparation.need("b")  # a screen waits for "b": it goes before the command being typed
    preparation.start()
    release()
    await preparation.wait()
    assert log == ["b0", "b1", "c0", "c1", "a0", "a1"]


async def test_the_step_of_the_command_typed_goes_on_while_a_screen_opens() -> None:
    log: list[str] = []
    finished = threading.Event()
    steps = _steps(log, 2)
    c = steps["c"]

    def last_of_c() -> Iterator[object]:
        yield from c()
        finished.set()

    preparation = ScreenPreparation({**steps, "c": last_of_c})
    release = preparation.hold()  # its screen is opening: the other steps wait, this one goes on
    preparation.prefer("c")
    preparation.start()
    assert await asyncio.to_thread(finished.wait, 20)
    assert log == ["c0", "c1"]
    release()
    await preparation.wait()
    assert log == ["c0", "c1", "a0", "a1", "b0", "b1"]


async def test_a_command_typed_while_the_session_loads_has_its_screen_prepared_first(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    counting, indexing = report.message_chars, tree_rows.prepare_children

    def counted(message: Any) -> int:
        if "tokens" not in order:
            order.append("tokens")
        return counting(message)

    def indexed(manager: Any) -> Any:
        order.append("tree_index")
        return indexing(manager)

    monkeypatch.setattr(report, "message_chars", counted)
    monkeypatch.setattr(tree_rows, "prepare_children", indexed)
    path = _session(tmp_path, 10)
    loading = threading.Event()
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)], hold=loading)
    async with app.run_test(size=(120, 40)) as pilot:
        app.editor.insert("/context")  # typed while the session loads
        loading.set()
        await until(pilot, lambda: app.session is not None and preparation_for(app.session).done("tokens"))
        preparation = preparation_for(app.require_session())
        # The other screens' work waits while the command is in the editor (Enter would open it).
        assert preparation.held and preparation.pieces["tree_index"] == 0
        app.editor.clear()  # the command given up: the rest goes on
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
        assert order == ["tokens", "tree_index"]  # without the command: the children index first
        assert not preparation.held


async def test_a_command_sent_from_the_editor_holds_the_other_screens_work_until_its_screen_is_drawn(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _session(tmp_path, 10)
    loading = threading.Event()
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)], hold=loading)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"/context")  # typed while the session loads
        loading.set()
        await until(pilot, lambda: app.session is not None and preparation_for(app.session).done("tokens"))
        session = app.require_session()
        preparation = preparation_for(session)
        assert preparation.held and preparation.pieces["tree_index"] == 0
        reporting, report_made = asyncio.Event(), asyncio.Event()
        real_report = session.context_report

        async def held_report() -> Any:
            reporting.set()
            await report_made.wait()
            return await real_report()

        monkeypatch.setattr(session, "context_report", held_report)
        await pilot.press("enter")
        await until(pilot, reporting.is_set)  # the command runs, the editor is empty
        await pilot.pause()
        assert app.editor.text == "" and preparation.held and preparation.pieces["tree_index"] == 0
        report_made.set()
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
        assert not preparation.held  # released once the screen was drawn, the rest done under it


async def test_while_tree_is_typed_its_screen_s_steps_run_and_the_others_wait(
    tmp_path: Path, agent_dir: Path
) -> None:
    path = _session(tmp_path, 10)
    loading = threading.Event()
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)], hold=loading)
    async with app.run_test(size=(120, 40)) as pilot:
        app.editor.insert("/tree")  # typed while the session loads, left in the editor
        loading.set()
        await until(
            pilot, lambda: app.session is not None and preparation_for(app.session).done("tree_texts")
        )
        preparation = preparation_for(app.require_session())
        assert all(preparation.done(step) for step in ("tree_index", "imports", "tree", "tree_texts"))
        assert preparation.held
        assert [preparation.pieces[step] for step in ("recent", "tokens", "listing")] == [0, 0, 0]
        app.editor.clear()
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())


def test_a_command_sent_from_the_editor_holds_the_warm_up_until_it_is_done() -> None:
    turn = WarmUpTurn(lambda: True, lambda: "")
    assert not turn.blocked()
    done = turn.command_started()
    assert turn.blocked()  # the editor is empty again, but the command's screen is not up yet
    done()
    done()  # a second call changes nothing
    assert not turn.blocked()


async def test_the_warm_up_loads_nothing_while_context_opens_from_the_editor(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[str] = []
    real = registry.resolve_stream_fn

    def loading_provider(api: str) -> Any:
        loaded.append(api)
        return real(api)

    monkeypatch.setattr(registry, "resolve_stream_fn", loading_provider)
    gate = Gate()  # the counting is held: the open waits its while before it shows "counting…"
    monkeypatch.setattr(report, "message_chars", gate.wrap(report.message_chars))
    path = _session(tmp_path, 10)
    loading = threading.Event()
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)], hold=loading)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press(*"/context")  # typed while the session loads: the warm-up waits
            loading.set()
            await until(pilot, gate.reached.is_set)
            assert loaded == []
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ContextScreen))
            # Enter emptied the editor: the counting stays first all the same.
            assert preparation_for(app.require_session()).preferred == "tokens"
            screen = app.screen
            assert isinstance(screen, ContextScreen)
            await pilot.pause()
            summary = str(screen.query_one("#ctx-summary", Static).render())
            assert "counting the messages' tokens…" in summary  # its first frame, the counting held
            assert loaded == []  # the provider module was not loaded while the screen opened
            gate.open()
            await until(pilot, screen.ready.is_set)
    finally:
        gate.open()
