from __future__ import annotations

import asyncio
import fcntl
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Input, TextArea

from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.testing import FakeLLM

from ..helpers import workers_done
from .helpers import (
    BEFORE_COMPACTION,
    LARGE,
    SNAP_LOCK,
    HostApp,
    fixture_session,
    freeze_prompt_date,
    snapshot_project,
)
from .test_tree_screen import branched_session

pytestmark = [
    pytest.mark.skipif(not LARGE.exists(), reason="the shared pi fixtures are not next to this checkout"),
    # One fixed folder (its path is on the screens): one worker of a run takes these tests.
    pytest.mark.xdist_group("screens-snapshot-folder"),
]


@pytest.fixture(autouse=True)
def _snapshot_folder_lock() -> Iterator[None]:
    """Other pytest runs on this machine (another checkout) use the same fixed folder: take turns."""
    with SNAP_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _steady_cursors(app: App[Any]) -> None:
    """Stop the blink of the screen's fields, which shows their cursor for good: on a busy machine the
    screenshot came after a blink had hidden the search field's cursor (the resume screen, 1 run of the
    folder in 3 at load 14; with a 0.6 s pause before the screenshot the model screen, every run)."""
    for field in (*app.screen.query(Input), *app.screen.query(TextArea)):
        field.cursor_blink = False


def _opener(command: str, args: str = "") -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        await SCREEN_COMMANDS[command](pilot.app, args)
        await pilot.pause()
        if isinstance(pilot.app.screen, ContextScreen):
            await pilot.app.screen.ready.wait()  # it opens before its messages are counted
        await workers_done(pilot.app)  # e.g. /context's cache projection
        _steady_cursors(pilot.app)
        await pilot.pause()

    return run_before


def test_context_screen_on_the_large_fixture(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_prompt_date(monkeypatch)
    session = fixture_session(LARGE, snapshot_project())
    assert snap_compare(HostApp(session), run_before=_opener("context"), terminal_size=(130, 40))


def test_context_screen_on_the_compaction_fixture(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    freeze_prompt_date(monkeypatch)
    session = fixture_session(BEFORE_COMPACTION, snapshot_project())
    assert snap_compare(HostApp(session), run_before=_opener("context"), terminal_size=(130, 40))


def test_tree_screen_on_the_large_fixture(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    session = fixture_session(LARGE, snapshot_project())
    assert snap_compare(HostApp(session), run_before=_opener("tree"), terminal_size=(120, 30))


def test_tree_screen_on_a_branched_test_session(
    snap_compare: Any, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = asyncio.run(branched_session(fake, snapshot_project()))
    assert snap_compare(HostApp(session), run_before=_opener("tree"), terminal_size=(100, 20))


def test_compaction_review_screen(snap_compare: Any) -> None:
    from pi_tui.modes.interactive.screens.compaction_review import ReviewScreen

    session = fixture_session(BEFORE_COMPACTION, snapshot_project())
    summary = "## Goal\nPort the selectors to the theme system.\n\n## Progress\n### Done\n- [x] theme.ts read"

    async def run_before(pilot: Any) -> None:
        pilot.app.push_screen(ReviewScreen(session, summary, automatic=False))
        await pilot.pause()
        _steady_cursors(pilot.app)
        await pilot.pause()

    assert snap_compare(HostApp(session), run_before=run_before, terminal_size=(100, 24))


def test_resume_screen_on_test_written_sessions(snap_compare: Any) -> None:
    import time

    from .helpers import write_session

    project = snapshot_project()
    now = int(time.time() * 1000)  # both "now" in the list, but in a fixed order
    write_session(project, "fix the parser bug", answers=3, at_ms=now - 2000)
    write_session(project, "rename the module", name="Module rename", at_ms=now - 1000)
    from pi_tui.args import parse_args
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), project).session
    assert snap_compare(HostApp(session), run_before=_opener("resume"), terminal_size=(120, 16))


def test_settings_screen(snap_compare: Any) -> None:
    from pi_tui.args import parse_args
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), snapshot_project()).session
    assert snap_compare(HostApp(session), run_before=_opener("settings"), terminal_size=(110, 30))


def test_model_screen(snap_compare: Any) -> None:
    from pi_tui.args import parse_args
    from pi_tui.runtime.factory import create_session

    session = create_session(parse_args(["--provider", "faux"]), snapshot_project()).session
    assert snap_compare(HostApp(session), run_before=_opener("model"), terminal_size=(110, 14))


def test_session_screen_on_the_large_fixture(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    session = fixture_session(LARGE, snapshot_project())
    assert snap_compare(HostApp(session), run_before=_opener("session"), terminal_size=(120, 16))


def test_hotkeys_screen(snap_compare: Any) -> None:
    session = fixture_session(BEFORE_COMPACTION, snapshot_project())
    assert snap_compare(HostApp(session), run_before=_opener("hotkeys"), terminal_size=(100, 40))


def test_fork_screen_on_a_branched_test_session(snap_compare: Any, fake: FakeLLM) -> None:
    session = asyncio.run(branched_session(fake, snapshot_project()))
    assert snap_compare(HostApp(session), run_before=_opener("fork"), terminal_size=(100, 14))


def test_context_screen_with_panels_on_a_test_written_session(
    snap_compare: Any, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from pi_tui.args import parse_args
    from pi_tui.context.panels import Panel
    from pi_tui.runtime.factory import create_session
    from pi_tui.testing import Reply, text

    freeze_prompt_date(monkeypatch)
    fake.responder = lambda _req: Reply([text("ok")])
    session = create_session(
        parse_args(["--model", "fake-anthropic/claude-fake"]), snapshot_project()
    ).session
    session.panels.clock = lambda: datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    session.panels.register(Panel("Todo", lambda: "- [ ] write the parser", placement="prefix"))
    session.panels.register(Panel("Status", lambda: "build: green", placement="tail"))

    async def chat() -> None:
        await session.prompt("first question")
        await session.prompt("second question")

    asyncio.run(chat())
    assert snap_compare(HostApp(session), run_before=_opener("context"), terminal_size=(130, 44))
