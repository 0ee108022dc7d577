"""``/resume`` searches whole conversations, as pi does: what the listing shows at once, the rest as the
folder's text index brings it in, without the picker waiting for it."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen
from pi_tui.runtime.factory import create_session
from pi_tui.session import text_index
from pi_tui.session.text_index import INDEX_NAME

from ..helpers import until
from .helpers import HostApp, write_session

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from pi_tui.runtime.agent_session import AgentSession


def _session(project: Path) -> AgentSession:
    return create_session(parse_args(["--provider", "faux"]), project).session


def _big_session(folder: Path, project: Path, deep: str) -> Path:
    """A session of ~1 MB whose only mention of ``deep`` is an answer in its middle."""

    def line(n: int, role: str, text: str) -> str:
        message = {
            "role": role,
            "content": [{"type": "text", "text": text}],
            "timestamp": 1_700_000_000_000 + n,
        }
        entry = {"type": "message", "id": f"b{n:06d}", "parentId": None, "timestamp": "2025-01-01T00:00:00Z"}
        return json.dumps({**entry, "message": message})

    header = {"type": "session", "version": 3, "id": "big-session", "timestamp": "2025-01-01T00:00:00Z"}
    lines = [json.dumps({**header, "cwd": str(project)})]
    for n in range(4_000):
        lines.append(line(n, "user" if n % 2 == 0 else "assistant", f"step {n} of the long refactor"))
    lines.insert(2_000, line(99_999, "assistant", deep))
    path = folder / "2025-01-01T00-00-00-000Z_big-session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 256 * 1024
    return path


def _title(screen: ResumeScreen) -> str:
    return str(screen.query_one("#resume-title").render())


def _paths(screen: ResumeScreen) -> list[Path]:
    return [info.path for info in screen.shown]


async def _open(app: HostApp, pilot: Pilot[None]) -> ResumeScreen:
    await SCREEN_COMMANDS["resume"](app, "")
    await pilot.pause()
    assert isinstance(app.screen, ResumeScreen)
    return app.screen


async def test_a_word_deep_inside_a_big_session_and_in_an_answer_is_found(project: Path) -> None:
    small = write_session(project, "plain question", answers=2)  # answers: "answer 0", "answer 1"
    big = _big_session(small.parent, project, "the quokka migration plan")
    other = write_session(project, "unrelated")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await until(pilot, lambda: screen.texts.progress is None and len(screen.texts.every) == 3)
        await pilot.press(*'"quokka migration"')
        await until(pilot, lambda: screen.searching is None)
        assert _paths(screen) == [big]
        await pilot.press("ctrl+u")  # the search box emptied
        await until(pilot, lambda: screen.query_one("#resume-search").value == "")  # type: ignore[attr-defined]
        await pilot.press(*'"answer 1"')  # a later answer of a small session: searched on the keystroke
        assert _paths(screen) == [small]
        await until(pilot, lambda: screen.searching is None)
        assert _paths(screen) == [small]
        assert other.exists()
    assert (small.parent / INDEX_NAME).is_file()
    await session.close()


async def test_the_picker_answers_keys_while_the_conversations_are_read(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_session(project, "zebra crossing notes")
    big = _big_session(first.parent, project, "a zebra in the data center")
    release = threading.Event()
    real_read = text_index._read

    def held_read(path: Path, stat: os.stat_result, *rest: object) -> object:
        release.wait(30)  # the test lets the reading go on once it has checked the picker meanwhile
        return real_read(path, stat, *rest)

    monkeypatch.setattr(text_index, "_read", held_read)
    session = _session(project)
    app = HostApp(session)
    try:
        async with app.run_test(size=(140, 30)) as pilot:
            screen = await _open(app, pilot)
            await until(pilot, lambda: screen.texts.progress is not None)
            assert "reading conversations 0/2…" in _title(screen)
            await pilot.press(*"zebra")
            assert _paths(screen) == [first]  # the first message is known at once
            assert "reading conversations 0/2…" in _title(screen)
            await pilot.press("ctrl+s")  # keys still act: recent order, the same match
            assert screen.sort == "recent" and _paths(screen) == [first]
            release.set()
            await until(pilot, lambda: set(_paths(screen)) == {first, big})
            await until(pilot, lambda: "reading conversations" not in _title(screen))
            assert "searching" not in _title(screen)
    finally:
        release.set()
    await session.close()


async def test_a_session_appended_to_since_the_index_was_written_is_searched_with_its_new_text(
    project: Path,
) -> None:
    path = write_session(project, "first topic")
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await until(pilot, lambda: screen.texts.progress is None and screen.texts.every)
    assert "first topic" in (path.parent / INDEX_NAME).read_text()
    from pi_tui.ai.types import AssistantMessage, TextContent
    from pi_tui.session import SessionManager

    manager = SessionManager.open(path, cwd=project)
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text="a pelican joined")], stop_reason="stop", model="m", provider="p"
        )
    )
    manager.close()
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await until(pilot, lambda: screen.texts.progress is None and screen.texts.every)
        await pilot.press(*"pelican")
        await until(pilot, lambda: screen.searching is None)
        assert _paths(screen) == [path]
    await session.close()


async def test_all_projects_search_every_folders_conversations(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    here = write_session(project, "local work")
    there = write_session(other, "remote work", answers=3)  # answers "answer 0" … "answer 2"
    session = _session(project)
    app = HostApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("tab")
        await until(pilot, lambda: screen.lists["all"] is not None and screen.texts.progress is None)
        await until(pilot, lambda: there in screen.texts.every)
        await pilot.press(*'"answer 2"')
        await until(pilot, lambda: screen.searching is None)
        assert _paths(screen) == [there]
        assert here.exists()
    assert (there.parent / INDEX_NAME).is_file() and (here.parent / INDEX_NAME).is_file()
    await session.close()
