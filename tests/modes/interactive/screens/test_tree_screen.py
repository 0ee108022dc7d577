from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import ChoiceScreen, PromptScreen
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text

from ..helpers import until, workers_done
from .helpers import ANTHROPIC, LARGE, HostApp, fixture_session


async def branched_session(fake: FakeLLM, project: Path) -> Any:
    """first → ok → second → ok, and a second branch after the first answer: alt → ok."""
    fake.responder = lambda _req: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), project).session
    await session.prompt("first question")
    first_answer = session.session_manager.get_leaf_id()
    await session.prompt("second question")
    await session.navigate(first_answer)
    await session.prompt("alternative question")
    return session


@pytest.fixture
async def session(fake: FakeLLM, project: Path) -> AsyncIterator[AgentSession]:
    """`branched_session`, closed when the test ends."""
    branched = await branched_session(fake, project)
    yield branched
    await branched.close()


def _texts(screen: TreeScreen) -> list[str]:
    return [row.text for row in screen.shown]


def _drawn(screen: TreeScreen) -> str:
    """The highlighted row as the list draws it."""
    rows = screen.query_one("#tree-list")
    strip = rows.render_line(rows.cursor - int(rows.scroll_offset.y))  # type: ignore[attr-defined]
    return "".join(segment.text for segment in strip)


def _move_to(screen: TreeScreen, startswith: str) -> None:
    index = next(i for i, row in enumerate(screen.shown) if row.text.startswith(startswith))
    screen.query_one("#tree-list").cursor = index  # type: ignore[attr-defined]


async def _open(app: HostApp, pilot: Any) -> TreeScreen:
    await SCREEN_COMMANDS["tree"](app, "")
    await pilot.pause()
    assert isinstance(app.screen, TreeScreen)
    return app.screen


async def test_tree_shows_both_branches_marks_the_active_path_and_selects_the_leaf(
    session: AgentSession,
) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        texts = _texts(screen)
        assert texts.count("user: first question") == 1
        assert "user: second question" in texts and "user: alternative question" in texts
        by_text = {row.text: row for row in screen.shown}
        assert by_text["user: alternative question"].on_active_path
        assert not by_text["user: second question"].on_active_path
        assert any(row.branch_point for row in screen.shown)
        leaf = screen.shown[screen.query_one("#tree-list").cursor]  # type: ignore[attr-defined]
        assert leaf.id == session.session_manager.get_leaf_id()
        await pilot.press("escape")
        assert not isinstance(app.screen, TreeScreen)


async def test_the_highlighted_row_carries_pis_marker_and_the_others_a_blank_gutter(
    session: AgentSession,
) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        rows = screen.query_one("#tree-list")
        drawn = [
            "".join(segment.text for segment in rows.render_line(y))  # type: ignore[attr-defined]
            for y in range(len(screen.shown))
        ]
        at = rows.cursor - int(rows.scroll_offset.y)  # type: ignore[attr-defined]
        assert drawn[at].startswith("› ") and drawn[at][2:].lstrip().startswith("• ")
        assert all(line.startswith("  ") for y, line in enumerate(drawn) if y != at)
        _move_to(screen, "user: first question")
        await pilot.pause()
        assert _drawn(screen).startswith("› ") and "user: first question" in _drawn(screen)


async def test_under_the_tree_a_line_says_which_row_of_how_many_as_pi_does(session: AgentSession) -> None:
    from textual.widgets import Static

    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        rows = screen.query_one("#tree-list")
        total = len(screen.shown)

        def position() -> str:
            return str(screen.query_one("#tree-position", Static).render())

        at = rows.cursor + 1  # type: ignore[attr-defined]
        await until(pilot, lambda: position() == f"({at}/{total})")
        await pilot.press("up")
        await until(pilot, lambda: position() == f"({at - 1}/{total})")
        await pilot.press("ctrl+u")  # your messages only: fewer rows
        await until(
            pilot, lambda: position().endswith(f"/{len(screen.shown)})") and len(screen.shown) < total
        )


async def test_enter_on_another_branch_without_summary_moves_the_leaf_and_prefills_the_editor(
    session: AgentSession,
) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        target = next(r for r in screen.shown if r.text == "user: second question")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("enter")  # "No summary"
        await workers_done(app)
        await pilot.pause()
        assert not isinstance(app.screen, TreeScreen)
    assert app.editor_text == "second question"
    assert session.session_manager.get_leaf_id() == target.parent_id
    assert not any(e.type == "branch_summary" for e in session.session_manager.get_entries())


async def test_summarize_with_a_custom_focus_writes_a_branch_summary_at_the_new_position(
    session: AgentSession, fake: FakeLLM
) -> None:
    fake.responder = lambda _req: Reply([text("## Goal\nexplored an alternative")])
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # "Summarize with custom prompt"
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"the naming", "enter")
        await workers_done(app)
        await pilot.pause()
    summaries = [e for e in session.session_manager.get_entries() if e.type == "branch_summary"]
    assert len(summaries) == 1 and "explored an alternative" in summaries[0].summary
    assert "Additional focus: the naming" in str(fake.requests[-1].body)
    assert session.session_manager.get_leaf_id() == summaries[0].id


async def test_escape_on_the_summary_question_keeps_the_tree_open_and_nothing_moves(
    session: AgentSession,
) -> None:
    leaf = session.session_manager.get_leaf_id()
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")
        await workers_done(app)
        await pilot.pause()
        assert isinstance(app.screen, TreeScreen)
        await pilot.press("enter")  # the cursor is where it was
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("escape")
        await workers_done(app)
    assert session.session_manager.get_leaf_id() == leaf


async def test_escape_while_the_branch_summary_is_written_cancels_it_and_keeps_the_tree_open(
    session: AgentSession, fake: FakeLLM
) -> None:
    """ "Summarizing branch... (Esc to cancel)": Esc cancels the summary and the tree stays open at the
    same row, as pi re-shows it. Esc closed the tree instead, the summary vanished with no word, and
    its toast stayed on screen."""
    leaf = session.session_manager.get_leaf_id()
    fake.responder = lambda _req: Reply([text("slow " * 200)], frame_delay=0.05)
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("down", "enter")  # Summarize
        await until(pilot, lambda: session.compaction.is_compacting)
        await pilot.press("escape")
        await workers_done(app)
        await pilot.pause()
        assert app.screen is screen
        assert _drawn(screen).strip().endswith("user: second question")
        messages = [str(n.message) for n in app._notifications]
        assert any("cancelled" in m for m in messages)
        assert not any("Summarizing" in m for m in messages)
    assert session.session_manager.get_leaf_id() == leaf


async def test_enter_on_the_leaf_says_already_there(session: AgentSession) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(app, pilot)
        await pilot.press("enter")
        await workers_done(app)
        await pilot.pause()
        assert isinstance(app.screen, TreeScreen)
        assert any("Already at this point" in str(n.message) for n in app._notifications)


async def test_shift_l_labels_an_entry_and_the_labelled_filter_shows_it(session: AgentSession) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("ctrl+l")  # the labelled rows before the label: none (what a later look must not reuse)
        assert _texts(screen) == []
        await pilot.press("ctrl+l")
        _move_to(screen, "user: first question")
        target = next(r for r in screen.shown if r.text == "user: first question")
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"start", "enter")
        await pilot.pause()
        assert screen.model.labels[target.id] == "start"
        await pilot.press("ctrl+l")
        assert _texts(screen) == ["user: first question"]
        await pilot.press("ctrl+l")
        assert len(_texts(screen)) > 1
    assert session.session_manager.get_label(target.id) == "start"


async def test_filters_cycle_and_typing_searches(session: AgentSession) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("ctrl+u")
        assert all(t.startswith("user: ") for t in _texts(screen)) and len(_texts(screen)) == 3
        await pilot.press("ctrl+o")
        assert screen.model.mode == "labeled-only"
        await pilot.press("ctrl+o")
        assert screen.model.mode == "all"
        assert any(t.startswith("[model:") for t in _texts(screen))
        await pilot.press("ctrl+d")
        await pilot.press(*"altern")
        assert _texts(screen) == ["user: alternative question"]
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
        assert len(_texts(screen)) > 3 and screen.model.query == ""


async def test_folding_a_branch_hides_it_and_unfolding_shows_it_again(session: AgentSession) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        count = len(screen.shown)
        await pilot.press("ctrl+left")
        assert len(screen.shown) == count - 1  # its answer is folded away
        assert "⊞ user: second question" in _drawn(screen)
        await pilot.press("ctrl+right")
        assert len(screen.shown) == count
        assert "⊟ user: second question" in _drawn(screen)


async def test_ctrl_f_forks_into_a_new_session_file(fake: FakeLLM, project: Path) -> None:
    session = await branched_session(fake, project)
    old_path = session.session_manager.path
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        await pilot.press("ctrl+f")
        await workers_done(app)
        await pilot.pause()
        assert not isinstance(app.screen, TreeScreen)
    assert app.editor_text == "second question"
    new_path = session.session_manager.path
    assert new_path != old_path
    await session.close()
    forked = SessionManager.open(new_path)
    assert forked.parent_session and Path(forked.parent_session).name == old_path.name
    assert [getattr(e, "message", None) and e.message.role for e in forked.get_branch()][-2:] == [
        "user",
        "assistant",
    ]
    forked.close()


async def test_the_title_gives_no_count_that_disagrees_with_the_rows_shown(project: Path) -> None:
    """As pi: the only count is "(n/total)" of the rows the filter shows; the title once counted every
    entry (model and thinking changes too), more than the list showed."""
    from textual.widgets import Static

    session = fixture_session(LARGE, project)
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        await until(pilot, lambda: not screen.model.partial)
        await pilot.pause()
        assert len(screen.shown) < len(screen.model.rows)  # the default filter hides some entries
        assert str(screen.query_one("#tree-title", Static).render()) == "Session Tree"
        position = str(screen.query_one("#tree-position", Static).render())
        assert position.endswith(f"/{len(screen.shown)})"), position
        await pilot.press("ctrl+o")  # another filter: named in the title, still no count
        await until(pilot, lambda: "filter:" in str(screen.query_one("#tree-title", Static).render()))
        assert str(screen.query_one("#tree-title", Static).render()).startswith("Session Tree · filter: ")
    await session.close()


async def test_tree_opens_on_the_large_fixture_with_the_leaf_selected(project: Path) -> None:
    session = fixture_session(LARGE, project)
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        # The first frame may show the rows near the leaf; the rest follow from the work ahead's thread.
        await until(pilot, lambda: not screen.model.partial)
        assert len(screen.model.rows) == len(session.session_manager.get_entries())
        cursor = screen.query_one("#tree-list").cursor  # type: ignore[attr-defined]
        assert screen.shown[cursor].is_leaf
        await pilot.press("up", "up", "pageup", "left", "right")
        assert screen.query_one("#tree-list").cursor < cursor  # type: ignore[attr-defined]
    await session.close()


async def test_fork_picker_lists_every_message_of_yours_and_enter_forks(session: AgentSession) -> None:
    from pi_tui.modes.interactive.screens.tree_screen import ForkScreen

    old_path = session.session_manager.path
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await SCREEN_COMMANDS["fork"](app, "")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ForkScreen)
        assert str(screen.query_one("#tree-title").render()).startswith("Fork from message")
        assert sorted(_texts(screen)) == [
            "user: alternative question",
            "user: first question",
            "user: second question",
        ]
        _move_to(screen, "user: second question")
        await pilot.press("enter")
        await workers_done(app)
        await pilot.pause()
        assert not isinstance(app.screen, (ForkScreen, ChoiceScreen))
    assert app.editor_text == "second question" and session.session_manager.path != old_path


async def test_fork_is_refused_before_the_first_answer(project: Path) -> None:
    session = create_session(parse_args(["--provider", "faux"]), project).session
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await SCREEN_COMMANDS["fork"](app, "")
        await pilot.pause()
        assert not isinstance(app.screen, TreeScreen)
        assert any("Nothing to fork from yet" in str(n.message) for n in app._notifications)
    await session.close()


async def test_shift_t_shows_when_each_label_was_set(session: AgentSession) -> None:
    first = next(
        e
        for e in session.session_manager.get_entries()
        if getattr(getattr(e, "message", None), "role", "") == "user"
    )
    session.label(first.id, "start")
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        index = next(i for i, r in enumerate(screen.shown) if r.id == first.id)
        assert str(screen._render_row(index)).endswith("[start]")
        await pilot.press("T")
        when = screen.model.label_times[first.id][:16].replace("T", " ")
        assert str(screen._render_row(index)).endswith(f"[start {when}]")


async def test_jumping_while_the_agent_answers_aborts_the_answer_first(
    session: AgentSession, fake: FakeLLM
) -> None:
    import asyncio

    from pi_tui.testing import Reply, text

    started = asyncio.Event()

    def slow(_request: Any) -> Reply:
        started.set()
        return Reply([text("word " * 400)], frame_delay=0.01)

    fake.responder = slow
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        run = asyncio.create_task(session.prompt("a long answer please"))
        await asyncio.wait_for(started.wait(), 10)
        _move_to(screen, "user: first question")
        await pilot.press("enter")
        await pilot.pause()
        if isinstance(app.screen, ChoiceScreen):
            await pilot.press("enter")  # no summary
        await workers_done(app)
        await run
        assert not session.is_streaming
    roles = [getattr(getattr(e, "message", None), "role", None) for e in session.session_manager.get_branch()]
    assert "user" not in roles and "assistant" not in roles  # back before the first question
    aborted = [
        e
        for e in session.session_manager.get_entries()
        if getattr(getattr(e, "message", None), "stop_reason", None) == "aborted"
    ]
    assert len(aborted) == 1  # the interrupted answer is kept in the file
    assert app.editor_text == "first question"


async def test_ctrl_x_copies_the_entry_shift_ctrl_o_cycles_back_and_ctrl_c_closes(
    session: AgentSession,
) -> None:
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        _move_to(screen, "user: second question")
        await pilot.press("ctrl+x")
        assert app.clipboard == "user: second question"
        await pilot.press("ctrl+shift+o")
        assert screen.model.mode == "all"
        await pilot.press("ctrl+shift+o")
        assert screen.model.mode == "labeled-only"
        await pilot.press("ctrl+c")
        assert not isinstance(app.screen, TreeScreen)


async def test_deep_tree_pans_so_the_highlighted_row_text_is_readable_at_80_columns(
    project: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """A session with an abandoned branch every few entries nests ~70 levels deep; at 80 columns the
    highlighted row's text must still show (the indentation pans sideways, as in pi)."""
    from bench import big_sessions

    monkeypatch.setattr(big_sessions, "BRANCH_EVERY", 20)
    path = big_sessions.write_big_session(tmp_path / "deep.jsonl", 1500, project)
    session = fixture_session(path, project)
    app = HostApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        leaf = screen.shown[screen.query_one("#tree-list").cursor]  # type: ignore[attr-defined]
        assert leaf.depth > 40  # deeper than 80 columns of indentation
        drawn = _drawn(screen)
        assert leaf.text[:30] in drawn
        # Moving up to a shallow row pans back: its text shows too.
        _move_to(screen, "user: ")
        await pilot.pause()
        row = screen.shown[screen.query_one("#tree-list").cursor]  # type: ignore[attr-defined]
        assert row.text[:30] in _drawn(screen)


async def test_tree_on_an_empty_session_says_so_instead_of_opening(project: Path) -> None:
    """As pi: with nothing in the session, /tree shows "No entries in session" and opens no screen."""
    session = create_session(parse_args(["--provider", "faux"]), project).session
    app = HostApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await SCREEN_COMMANDS["tree"](app, "")
        await pilot.pause()
        assert not isinstance(app.screen, TreeScreen)
        assert any("No entries in session" in str(n.message) for n in app._notifications)
    await session.close()


async def test_escape_clears_a_search_before_it_closes_the_tree_as_pi_does(session: AgentSession) -> None:
    """In pi's tree (and /fork, the same list) Esc first clears what was typed and shows every row
    again; only an Esc with no search closes it."""
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        count = len(screen.shown)
        await pilot.press(*"altern")
        assert _texts(screen) == ["user: alternative question"]
        await pilot.press("escape")
        assert app.screen is screen and screen.model.query == ""
        assert len(screen.shown) == count
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not screen)


async def test_the_help_names_every_key_pi_names_shift_t_label_times_included(session: AgentSession) -> None:
    """pi's tree help lists Shift+T (show when labels were set); the key worked here but went unsaid."""
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(app, pilot)
        for key in ("ctrl+x copy", "shift+l label", "shift+t label time", "ctrl+o cycle"):
            assert key in screen.help_text
