"""The start-up trust question's answers, as pi 0.87.1 handles them: "Do not trust" is saved in
``trust.json`` (the question is not asked again), "Do not trust (this session only)" and Escape save
nothing, "Trust parent folder" saves the parent; and a parent folder's ``.agents/skills`` is asked about."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive import UNTRUSTED_PROJECT, project_needs_trust, project_trust_files
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.chat import Notice
from pi_tui.modes.interactive.dialogs import SelectDialog

from .helpers import make_app, until


def _project(root: Path) -> Path:
    (root / ".pi" / "prompts").mkdir(parents=True)
    (root / ".pi" / "prompts" / "review.md").write_text("---\ndescription: Review\n---\nReview $1")
    return root


def _app(project: Path, agent_dir: Path) -> PiApp:
    return make_app(
        project,
        agent_dir,
        FauxScript(),
        needs_trust=lambda where: project_needs_trust(where, agent_dir),
        trust_for_this_run=lambda: None,
    )


async def _answer(app: PiApp, *keys: str) -> list[str]:
    """Answer the start-up question with ``keys``; the prompt templates the session then offers."""
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.press(*keys)
        await until(pilot, app.ready.is_set)
        session = app.require_session()
        assert session.resources is not None
        return [t.name for t in session.resources.templates]


async def _start_notices(app: PiApp) -> list[str]:
    """The chat's notices once the session is ready (no question: a decision is saved or not needed)."""
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        return [b.text for b in app.chat.query(NoticeBlock)]


def _saved(agent_dir: Path) -> dict[str, bool]:
    path = agent_dir / "trust.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def test_do_not_trust_is_saved_and_not_asked_again(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path / "proj")
    assert await _answer(_app(project, agent_dir), "down", "down", "down", "enter") == []
    assert _saved(agent_dir) == {os.path.realpath(project): False}
    assert not project_needs_trust(project, agent_dir)  # remembered, as pi


async def test_do_not_trust_for_this_session_saves_nothing(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path / "proj")
    assert await _answer(_app(project, agent_dir), "down", "down", "down", "down", "enter") == []
    assert _saved(agent_dir) == {}
    assert project_needs_trust(project, agent_dir)  # asked again next time


async def test_escape_trusts_nothing_and_saves_nothing(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path / "proj")
    assert await _answer(_app(project, agent_dir), "escape") == []
    assert _saved(agent_dir) == {}
    assert project_needs_trust(project, agent_dir)


async def test_trust_parent_folder_saves_the_parent_and_loads_the_project(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path / "proj")
    assert "review" in await _answer(_app(project, agent_dir), "down", "enter")
    assert _saved(agent_dir) == {os.path.realpath(tmp_path): True}
    assert not project_needs_trust(project, agent_dir)


async def test_a_parent_folders_agents_skills_is_asked_about(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "repo" / "sub"
    project.mkdir(parents=True)
    skill = tmp_path / "repo" / ".agents" / "skills" / "helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: helper\ndescription: d\n---\nbody\n")
    assert project_needs_trust(project, agent_dir)
    assert project_trust_files(project) == ["../.agents/skills/helper/SKILL.md"]
    async with _app(project, agent_dir).run_test(size=(100, 30)) as pilot:
        app = pilot.app
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.press("enter")  # Trust
        await until(pilot, lambda: app.ready.is_set())
        session = app.session  # type: ignore[attr-defined]
        assert session.resources is not None
        assert "helper" in [s.name for s in session.resources.skills]


def test_the_users_own_agents_skills_is_not_asked_about(agent_dir: Path) -> None:
    home = Path.home()  # the test's own temporary home (conftest)
    (home / ".agents" / "skills" / "mine").mkdir(parents=True)
    project = home / "code" / "proj"
    project.mkdir(parents=True)
    assert not project_needs_trust(project, agent_dir)
    assert not project_needs_trust(home, agent_dir)  # even when the project is the home folder


def test_a_saved_decision_or_default_trust_setting_is_not_asked_about(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path / "proj")
    agent_dir.mkdir(parents=True, exist_ok=True)
    assert project_needs_trust(project, agent_dir)
    for default in ("never", "always"):
        (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": default}))
        assert not project_needs_trust(project, agent_dir)
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "ask"}))
    assert project_needs_trust(project, agent_dir)


async def test_an_untrusted_project_says_once_what_is_ignored_as_pi(tmp_path: Path, agent_dir: Path) -> None:
    project = _project(tmp_path / "proj")
    assert await _answer(_app(project, agent_dir), "down", "down", "down", "enter") == []  # Do not trust
    assert UNTRUSTED_PROJECT in await _start_notices(_app(project, agent_dir))  # and on the next start
    # its extensions' own notice says it already: once is enough
    (project / ".pi" / "extensions").mkdir()
    (project / ".pi" / "extensions" / "ext.py").write_text("def register(pi):\n    pass\n")
    notices = await _start_notices(_app(project, agent_dir))
    assert UNTRUSTED_PROJECT not in notices
    assert sum("not trusted" in n for n in notices) == 1
    # and tells what the app offers: /trust, not a flag for the next start
    [notice] = [n for n in notices if "not trusted" in n]
    assert "Use /trust to save a trust decision, then restart pi-tui." in notice and "--" not in notice


async def test_a_trusted_project_or_one_with_nothing_to_trust_says_nothing(tmp_path: Path, agent_dir: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not any("not trusted" in n for n in await _start_notices(_app(empty, agent_dir)))
    project = _project(tmp_path / "proj")
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "trust.json").write_text(json.dumps({os.path.realpath(project): True}))
    assert not any("not trusted" in n for n in await _start_notices(_app(project, agent_dir)))



def _untrusted_notices(app: PiApp) -> int:
    return sum(isinstance(item, Notice) and item.text == UNTRUSTED_PROJECT for item in app.chat.items)


def _screens_prepared_since(app: PiApp, before: asyncio.Event | None) -> bool:
    """The work a switch starts for the big screens has run (the app may then end cleanly)."""
    return app.screens_prepared is not before and app.screens_prepared is not None and app.screens_prepared.is_set()


async def test_a_session_drawn_again_in_an_untrusted_project_says_it_again(tmp_path: Path, agent_dir: Path) -> None:
    """pi draws the line under a session each time it draws one: /new, /fork, /resume, a move in the tree."""
    project = _project(tmp_path / "proj")
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "trust.json").write_text(json.dumps({os.path.realpath(project): False}))  # Do not trust, saved
    app = make_app(project, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        # the start-up's work for the big screens has run: a switch starts it again for the new session
        await until(pilot, lambda: app.ready.is_set() and _screens_prepared_since(app, None))
        session = app.require_session()
        assert _untrusted_notices(app) == 1
        for move in (lambda: session.navigate(None), session.new_session):  # /tree, /new
            app.chat_notice("drawn before")
            prepared = app.screens_prepared
            await move()
            await until(pilot, lambda: not any(isinstance(i, Notice) and i.text == "drawn before" for i in app.chat.items))
            assert _untrusted_notices(app) == 1
        await until(pilot, lambda: _screens_prepared_since(app, prepared))


async def test_switching_to_a_session_of_an_untrusted_project_says_so(tmp_path: Path, agent_dir: Path) -> None:
    """The session switch API (as /resume) moving to a session recorded in an untrusted project."""
    from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
    from pi_tui.session import SessionManager

    project = _project(tmp_path / "proj")
    here = tmp_path / "here"
    here.mkdir()
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "trust.json").write_text(json.dumps({os.path.realpath(project): False}))
    recorded = SessionManager.create(project.resolve(), session_dir=tmp_path / "sessions")
    recorded.append_message(UserMessage(content="recorded over there"))
    answer = AssistantMessage(content=[TextContent(text="noted")], provider="faux", model="faux-1")
    recorded.append_message(answer)  # a session file is written once it has an answer
    path = Path(str(recorded.path))
    recorded.close()
    app = make_app(here, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        # the start-up's work for the big screens has run: a switch starts it again for the new session
        await until(pilot, lambda: app.ready.is_set() and _screens_prepared_since(app, None))
        assert _untrusted_notices(app) == 0  # nothing here needs trust
        session = app.require_session()
        prepared = app.screens_prepared
        await session.switch_session(SessionManager.open(path, cwd=session.cwd))
        await until(pilot, lambda: Path(session.cwd) == project.resolve() and _screens_prepared_since(app, prepared))
        assert _untrusted_notices(app) == 1
        assert [i.text for i in app.chat.items if isinstance(i, Notice)][-1] == UNTRUSTED_PROJECT  # under it all
