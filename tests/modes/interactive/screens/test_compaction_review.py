from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.widgets import TextArea

from pi_tui.args import parse_args
from pi_tui.compaction import CompactionCancelled
from pi_tui.modes.interactive.screens import install
from pi_tui.modes.interactive.screens._dialogs import EditScreen, PromptScreen
from pi_tui.modes.interactive.screens.compaction_review import ReviewScreen
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text
from tests.compaction.helpers import is_summary_request

from ..helpers import workers_done
from .helpers import ANTHROPIC, HostApp

EDITED = "## Goal\nEDITED: only the naming question matters."


def _settings(agent_dir: Path, review: str) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"keepRecentTokens": 10, "reserveTokens": 2000, "review": review}})
    )


def _replier(request: Any) -> Reply:
    if is_summary_request(request):
        return Reply([text("ORIGINAL SUMMARY of the talk")])
    return Reply([text("ok " + "word " * 30)])


async def _chatted(fake: FakeLLM, agent_dir: Path, project: Path, review: str) -> Any:
    """A session of three questions and answers, whose compactions are reviewed as ``review`` says."""
    _settings(agent_dir, review)
    fake.responder = _replier
    session = create_session(parse_args(["--model", ANTHROPIC]), project).session
    for prompt in ("first question about naming", "second question", "third question"):
        await session.prompt(prompt)
    return session


async def _compacting(app: HostApp, pilot: Any, session: Any) -> asyncio.Task[Any]:
    """Start a manual compaction with the screens installed; returns it once its review shows."""
    install(app)
    task = asyncio.create_task(session.compact())
    await _wait_for(app, pilot, ReviewScreen)
    return task


async def _wait_for(app: HostApp, pilot: Any, kind: type) -> None:
    # A deadline, not a count of short pauses: the summary request (a round trip to the fake server) can
    # take seconds on a loaded machine.
    deadline = asyncio.get_running_loop().time() + 20
    while not isinstance(app.screen, kind):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{kind.__name__} never showed; the screen is {app.screen!r}")
        await pilot.pause(0.01)


async def test_an_edited_summary_is_what_the_next_request_carries_and_survives_continue(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    session = await _chatted(fake, agent_dir, project, "manual-only")
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        task = await _compacting(app, pilot, session)
        assert "ORIGINAL SUMMARY" in app.screen.summary  # type: ignore[attr-defined]
        await pilot.press("e")
        await _wait_for(app, pilot, EditScreen)
        app.screen.query_one(TextArea).text = EDITED
        await pilot.press("ctrl+s")
        await _wait_for(app, pilot, ReviewScreen)
        await pilot.press("enter")
        result = await task
    assert result.summary == EDITED
    entry = next(e for e in reversed(session.session_manager.get_entries()) if e.type == "context_transform")
    assert entry.patch[0]["summary"] == EDITED
    await session.prompt("next question")
    carried = json.dumps(fake.requests[-1].body)
    assert json.dumps(EDITED)[1:-1] in carried and "ORIGINAL SUMMARY" not in carried
    await session.close()

    resumed = create_session(parse_args(["-c", "--model", ANTHROPIC]), project).session
    await resumed.prompt("after the restart")
    carried = json.dumps(fake.requests[-1].body)
    assert json.dumps(EDITED)[1:-1] in carried and "ORIGINAL SUMMARY" not in carried
    await resumed.close()
    assert fake.violations == []


async def test_escape_cancels_the_compaction_and_nothing_is_written(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    session = await _chatted(fake, agent_dir, project, "always")
    before = len(session.session_manager.get_entries())
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        task = await _compacting(app, pilot, session)
        await pilot.press("escape")
        try:
            await task
        except CompactionCancelled:
            pass
        else:
            raise AssertionError("the compaction was applied")
    assert len(session.session_manager.get_entries()) == before
    await session.close()


async def test_regenerate_with_a_focus_asks_again_and_applies_the_new_summary(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    session = await _chatted(fake, agent_dir, project, "manual-only")
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        task = await _compacting(app, pilot, session)
        fake.responder = lambda _r: Reply([text("REGENERATED with focus")])
        await pilot.press("r")
        await _wait_for(app, pilot, PromptScreen)
        await pilot.press(*"naming", "enter")
        await _wait_for(app, pilot, ReviewScreen)
        await workers_done(app)
        await pilot.pause()
        assert "REGENERATED with focus" in app.screen.summary  # type: ignore[attr-defined]
        assert any("Additional focus: naming" in json.dumps(r.body) for r in fake.requests)
        await pilot.press("enter")
        result = await task
    assert "REGENERATED with focus" in result.summary
    await session.close()


async def test_with_review_never_the_summary_is_applied_unreviewed(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    session = await _chatted(fake, agent_dir, project, "never")
    app = HostApp(session)
    async with app.run_test(size=(120, 40)):
        install(app)
        result = await session.compact()  # with "never" even /compact is not reviewed
        assert "ORIGINAL SUMMARY" in result.summary
    await session.close()
