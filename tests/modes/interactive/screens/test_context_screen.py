from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from pi_tui.args import parse_args
from pi_tui.context.layouts import PANEL_LAYOUT_TYPE
from pi_tui.context.panels import Panel
from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
from pi_tui.modes.interactive.screens._dialogs import DetailScreen
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import ANTHROPIC, LARGE, HostApp, fixture_session


def _select(tree: Tree, startswith: str) -> None:
    for line in range(tree.last_line + 1):
        node = tree.get_node_at_line(line)
        if node is not None and str(node.label).startswith(startswith):
            tree.move_cursor(node)
            return
    raise AssertionError(f"no row starting with {startswith!r}")


async def _open_context(app: HostApp, pilot: Any) -> None:
    """``/context``, once its report is shown (the screen opens before its messages are counted)."""
    await SCREEN_COMMANDS["context"](app, "")
    screen = app.screen
    assert isinstance(screen, ContextScreen)
    await screen.ready.wait()
    await pilot.pause()


def _input_cost(usage, model) -> float:  # type: ignore[no-untyped-def]
    c = model.cost
    return (usage.input * c.input + usage.cache_read * c.cache_read + usage.cache_write * c.cache_write) / 1e6


async def test_whatif_projection_for_moving_a_volatile_panel_to_the_prefix_matches_the_real_cost(
    fake: FakeLLM, project: Path
) -> None:
    fake.responder = lambda _req: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), project).session
    counter = {"n": 0}

    def volatile() -> str:
        counter["n"] += 1
        return f"build status: run {counter['n']}\n" + "log line\n" * 40

    session.panels.register(Panel("Status", volatile, placement="tail"))
    for prompt in ("first question", "second question", "third question"):
        await session.prompt(prompt)
    app = HostApp(session)
    async with app.run_test(size=(140, 50)) as pilot:
        await _open_context(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        tree = screen.query_one("#ctx-tree", Tree)
        _select(tree, "[P1] Status")
        before = screen.projection()
        await pilot.press("m")
        projected = screen.projection()
        assert "What-if (Status → prefix)" in str(screen.query_one("#ctx-whatif").render())
        assert projected.cost > before.cost  # the whole conversation is re-written after a changing prefix
        await pilot.press("a")
        await pilot.press(*"status belongs in the prefix")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ContextScreen)
    # The real request re-renders the panel (the counter moves on), as the projection assumed.
    n_before = len(fake.requests)
    await session.prompt("?")
    await session.close()
    assert fake.violations == []
    assert len(fake.requests) == n_before + 1
    usage = session.last_assistant_message().usage  # type: ignore[union-attr]
    real = _input_cost(usage, session.model)
    # within the fake's accounting: our estimate of the framing differs a little, and the request adds "?"
    assert abs(real - projected.cost) <= 0.05 * real
    assert abs(usage.cache_write - projected.write) <= 0.05 * usage.cache_write
    entries = [
        e
        for e in session.session_manager.get_entries()
        if getattr(e, "custom_type", None) == PANEL_LAYOUT_TYPE
    ]
    assert entries and entries[0].data["reason"] == "status belongs in the prefix"
    inv = session.engine.ledger.invalidations[-1]
    assert inv.reason == "status belongs in the prefix" and "Status" in inv.source


async def test_enter_opens_the_full_content_of_a_message_and_escape_closes_the_inspector(
    project: Path,
) -> None:
    session = fixture_session(LARGE, project)
    app = HostApp(session)
    async with app.run_test(size=(140, 50)) as pilot:
        await _open_context(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        tree = screen.query_one("#ctx-tree", Tree)
        cached = next(n for n in tree.root.children if str(n.label).startswith("Cached messages"))
        cached.expand()
        await pilot.pause()
        tree.move_cursor(cached.children[2])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        shown = str(app.screen.query_one("#detail-content", Static).render())
        assert "read packages/coding-agent/docs/theme.md in full" in shown
        await pilot.press("escape")
        assert isinstance(app.screen, ContextScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, ContextScreen)
    await session.close()


async def test_hiding_a_panel_projects_a_smaller_request_and_applying_needs_a_reason(project: Path) -> None:
    session = fixture_session(LARGE, project)
    session.panels.register(Panel("Notes", lambda: "note\n" * 400, placement="tail"))
    app = HostApp(session)
    async with app.run_test(size=(140, 50)) as pilot:
        await _open_context(app, pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        _select(screen.query_one("#ctx-tree", Tree), "[P1] Notes")
        before = screen.projection()
        await pilot.press("h")
        hidden = screen.projection()
        assert hidden.uncached < before.uncached  # (the faux model is free: tokens, not dollars)
        await pilot.press("a")
        await pilot.press("enter")  # an empty reason is refused
        await pilot.pause()
        assert isinstance(app.screen, ContextScreen)
        assert "Notes" not in session.panels.hidden
        await pilot.press("u")
        assert screen.projection() == before
    await session.close()


async def test_context_screen_shows_transforms_and_ledger_rows(fake: FakeLLM, project: Path) -> None:
    fake.responder = lambda _req: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), project).session
    await session.prompt("hello")
    session.session_manager.append_context_transform(
        "redactor",
        [
            {
                "op": "system_part_set",
                "scope": "cached",
                "partName": "policy",
                "text": "\n# Policy",
                "invalidateCacheReason": "add a policy",
            }
        ],
        {"title": "Policy"},
    )
    await session.prompt("again")
    app = HostApp(session)
    async with app.run_test(size=(160, 60)) as pilot:
        await _open_context(app, pilot)
        tree = app.screen.query_one("#ctx-tree", Tree)
        labels = [str(n.label) for n in tree.root.children]
        transforms = next(n for n in tree.root.children if str(n.label).startswith("Context transforms (1)"))
        assert "redactor" in str(transforms.children[0].label)
        assert "why: add a policy" in str(transforms.children[0].children[0].label)
        ledger = next(n for n in tree.root.children if str(n.label).startswith("Cache ledger · 2 requests"))
        assert any("system prompt" in str(c.label) and "re-billed" in str(c.label) for c in ledger.children)
        assert any(label.startswith("System prompt") for label in labels)
        assert any("cache breakpoint" in label for label in labels)
    await session.close()


async def test_an_applied_layout_is_replayed_after_continue_even_for_panels_registered_later(
    fake: FakeLLM, project: Path
) -> None:
    from pi_tui.modes.interactive.screens import install
    from pi_tui.modes.interactive.screens.context_data import apply_layout

    fake.responder = lambda _req: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), project).session
    session.panels.register(Panel("Status", lambda: "all green", placement="tail"))
    session.panels.register(Panel("Noise", lambda: "chatter", placement="tail"))
    await session.prompt("hello")
    apply_layout(session, {"Status": "prefix", "Noise": "hidden"}, "status is stable")
    await session.prompt("again")
    live = fake.requests[-1].body
    await session.close()

    resumed = create_session(parse_args(["-c", "--model", ANTHROPIC]), project).session
    app = HostApp(resumed)
    async with app.run_test(size=(100, 30)):
        install(app)  # before the extension registers its panels, as at start-up
        resumed.panels.register(Panel("Status", lambda: "all green", placement="tail"))
        resumed.panels.register(Panel("Noise", lambda: "chatter", placement="tail"))
        assert resumed.panels.panels["Status"].panel.placement == "prefix"
        assert "Noise" in resumed.panels.hidden
        await resumed.prompt("after the restart")
    body = fake.requests[-1].body
    await resumed.close()
    assert "chatter" not in json.dumps(body)
    # the panel sits where it sat in the live session: before the conversation
    assert json.dumps(body["messages"]).index("all green") < json.dumps(body["messages"]).index("hello")
    assert json.dumps(live["messages"]).index("all green") < json.dumps(live["messages"]).index("hello")
