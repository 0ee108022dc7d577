from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import ChoiceScreen
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.modes.interactive.helpers import workers_done
from tests.modes.interactive.screens.helpers import HostApp

from .conftest import MODEL


async def _two_prompts(fake: FakeLLM, project: Path) -> Any:
    (project / "a.txt").write_text("v0\n")
    fake.script(
        [
            Reply([tool_call("write", {"path": "a.txt", "content": "v1\n"})]),
            Reply([text("one")]),
            Reply([tool_call("write", {"path": "a.txt", "content": "v2\n"})]),
            Reply([text("two")]),
        ]
    )
    session = create_session(parse_args(["--model", MODEL]), project).session
    await session.prompt("first")
    await session.prompt("second")
    return session


async def _jump_to(app: HostApp, pilot: Any, row_text: str, choice_downs: int) -> TreeScreen:
    await SCREEN_COMMANDS["tree"](app, "")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, TreeScreen)
    index = next(i for i, row in enumerate(screen.shown) if row.text == row_text)
    screen.query_one("#tree-list").cursor = index  # type: ignore[attr-defined]
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, ChoiceScreen)  # conversation only / code only / both
    for _ in range(choice_downs):
        await pilot.press("down")
    await pilot.press("enter")
    await pilot.pause()
    return screen


async def test_tree_jump_code_only_restores_the_files_and_keeps_the_conversation(
    fake: FakeLLM, project: Path
) -> None:
    session = await _two_prompts(fake, project)
    leaf = session.session_manager.get_leaf_id()
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await _jump_to(app, pilot, "user: second", 1)  # "Code only"
        await workers_done(app)
        await pilot.pause()
        assert not isinstance(app.screen, TreeScreen)
    assert (project / "a.txt").read_text() == "v1\n"
    assert session.session_manager.get_leaf_entry().parent_id == leaf  # only the restore record was added
    await session.close()


async def test_tree_jump_with_conversation_and_code_moves_both(fake: FakeLLM, project: Path) -> None:
    session = await _two_prompts(fake, project)
    app = HostApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await _jump_to(app, pilot, "user: second", 2)  # "Conversation and code"
        if isinstance(app.screen, ChoiceScreen):  # "Summarize branch?" → No summary
            await pilot.press("enter")
        await workers_done(app)
        await pilot.pause()
        assert app.editor_text == "second"
    assert (project / "a.txt").read_text() == "v1\n"
    assert [m.role for m in session.messages] == ["user", "assistant", "toolResult", "assistant"]
    await session.close()
