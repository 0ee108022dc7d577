from __future__ import annotations

from pathlib import Path

from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.info_screens import InfoScreen, session_rows

from .helpers import BEFORE_COMPACTION, LARGE, HostApp, fixture_session


async def test_session_screen_shows_file_id_counts_tokens_cost_and_cache_ratio(project: Path) -> None:
    session = fixture_session(LARGE, project)
    rows = dict(session_rows(session))
    assert rows["File"] == str(project / LARGE.name)
    assert rows["ID"] == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert rows["Messages"] == "88 user · 453 assistant · 391 tool calls · 373 tool results"
    assert rows["Cost"] == f"${session.stats().cost:.4f}" and rows["Cost"] != "$0.0000"
    assert rows["Cache read ratio"].endswith("%")
    app = HostApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await SCREEN_COMMANDS["session"](app, "")
        await pilot.pause()
        assert isinstance(app.screen, InfoScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, InfoScreen)
    await session.close()


async def test_hotkeys_screen_lists_every_screens_keys(project: Path) -> None:
    session = fixture_session(LARGE, project)
    app = HostApp(session)
    async with app.run_test(size=(120, 60)) as pilot:
        await SCREEN_COMMANDS["hotkeys"](app, "")
        await pilot.pause()
        assert isinstance(app.screen, InfoScreen)
        body = app.screen.query_one("#info-body")
        rendered = "\n".join(line.text for line in body.render_lines(body.region.reset_offset))  # type: ignore[attr-defined]
        assert "shift+l" in rendered and "ctrl+f" in rendered and "what-if" in rendered
        await pilot.press("q")
        assert not isinstance(app.screen, InfoScreen)
    await session.close()


async def test_summary_screen_shows_the_latest_compaction_summary_in_full(project: Path) -> None:
    import json

    from pi_tui.modes.interactive.screens._dialogs import DetailScreen

    lines = [json.loads(line) for line in BEFORE_COMPACTION.read_text().splitlines() if line.strip()]
    last = [entry["summary"] for entry in lines if entry.get("type") == "compaction"][-1]
    session = fixture_session(BEFORE_COMPACTION, project)
    app = HostApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await SCREEN_COMMANDS["summary"](app, "")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        assert str(app.screen.query_one("#detail-content").render()).strip() == last.strip()
    await session.close()


async def test_summary_screen_says_when_there_is_none(project: Path) -> None:
    session = fixture_session(LARGE, project)
    app = HostApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await SCREEN_COMMANDS["summary"](app, "")
        await pilot.pause()
        assert any("No compaction on this branch yet" in str(n.message) for n in app._notifications)
    await session.close()


async def test_a_session_file_path_wider_than_the_screen_is_shown_whole(project: Path) -> None:
    from textual.geometry import Region

    deep = project / ("a-rather-long-folder-name-" * 3) / "sessions"
    deep.mkdir(parents=True)
    session = fixture_session(LARGE, deep)
    app = HostApp(session)
    async with app.run_test(size=(70, 30)) as pilot:
        await SCREEN_COMMANDS["session"](app, "")
        await pilot.pause()
        body = app.screen.query_one("#info-body")
        strips = body.render_lines(Region(0, 0, body.size.width, body.size.height))
        shown = "".join(strip.text.strip() for strip in strips)
        assert str(deep / LARGE.name) in shown
    await session.close()
