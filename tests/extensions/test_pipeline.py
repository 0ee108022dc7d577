from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.resources.skill_helpers import write_skill

from .helpers import MODEL, model_requests, module, open_session, user_texts, write_extension

RECORDER = """
SEEN = []
def register(pi):
    pi.register_command("mine", handler=lambda args, ctx: SEEN.append(("command", args)))
    @pi.on("input")
    def record(event):
        SEEN.append(("input", event.text))
        if event.text == "bye":
            return {"action": "transform", "text": "/quit"}
    pi.on("before_agent_start", lambda event: SEEN.append(("before_agent_start", event.prompt)))
"""


async def test_extension_commands_come_first_and_unknown_slash_text_reaches_the_model(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    fake.script([Reply([text("ok")])])
    path = write_extension(tmp_path, "recorder", RECORDER)
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        await session.prompt("/mine some args")
        await session.prompt("/unknown thing")
        seen = module(session, "recorder").SEEN

    assert seen == [
        ("command", "some args"),  # no input event for an extension command
        ("input", "/unknown thing"),
        ("before_agent_start", "/unknown thing"),
    ]
    assert model_requests(fake)[0].last_user_text() == "/unknown thing"


async def test_input_runs_before_the_modes_built_in_commands(project: Path, tmp_path: Path) -> None:
    path = write_extension(tmp_path, "recorder", RECORDER)
    handled: list[str] = []

    def builtin(text: str) -> bool:
        handled.append(text)
        return text == "/quit"

    async with open_session(["-e", str(path)], project) as session:
        session.builtin_commands = builtin
        await session.prompt("bye")  # the input handler turns it into /quit
        seen = module(session, "recorder").SEEN
        messages = list(session.messages)

    assert handled == ["/quit"]
    assert seen == [("input", "bye")]
    assert messages == []


async def test_input_sees_the_raw_skill_command_and_the_model_its_expansion(
    fake: FakeLLM, agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    write_skill(
        agent_dir / "skills", "deploy", name="deploy", description="Deploys things.", body="Run make deploy."
    )
    path = write_extension(tmp_path, "recorder", RECORDER)
    fake.script([Reply([text("deploying")])])
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        await session.prompt("/skill:deploy to staging")
        seen = module(session, "recorder").SEEN

    assert seen[0] == ("input", "/skill:deploy to staging")
    expanded = seen[1][1]
    assert (
        seen[1][0] == "before_agent_start"
        and "Run make deploy." in expanded
        and '<skill name="deploy"' in expanded
    )
    sent = user_texts(model_requests(fake)[0])[0]
    assert "Run make deploy." in sent and sent.endswith("to staging")


async def test_a_prompt_while_streaming_is_queued_without_a_second_before_agent_start(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = """
import asyncio
STARTED = asyncio.Event()
GATE = asyncio.Event()
STARTS = []
def register(pi):
    async def wait(tool_call_id, params):
        STARTED.set()
        await GATE.wait()
        return "waited"
    pi.register_tool(name="wait", description="Waits.", parameters={"type": "object"}, execute=wait)
    pi.on("before_agent_start", lambda event: STARTS.append(event.prompt))
"""
    path = write_extension(tmp_path, "waiter", code)
    fake.script([Reply([tool_call("wait", {})]), Reply([text("after steering")])])
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        ext = module(session, "waiter")
        run = asyncio.ensure_future(session.prompt("start"))
        await ext.STARTED.wait()
        await session.prompt("change of plan", streaming_behavior="steer")
        ext.GATE.set()
        await run
        starts = list(ext.STARTS)

    assert starts == ["start"]
    assert user_texts(model_requests(fake)[1])[-1] == "change of plan"
