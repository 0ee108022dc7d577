"""Once a session is shown and the app is idle, the work of the first ``/tree``, ``/context`` and
``/resume`` is done ahead (`screens.prepare`): their first open then does what a later open does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent import tool as tool_module
from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_tui.context import report
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS, tree_rows
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.session import SessionManager, listing_cache
from pi_tui.session.paths import default_session_dir

from ..helpers import make_app, until, workers_done


def _session(project: Path, turns: int) -> Path:
    """A session of ``turns`` exchanges (a prompt, a tool call, its result, an answer) in the
    project's session folder, beside a few other sessions of the project."""
    folder = default_session_dir(project)
    for n in range(3):
        other = SessionManager.create(str(project), session_dir=folder)
        other.append_message(UserMessage(content=f"other session {n}"))
        other.close()
    manager = SessionManager.create(str(project), session_dir=folder)
    for n in range(turns):
        manager.append_message(UserMessage(content=f"question {n}"))
        manager.append_message(
            AssistantMessage(
                content=[ToolCall(id=f"call_{n}", name="bash", arguments={"command": f"echo {n}"})],
                provider="faux",
                model="faux-1",
                stop_reason="toolUse",
            )
        )
        manager.append_message(
            ToolResultMessage(
                tool_call_id=f"call_{n}", tool_name="bash", content=[TextContent(text=f"{n}\n")]
            )
        )
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"answer {n}")], provider="faux", model="faux-1")
        )
    path = Path(manager.path)
    manager.close()
    return path


def _count_calls(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


async def _open(pilot: Any, app: Any, command: str, screen: type) -> None:
    await SCREEN_COMMANDS[command](app, "")
    await until(pilot, lambda: isinstance(app.screen, screen))
    await pilot.pause()  # its first frame
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, screen))


async def test_the_first_opens_after_the_idle_preparation_compute_nothing_again(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _session(tmp_path, 40)
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
        described = _count_calls(monkeypatch, tree_rows, "entry_text")
        counted = _count_calls(monkeypatch, report, "message_chars")
        scanned = _count_calls(monkeypatch, listing_cache, "read_session_info")

        await _open(pilot, app, "tree", TreeScreen)
        await _open(pilot, app, "context", ContextScreen)
        await _open(pilot, app, "resume", ResumeScreen)
        assert described == []  # every row text was made ahead
        assert counted == []  # every message's tokens were counted ahead
        assert scanned == []  # every session file of the folder was listed ahead

        # Work done ahead is the same work: a new entry is described and counted on the next open.
        app.session.session_manager.append_message(UserMessage(content="one more"))
        await _open(pilot, app, "tree", TreeScreen)
        await _open(pilot, app, "context", ContextScreen)
        assert len(described) == 1 and len(counted) == 1


async def test_context_opened_after_the_counting_ahead_shows_its_figures_in_its_first_frame(
    tmp_path: Path, agent_dir: Path
) -> None:
    from textual.widgets import Static, Tree

    from pi_tui.modes.interactive.screens._format import fmt_tokens
    from pi_tui.modes.interactive.screens.prepare import preparation_for

    path = _session(tmp_path, 40)
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        session = app.require_session()
        await until(pilot, lambda: preparation_for(session).done("tokens"))
        await SCREEN_COMMANDS["context"](app, "")
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        # Pushed with its report: the first frame has the figures, not "counting…" then the figures.
        assert screen.ready.is_set()
        complete = await session.context_report()
        summary = str(screen.query_one("#ctx-summary", Static).render())
        assert f"prompt ~{fmt_tokens(complete.total_tokens)} tokens" in summary
        labels = [str(n.label) for n in screen.query_one("#ctx-tree", Tree).root.children]
        cached = f"Cached messages ({len(complete.cached)}) · {fmt_tokens(complete.cached_tokens)}"
        assert any(label.startswith(cached) for label in labels), labels
        await workers_done(screen.app)  # the cache projection, filled in after the first frame


async def test_a_resumed_session_describes_only_the_tool_results_it_shows(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _session(tmp_path, 60)
    described = _count_calls(monkeypatch, tool_module, "result_text")  # the chat imports it where it is used
    app = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.pause()
        shown = len(described)
        assert 0 < shown <= 20  # the results of the mounted window's calls, not all 60
        while app.chat.first_mounted > 0:
            app.chat.load_earlier()
        await until(pilot, lambda: "call_0" in app.chat.tools and app.chat.tools["call_0"].is_mounted)
        first = app.chat.tools["call_0"]
        assert first.done and first.result_text == "0\n"  # a call mounted later shows its result
