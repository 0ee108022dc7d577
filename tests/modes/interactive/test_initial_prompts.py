"""Prompts given on the command line (``pi-tui "first" "second"``) go out in the order given, as pi sends
them, before anything typed while the session was loading."""

from __future__ import annotations

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
