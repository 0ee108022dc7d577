"""Prompts given on the command line (``pi-tui "first" "second"``) go out in the order given, as pi sends
them, before anything typed while the session was loading."""

from __future__ import annotations

import gc
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.ai.types import message_text

from .helpers import make_app, until


async def test_command_line_prompts_go_out_in_order(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply("one"), faux_reply("two"), faux_reply("three"))
    app = make_app(tmp_path, agent_dir, script, initial_prompts=["first", "second", "third"])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: script.call_count == 3 and not app._busy)
    asked = [message_text(request.messages[-1]) for request in script.requests]
    assert asked == ["first", "second", "third"]


async def test_a_session_switch_at_once_leaves_no_preparation_unstarted(
    tmp_path: Path, agent_dir: Path
) -> None:
    """``/new`` on the command line switches sessions before the start-up's preparation of the big screens
    had its first step: that worker was cancelled with its coroutine never run, and the coroutine's
    "never awaited" warning (an error in tests) surfaced in whichever test next collected garbage."""
    app = make_app(tmp_path, agent_dir, initial_prompts=["/new"])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.screens_prepared is not None and app.screens_prepared.is_set())
    gc.collect()  # the cancelled worker's coroutine is in a cycle: its warning comes when it is collected
