"""pi's ``/tree`` keys (``app.tree.*``) and ``/resume``'s own keys (``app.session.*``) in
``keybindings.json``: rebound, unbound, old names, a user key winning over another id's default on the
same screen, the help lines and ``/hotkeys`` naming the effective keys."""

from __future__ import annotations

import io
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Static

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.keys import load_keymap, textual_keymap
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import ConfirmScreen, PromptScreen
from pi_tui.modes.interactive.screens.info_screens import InfoScreen, screen_key_rows
from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.testing import FakeLLM

from ..helpers import make_app, until
from .helpers import HostApp, write_session
from .test_resume_screen import _session as resume_session
from .test_tree_screen import branched_session


@pytest.fixture
async def tree_session(fake: FakeLLM, project: Path) -> AsyncIterator[AgentSession]:
    """A session with two branches, closed when the test ends."""
    branched = await branched_session(fake, project)
    yield branched
    await branched.close()


class KeyedHost(HostApp):
    """The screens' host app with the keymap PiApp gives them from the user's keybindings.json."""

    def __init__(self, session: Any, agent_dir: Path) -> None:
        super().__init__(session)
        self.keymap, self.key_warnings = load_keymap(agent_dir)

    def on_mount(self) -> None:
        self.set_keymap(textual_keymap(self.keymap))


def _bind(agent_dir: Path, bindings: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "keybindings.json").write_text(json.dumps(bindings))


async def _open_tree(app: HostApp, pilot: Any) -> TreeScreen:
    await SCREEN_COMMANDS["tree"](app, "")
    await until(pilot, lambda: isinstance(app.screen, TreeScreen) and bool(app.screen.shown))
    assert isinstance(app.screen, TreeScreen)
    return app.screen


async def test_rebound_tree_keys_filter_label_and_leave_the_old_keys_to_the_search(
    tree_session: AgentSession, agent_dir: Path
) -> None:
    _bind(
        agent_dir,
        {
            "app.tree.filter.userOnly": "alt+u",
            "app.tree.filter.noTools": "ctrl+u",  # another id's default: the user's choice wins there
            "treeEditLabel": "e",  # pi's old name; a printable key
            "app.tree.toggleLabelTimestamp": [],
        },
    )
    app = KeyedHost(tree_session, agent_dir)
    assert app.key_warnings == []
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await _open_tree(app, pilot)
        await pilot.press("alt+u")
        assert screen.model.mode == "user-only"
        await pilot.press("alt+u")  # pi: pressed again, back to the default filter
        assert screen.model.mode == "default"
        await pilot.press("ctrl+u")
        assert screen.model.mode == "no-tools"
        await pilot.press("shift+t")  # unbound: no label times, and no search either
        assert not screen.show_label_time
        await pilot.press("L")  # no longer the label key: it searches
        assert screen.model.query == "L" and isinstance(app.screen, TreeScreen)
        await pilot.press("backspace", "e")
        await until(pilot, lambda: isinstance(app.screen, PromptScreen))
        assert screen.model.query == ""
        help_text = str(screen.query_one("#tree-help", Static).render())
        assert "alt+u user" in help_text and "e label" in help_text and "ctrl+u no-tools" in help_text
        assert "label time" not in help_text


async def test_the_tree_keys_keep_pis_defaults(tree_session: AgentSession, agent_dir: Path) -> None:
    app = KeyedHost(tree_session, agent_dir)  # no keybindings.json
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await _open_tree(app, pilot)
        for key, mode in (("ctrl+u", "user-only"), ("ctrl+t", "no-tools"), ("ctrl+l", "labeled-only")):
            await pilot.press(key)
            assert screen.model.mode == mode
        await pilot.press("ctrl+a", "ctrl+o")  # all, then the cycle wraps to the first
        assert screen.model.mode == "default"
        await pilot.press("ctrl+shift+o")
        assert screen.model.mode == "all"
        await pilot.press("T")  # Shift+T as a classic terminal sends it
        assert screen.show_label_time and screen.model.query == ""
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, PromptScreen))


async def test_rebound_resume_keys_toggle_paths_rename_and_delete(project: Path, agent_dir: Path) -> None:
    path = write_session(project, "fix the parser bug")
    write_session(project, "write the changelog")
    _bind(
        agent_dir,
        {"app.session.togglePath": "alt+p", "app.session.delete": ["ctrl+x"], "renameSession": "f2"},
    )
    picker_session = resume_session(project)
    app = KeyedHost(picker_session, agent_dir)
    async with app.run_test(size=(140, 30)) as pilot:
        await SCREEN_COMMANDS["resume"](app, "")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen) and len(app.screen.shown) == 2)
        screen = app.screen
        assert isinstance(screen, ResumeScreen)
        help_text = str(screen.query_one("#resume-help", Static).render())
        assert "alt+p paths" in help_text and "ctrl+x delete" in help_text and "f2 rename" in help_text
        await pilot.press("ctrl+p")  # the default, no longer bound
        assert not screen.show_paths
        await pilot.press("alt+p")
        assert screen.show_paths
        await pilot.press("ctrl+d")  # the default delete key, no longer bound: nothing to confirm
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("ctrl+x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, PromptScreen))
    assert path.exists()
    await picker_session.close()


async def test_resume_keeps_pis_default_keys(project: Path, agent_dir: Path) -> None:
    write_session(project, "fix the parser bug")
    write_session(project, "write the changelog")
    picker_session = resume_session(project)
    app = KeyedHost(picker_session, agent_dir)  # no keybindings.json
    async with app.run_test(size=(140, 30)) as pilot:
        await SCREEN_COMMANDS["resume"](app, "")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen) and len(app.screen.shown) == 2)
        screen = app.screen
        assert isinstance(screen, ResumeScreen)
        await pilot.press("ctrl+p", "ctrl+s", "ctrl+n")
        assert screen.show_paths and screen.sort == "recent" and screen.named_only
        await pilot.press("ctrl+n", "ctrl+backspace")  # an empty search: Ctrl+Backspace deletes too
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    await picker_session.close()


def test_hotkeys_tables_name_the_effective_screen_keys(agent_dir: Path) -> None:
    defaults = screen_key_rows(None)
    assert ("ctrl+u", "your messages only (again: the default filter)") in defaults["/tree"]
    assert ("ctrl+p", "show or hide the session files' paths") in defaults["/resume"]
    _bind(agent_dir, {"app.tree.filter.userOnly": "alt+u", "app.tree.filter.noTools": "ctrl+u"})
    keymap, _warnings = load_keymap(agent_dir)
    rows = dict((what, keys) for keys, what in screen_key_rows(keymap)["/tree"])
    assert rows["your messages only (again: the default filter)"] == "alt+u"
    assert rows["hide tool results (again: the default filter)"] == "ctrl+u"
    _bind(agent_dir, {"app.tree.editLabel": 3, "app.session.rename": {"key": "x"}})
    keymap, warnings = load_keymap(agent_dir)
    assert [w.rsplit(": ", 1)[1] for w in warnings] == [
        "app.tree.editLabel must be a key or a list of keys",
        "app.session.rename must be a key or a list of keys",
    ]
    assert keymap["app.tree.editLabel"] == ["shift+l"] and keymap["app.session.rename"] == ["ctrl+r"]


async def test_an_unbound_new_session_key_bound_by_the_user_starts_a_new_session(
    tmp_path: Path, agent_dir: Path
) -> None:
    _bind(agent_dir, {"app.session.new": "f5", "app.tree.filter.all": "alt+a"})
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        old_id = app.session.session_manager.id
        await pilot.press("f5")
        await until(pilot, lambda: app.session.session_manager.id != old_id)
        await app.run_command("/hotkeys")
        await until(pilot, lambda: isinstance(app.screen, InfoScreen))
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#info-body", Static).content)
        assert re.search(r"alt\+a +every entry", console.export_text())
