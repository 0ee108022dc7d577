"""Time in a ``ctx.ui`` dialog does not count against ``extensionHookTimeout`` (issue #15): a user thinking
in a confirm opened by a ``tool_call`` handler must not time that handler out; the budget still holds
for the handler's own time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.extensions.helpers import MODEL, Events, open_session

ASKER = """
import asyncio

def register(pi):
    @pi.on("tool_call")
    async def ask(event, ctx):
        command = event.input["command"]
        if not await ctx.ui.confirm("Run?", command):
            return {"block": True, "reason": "declined"}
        if "after" in command:
            await asyncio.Event().wait()  # its own time, after the dialog: the budget applies
"""


class SlowUser:
    """Takes ``think`` seconds to answer each confirm (the thinking time is the point of the test)."""

    def __init__(self, think: float) -> None:
        self.think = think
        self.asked: list[str] = []

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        self.asked.append(message)
        await asyncio.sleep(self.think)
        return True


async def test_a_dialog_pauses_the_hook_budget_and_the_budget_still_ends_a_hang_after_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"extensionHookTimeout": 0.5}))
    asker = tmp_path / "asker.py"
    asker.write_text(ASKER)
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("bash", {"command": "touch thought-long.txt"})]),
            Reply([tool_call("bash", {"command": "touch after.txt"})]),
            Reply([text("done")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        async with open_session(["-e", str(asker)], tmp_path, model=MODEL) as session:
            user = SlowUser(think=1.5)  # three budgets' worth of thinking
            session.attach_ui(user, "rpc")
            events = Events(session)
            await session.prompt("go")

    assert user.asked == ["touch thought-long.txt", "touch after.txt"]
    assert (tmp_path / "thought-long.txt").exists()  # the confirm took 1.5 s; the 0.5 s budget held
    assert not (tmp_path / "after.txt").exists()  # the hang after the dialog was cut off
    (error,) = events.errors()
    assert "did not finish its tool_call handler within 0.5s" in error["error"]
