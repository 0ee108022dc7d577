from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import ConfirmScreen, PromptScreen
from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen
from pi_tui.runtime.factory import create_session
from pi_tui.session.listing import read_session_info

from ..helpers import until, workers_done
from .helpers import HostApp, write_session


def _session(project: Path) -> Any:
    return create_session(parse_args(["--provider", "faux"]), project).session


async def _open(app: HostApp, pilot: Any) -> ResumeScreen:
    await SCREEN_COMMANDS["resume"](app, "")
    await pilot.pause()
    assert isinstance(app.screen, ResumeScreen)
    return app.screen


def _titles(screen: ResumeScreen) -> list[str]:
    return [s.name or s.first_message for s in screen.shown]


async def test_resume_lists_this_projects_sessions_filters_as_you_type_and_resumes(project: Path) -> None:
    write_session(project, "fix the parser bug", answers=3)
    target = write_session(project, "write the changelog")
    write_session(project, "rename the module", name="Module rename")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        assert sorted(_titles(screen)) == ["Module rename", "fix the parser bug", "write the changelog"]
        counts = {s.first_message: s.message_count for s in screen.shown}
        assert counts["fix the parser bug"] == 6
        await pilot.press(*"changelog")
        assert _titles(screen) == ["write the changelog"]
        await pilot.press("enter")
        await workers_done(app)
        await pilot.pause()
        assert not isinstance(app.screen, ResumeScreen)
    assert session.session_manager.path == target
    assert [m.role for m in session.messages] == ["user", "assistant"]
    await session.close()


async def test_ctrl_r_renames_a_session_in_its_file(project: Path) -> None:
    path = write_session(project, "an unnamed session")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"Parser work", "enter")
        await pilot.pause()
        assert _titles(screen) == ["Parser work"]
        await pilot.press("ctrl+n")
        assert _titles(screen) == ["Parser work"]
        await pilot.press("ctrl+p")  # pi's app.session.togglePath
        assert str(path) in str(screen._render_row(0))
    info = read_session_info(path)
    assert info is not None and info.name == "Parser work"
    await session.close()


async def test_ctrl_d_asks_then_moves_the_file_to_the_trash(project: Path, agent_dir: Path) -> None:
    keep = write_session(project, "keep me")
    gone = write_session(project, "delete me")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press(*"delete")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert gone.exists()
        await pilot.press("ctrl+d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert "delete me" not in _titles(screen)
    assert not gone.exists() and keep.exists()
    assert (agent_dir / "trash" / gone.name).read_text().count("delete me") == 1
    await session.close()


async def test_tab_shows_the_sessions_of_every_project(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    write_session(project, "here")
    write_session(other, "over there")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        assert _titles(screen) == ["here"]
        await pilot.press("tab")
        await workers_done(app)
        await pilot.pause()
        assert sorted(_titles(screen)) == ["here", "over there"]
        await pilot.press("tab")
        assert _titles(screen) == ["here"]
        await pilot.press("escape")
        assert not isinstance(app.screen, ResumeScreen)
    await session.close()


async def test_arrows_move_and_ctrl_s_cycles_threaded_recent_and_relevance(project: Path) -> None:
    write_session(project, "parser notes")
    write_session(project, "the parser rewrite")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        rows = screen.query_one("#resume-list")
        assert rows.cursor == 0  # type: ignore[attr-defined]
        await pilot.press("down")
        assert rows.cursor == 1  # type: ignore[attr-defined]
        await pilot.press("up")
        assert rows.cursor == 0  # type: ignore[attr-defined]
        assert screen.sort == "threaded"
        await pilot.press("ctrl+s")
        assert screen.sort == "recent"
        await pilot.press("ctrl+s")
        assert screen.sort == "relevance" and "sort: relevance" in str(
            screen.query_one("#resume-title").render()
        )
        await pilot.press(*"parser")
        assert _titles(screen)[0] == "parser notes"  # the earlier, tighter match ranks first
    await session.close()


async def test_threaded_order_puts_forks_under_their_parent(project: Path) -> None:
    # Distinct times: three sessions written within one millisecond tie in the newest-first order.
    parent = write_session(project, "the original", at_ms=1_700_000_000_000)
    write_session(project, "an unrelated session", at_ms=1_700_000_001_000)
    write_session(project, "a fork of the original", parent=parent, at_ms=1_700_000_002_000)
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        assert _titles(screen) == ["the original", "a fork of the original", "an unrelated session"]
        assert "└ a fork of the original" in str(screen._render_row(1))
        await pilot.press("ctrl+s")  # recent: newest first, flat
        assert _titles(screen) == ["a fork of the original", "an unrelated session", "the original"]
    await session.close()


async def test_a_keystroke_looks_up_the_list_style_once_per_drawing_not_per_row(
    project: Path, monkeypatch: Any
) -> None:
    """Textual works out a widget's style from all its ancestors at each lookup; doing that for every
    row drawn made each search keystroke cost ~0.3 ms a row on a full picker."""
    from pi_tui.modes.interactive.screens._rowlist import RowList

    for n in range(40):
        write_session(project, f"session number {n} about the parser")
    calls = {"styles": 0, "lines": 0}
    styles, line = RowList._current_styles, RowList.render_line

    def counting_styles(self: RowList) -> Any:
        calls["styles"] += 1
        return styles(self)

    def counting_line(self: RowList, y: int) -> Any:
        calls["lines"] += 1
        return line(self, y)

    monkeypatch.setattr(RowList, "_current_styles", counting_styles)
    monkeypatch.setattr(RowList, "render_line", counting_line)
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _open(app, pilot)
        calls.update(styles=0, lines=0)
        await pilot.press("p")
        await pilot.pause()
        assert len(screen.shown) == 40
        assert calls["lines"] >= 20  # the visible rows were drawn again
        assert calls["styles"] * 10 <= calls["lines"]
    await session.close()


async def test_new_after_resuming_another_folders_session_is_filed_under_that_folder(
    project: Path, tmp_path: Path
) -> None:
    """As pi 0.87.1: the resumed session works in its own folder, so ``/new`` starts there too."""
    from pi_tui.session import default_session_dir
    from pi_tui.session.listing import list_sessions

    other = tmp_path / "elsewhere"
    other.mkdir()
    mine = write_session(project, "here")
    theirs = write_session(other, "over there")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("tab")
        # The listing of every folder shows (waiting for the workers instead raised when a newer read of
        # the rows' texts cancelled an older one, as it may under load).
        await until(pilot, lambda: "over there" in _titles(screen))
        await pilot.press(*"over there")
        await until(pilot, lambda: _titles(screen) == ["over there"])
        await pilot.press("enter")
        await until(pilot, lambda: session.session_manager.path == theirs)
        assert session.cwd == other.resolve()
        await session.new_session()
        fresh = session.session_manager
        assert fresh.path is not None and fresh.path.parent == default_session_dir(other.resolve())
        assert fresh.header.cwd == str(other.resolve())
        # the picker's own-folder list is now that folder's
        screen = await _open(app, pilot)
        assert _titles(screen) == ["over there"]
    assert [s.path for s in list_sessions(other)] == [theirs]
    assert mine.exists()
    await session.close()


async def test_in_an_80_column_terminal_each_row_still_shows_age_count_and_size(project: Path) -> None:
    """The title column narrows so the age, message count and size stay on screen (they were cut off
    to "…" below ~100 columns)."""
    from pi_tui.modes.interactive.screens._rowlist import RowList

    write_session(project, "fix the parser bug " * 6, answers=3)
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(80, 20)) as pilot:
        screen = await _open(app, pilot)
        await pilot.pause()
        row = screen.query_one("#resume-list", RowList).render_line(0).text
        assert row.startswith("› ")  # pi's marker on the highlighted session
        assert "fix the parser" in row and "…" in row  # the long title is shortened
        assert "6 msgs" in row and row.rstrip().endswith("B")  # and the size is the last thing shown
    await session.close()
