"""A big screen opened at once after the session shows, while the work ahead (`screens.prepare`) is
still going: the open takes over the work in progress instead of doing it again, and ``/resume``
shows at once, its rows following."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static, Tree

from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.context import report
from pi_tui.modes.interactive import markdown_block
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS, tree_rows
from pi_tui.modes.interactive.screens._format import fmt_tokens
from pi_tui.modes.interactive.screens._rowlist import RowList
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.modes.interactive.screens.prepare import ScreenPreparation, preparation_for
from pi_tui.modes.interactive.screens.resume_screen import FIRST_LOOK, ResumeScreen
from pi_tui.modes.interactive.screens.tree_rows import TreeModel
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.session import SessionManager, listing_cache
from pi_tui.session.entries import MessageEntry

from ..helpers import make_app, until, workers_done
from .test_prepared_screens import _session


class Gate:
    """Holds the worker thread that first calls the wrapped function until `open` (the UI thread
    passes straight through), and counts every call made through it."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        self.ui_calls = 0  # of which on the UI thread

    def wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def gated(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if threading.current_thread() is threading.main_thread():
                self.ui_calls += 1
            else:
                self.reached.set()
                self.release.wait(20)
            return real(*args, **kwargs)

        return gated

    def open(self) -> None:
        self.release.set()


@pytest.fixture
def gate() -> Iterator[Gate]:
    made = Gate()
    yield made
    made.open()  # never leave a worker thread waiting (each test also opens it before the app ends)


async def test_tree_opened_while_its_rows_are_being_built_shows_the_leaf_at_once_and_builds_them_once(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 120)
    monkeypatch.setattr(TreeModel, "_build", gate.wrap(TreeModel._build))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, gate.reached.is_set)  # the work ahead is building the rows
        try:
            await SCREEN_COMMANDS["tree"](app, "")  # opens at once, with the rows near the leaf
            screen = app.screen
            assert isinstance(screen, TreeScreen)
            await pilot.pause()
            assert screen.model.partial
            assert len(screen.model.rows) < 150  # of 480: a hundred shown rows above the leaf
            leaf = app.require_session().session_manager.get_leaf_id()
            assert screen.shown[screen.query_one(RowList).cursor].id == leaf
            assert str(screen.query_one("#tree-title").render()) == "Session Tree"
        finally:
            gate.open()
        await until(pilot, lambda: not screen.model.partial)  # the rest follow, built by the work ahead
        await pilot.pause()
        assert gate.calls == 1
        assert len(screen.model.rows) == len(app.require_session().session_manager.get_entries())
        assert screen.shown[screen.query_one(RowList).cursor].id == leaf


async def test_tree_opened_while_its_children_index_is_being_made_waits_for_it_and_makes_none(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 40)
    monkeypatch.setattr(tree_rows, "children_of", gate.wrap(tree_rows.children_of))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, gate.reached.is_set)  # the work ahead is making the children index
        opening = asyncio.ensure_future(SCREEN_COMMANDS["tree"](app, ""))
        try:
            await pilot.pause()
            assert not opening.done()  # it waits for the index rather than making a second one
        finally:
            gate.open()
        await opening
        assert isinstance(app.screen, TreeScreen)
        leaf = app.require_session().session_manager.get_leaf_id()
        screen = app.screen
        await pilot.pause()
        assert screen.shown[screen.query_one(RowList).cursor].id == leaf
        assert gate.calls == 1 and gate.ui_calls == 0


async def test_a_search_typed_while_entries_are_being_described_waits_for_them(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 40)
    monkeypatch.setattr(tree_rows, "entry_text", gate.wrap(tree_rows.entry_text))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await until(pilot, gate.reached.is_set)  # the work ahead is describing the entries
            await SCREEN_COMMANDS["tree"](app, "")  # its rows are built: it opens at once
            await until(pilot, lambda: isinstance(app.screen, TreeScreen))
            screen = app.screen
            assert isinstance(screen, TreeScreen)
            await pilot.pause()
            everything = len(screen.shown)
            drawn = gate.ui_calls  # the rows on screen, described as they were drawn
            await pilot.press("a", "n", "s", "w", "e", "r", "space", "3", "9")
            await pilot.pause()
            assert "Type to search: answer 39" in str(screen.query_one("#tree-search").render())
            assert len(screen.shown) == everything  # found once the entries are described
        finally:
            gate.open()
        await until(pilot, lambda: len(screen.shown) == 1)
        assert screen.shown[0].text == "assistant: answer 39"
        assert gate.ui_calls == drawn  # the search described nothing again: the work ahead did it


async def test_context_opened_while_messages_are_being_counted_shows_at_once_and_counts_each_once(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 40)
    monkeypatch.setattr(report, "message_chars", gate.wrap(report.message_chars))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, gate.reached.is_set)  # the work ahead is counting
        try:
            await SCREEN_COMMANDS["context"](app, "")  # drawn before the counting ends
            screen = app.screen
            assert isinstance(screen, ContextScreen)
            await pilot.pause()
            assert not screen.ready.is_set()
            summary = str(screen.query_one("#ctx-summary", Static).render())
            assert "counting the messages' tokens…" in summary and "window" in summary
            tree = screen.query_one("#ctx-tree", Tree)
            assert [str(n.label) for n in tree.root.children] == ["counting the messages' tokens…"]
            await pilot.press("m")  # a key that needs the report says so and changes nothing
            assert screen.whatif == {}
        finally:
            gate.open()
        await until(pilot, screen.ready.is_set)
        await workers_done(screen.app)
        await pilot.pause()
        session = app.require_session()
        messages = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)]
        assert gate.calls == len(messages) == 160
        # The figures shown are the complete report's, as a screen given that report shows them.
        complete = await session.context_report()
        summary = str(screen.query_one("#ctx-summary", Static).render())
        assert f"prompt ~{fmt_tokens(complete.total_tokens)} tokens" in summary
        labels = [str(n.label) for n in tree.root.children]
        cached = f"Cached messages ({len(complete.cached)}) · {fmt_tokens(complete.cached_tokens)}"
        assert any(label.startswith(cached) for label in labels), labels
        assert any(label.startswith("Context transforms") for label in labels)
        assert "Next request cache: read" in " ".join(labels)
        assert gate.calls == 160  # the second report counted nothing again


async def test_escape_closes_context_while_its_messages_are_still_being_counted(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 40)
    monkeypatch.setattr(report, "message_chars", gate.wrap(report.message_chars))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, gate.reached.is_set)
        try:
            await SCREEN_COMMANDS["context"](app, "")
            screen = app.screen
            assert isinstance(screen, ContextScreen)
            await pilot.pause()
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, ContextScreen))
            assert not screen.ready.is_set()  # closed while the counting was still held
        finally:
            gate.open()
        await until(pilot, lambda: preparation_for(app.require_session()).done("tokens"))
        await pilot.pause()
        assert not isinstance(app.screen, ContextScreen)  # the report, once made, opens nothing


async def test_resume_shows_at_once_with_its_first_page_and_the_rest_follows_the_listing(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 5)  # (the other sessions there never got an answer: not on disk)
    from pi_tui.session import listing

    # The work ahead is held as it starts listing the folder; the picker's own first look is not.
    monkeypatch.setattr(listing, "list_sessions_in_steps", gate.wrap(listing.list_sessions_in_steps))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, gate.reached.is_set)  # the work ahead is about to read the session folder
        try:
            await SCREEN_COMMANDS["resume"](app, "")
            screen = app.screen
            assert isinstance(screen, ResumeScreen)
            # Its first frame already has the first page: the sessions modified last, read before it.
            assert [info.first_message for info in screen.shown] == ["question 0"]
            await pilot.pause()
            title = str(screen.query_one("#resume-title").render())
            assert "1 of 1" in title and "loading…" in title
            await pilot.press("q", "u")  # typing a search meanwhile is kept
        finally:
            gate.open()
        await until(pilot, lambda: screen.lists["current"] is not None)
        await pilot.pause()
        title = str(screen.query_one("#resume-title").render())
        assert "loading" not in title and "1 of 1" in title
        assert screen.query_one("Input").value == "qu"
        assert [info.first_message for info in screen.shown] == ["question 0"]


async def test_the_work_ahead_starts_as_the_session_shows_not_after_the_warm_up(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 5)
    monkeypatch.setattr(markdown_block, "markdown_parser", gate.wrap(markdown_block.markdown_parser))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await until(pilot, gate.reached.is_set)  # the warm-up is held in its thread
            await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
            assert not gate.release.is_set()
        finally:
            gate.open()


class HeldFirstPiece:
    """Steps "a", "b" and "c" of two pieces each (`_steps`), "a" held in its first piece until `go_on`:
    what a test does once `in_first_piece` is set happens while that piece runs."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.in_first_piece = threading.Event()
        self.go_on = threading.Event()
        others = {name: step for name, step in _steps(log, 2).items() if name != "a"}
        self.steps: dict[str, Callable[[], Iterator[object]]] = {"a": self._slow_a, **others}

    def _slow_a(self) -> Iterator[object]:
        self.log.append("a0")
        self.in_first_piece.set()
        self.go_on.wait(20)
        yield 0
        self.log.append("a1")
        yield 1


def _steps(log: list[str], pieces: int) -> dict[str, Callable[[], Iterator[object]]]:
    def step(name: str) -> Callable[[], Iterator[object]]:
        def run() -> Iterator[object]:
            for n in range(pieces):
                log.append(f"{name}{n}")
                yield n

        return run

    return {"a": step("a"), "b": step("b"), "c": step("c")}


async def test_a_step_a_screen_needs_goes_before_the_rest_and_runs_once() -> None:
    log: list[str] = []
    preparation = ScreenPreparation(_steps(log, 3))
    release = preparation.hold()  # a screen is opening: nothing else runs meanwhile
    await preparation.need("b")
    preparation.start()
    await preparation.need("b")  # done: not run again
    assert log == ["b0", "b1", "b2"]
    release()
    await preparation.wait()
    assert log == ["b0", "b1", "b2", "a0", "a1", "a2", "c0", "c1", "c2"]
    assert preparation.all_done()


async def test_a_step_in_progress_stops_at_its_next_piece_for_the_one_a_screen_needs() -> None:
    log: list[str] = []
    held = HeldFirstPiece(log)  # the screen asks for "c" while "a" is in its first piece
    preparation = ScreenPreparation(held.steps)
    try:
        preparation.start()
        await asyncio.to_thread(held.in_first_piece.wait, 20)
        waiting = asyncio.ensure_future(preparation.need("c"))
        await asyncio.sleep(0)  # one turn of the loop: need() asks for "c"
        held.go_on.set()
        await waiting
        assert log[:3] == ["a0", "c0", "c1"]  # "a" stopped after its first piece and went on later
        await preparation.wait()
        assert log == ["a0", "c0", "c1", "a1", "b0", "b1"]
    finally:
        held.go_on.set()


def test_every_session_has_one_preparation(tmp_path: Path) -> None:
    from pi_tui.args import parse_args
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    assert preparation_for(session) is preparation_for(session)


async def test_after_a_switch_to_another_session_its_screens_are_prepared_again(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    from pi_tui.session import SessionManager

    first = _session(tmp_path, 5)
    second = _session(tmp_path, 8)
    app = make_app(tmp_path, agent_dir, argv=["--session", str(first)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
        session = app.require_session()
        before = preparation_for(session)
        await session.switch_session(SessionManager.open(second, cwd=str(tmp_path)))
        await until(
            pilot, lambda: preparation_for(session) is not before and preparation_for(session).all_done()
        )
        gate.open()
        monkeypatch.setattr(TreeModel, "_build", gate.wrap(TreeModel._build))
        await SCREEN_COMMANDS["tree"](app, "")
        await until(pilot, lambda: isinstance(app.screen, TreeScreen))
        screen = app.screen
        assert isinstance(screen, TreeScreen)
        assert gate.calls == 0  # the new session's rows were built ahead
        assert len(screen.model.rows) == len(session.session_manager.get_entries()) == 32


async def test_wait_unheld_returns_once_no_screen_is_opening() -> None:
    preparation = ScreenPreparation(_steps([], 1))
    await preparation.wait_unheld()  # nothing held: at once
    release = preparation.hold()
    waiting = asyncio.ensure_future(preparation.wait_unheld())
    await asyncio.sleep(0)  # one turn of the loop
    assert not waiting.done()
    release()
    await asyncio.wait_for(waiting, 5)


async def test_resume_shows_the_sessions_modified_last_while_the_folder_is_still_being_listed(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, gate: Gate
) -> None:
    path = _session(tmp_path, 5)
    for n in range(60):  # older sessions of the project, each modified a minute after the one before
        other = SessionManager.create(str(tmp_path), session_dir=path.parent)
        other.append_message(UserMessage(content=f"older {n}"))
        other.append_message(
            AssistantMessage(content=[TextContent(text="ok")], provider="faux", model="faux-1")
        )
        assert other.path is not None
        stamp = 1_700_000_000 + 60 * n
        os.utime(other.path, (stamp, stamp))
        other.close()
    by_mtime = sorted(path.parent.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    newest = set(by_mtime[:FIRST_LOOK])
    # The work ahead lists the folder and is held before it ends (before it saves the folder's cache).
    monkeypatch.setattr(listing_cache.ListingCache, "save", gate.wrap(listing_cache.ListingCache.save))
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, gate.reached.is_set)
        try:
            await SCREEN_COMMANDS["resume"](app, "")
            await until(pilot, lambda: isinstance(app.screen, ResumeScreen))
            screen = app.screen
            assert isinstance(screen, ResumeScreen)
            await until(pilot, lambda: len(screen.shown) == FIRST_LOOK)  # before the listing ends
            await pilot.pause()
            assert screen.lists["current"] is None
            assert {info.path for info in screen.shown} == newest
            title = str(screen.query_one("#resume-title").render())
            assert f"{FIRST_LOOK} of {FIRST_LOOK}" in title and "loading…" in title
        finally:
            gate.open()
        await until(pilot, lambda: screen.lists["current"] is not None)
        await pilot.pause()
        assert len(screen.shown) == 61  # the rest follow
        title = str(screen.query_one("#resume-title").render())
        assert "61 of 61" in title and "loading" not in title
