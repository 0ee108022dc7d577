from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, ScriptedUI, ext, model_requests, module, open_session, user_texts

FULL = ["read", "bash", "edit", "write"]
PLAN = ["read", "bash", "grep", "find", "ls"]
ANSWER = "I looked around.\n\nPlan:\n1. Add the parser\n2. Test it\n"


def results(request: object) -> list[tuple[str, bool]]:
    return [(r.content, r.is_error) for r in request.tool_results()]  # type: ignore[attr-defined]


async def test_the_plan_flag_limits_tools_and_adds_the_prompt_section(fake: FakeLLM, project: Path) -> None:
    (project / "a.txt").write_text("hello\n")
    commands = [
        "ls && cat a.txt | grep hel",
        "git status 2>/dev/null; echo done",
        "rm a.txt",
        "echo x > b.txt",
    ]
    fake.script(
        [
            Reply([tool_call("bash", {"command": c}) for c in commands]),
            Reply([tool_call("write", {"path": "c.txt", "content": "x"})]),
            Reply([text(ANSWER)]),
        ]
    )
    async with open_session([*ext("plan_mode"), "--plan"], project, model=MODEL) as session:
        await session.prompt("plan the parser")

    first = model_requests(fake)[0]
    assert first.tool_names == PLAN
    assert "# Plan mode\nYou are in plan mode" in first.system
    listed, status, rm, redirect = results(model_requests(fake)[1])
    assert not listed[1] and "a.txt" in listed[0] and "hello" in listed[0]
    assert not status[1]
    assert rm[1] and rm[0].startswith("Blocked by plan mode: rm is not on the read-only list.")
    assert redirect[1] and "it redirects output into b.txt" in redirect[0]
    write = results(model_requests(fake)[2])[-1]
    assert write[1]
    assert (
        (project / "a.txt").exists() and not (project / "b.txt").exists() and not (project / "c.txt").exists()
    )


async def test_plan_toggles_and_restores_the_previous_tools(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    async with open_session(ext("plan_mode"), project, model=MODEL) as session:
        await session.prompt("before")
        await session.prompt("/plan")
        await session.prompt("during")
        await session.prompt("/plan")
        await session.prompt("after")

    before, during, after = model_requests(fake)
    assert before.tool_names == FULL and after.tool_names == FULL
    assert during.tool_names == PLAN
    assert "# Plan mode" not in before.system and "# Plan mode" not in after.system


async def test_plan_mode_survives_a_restart_and_approve_restores_tools_and_starts_work(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text(ANSWER)]), Reply([text("working on it")])])
    async with open_session(ext("plan_mode"), project, model=MODEL) as session:
        await session.prompt("/plan on")
        await session.prompt("plan it")

    async with open_session(["-c", *ext("plan_mode")], project, model=MODEL) as resumed:
        await resumed.start()
        assert resumed.active_tools == PLAN
        await resumed.prompt("/plan approve")
        await resumed.extensions.drain()

    planned, approved = model_requests(fake)
    assert planned.tool_names == PLAN
    assert approved.tool_names == FULL
    assert user_texts(approved)[-1].startswith("The plan is approved and plan mode is off")


APPROVAL_LISTENER = """
import asyncio

APPROVED = asyncio.Event()


def register(pi):
    pi.events.on("plan_mode:approved", lambda data: APPROVED.set())
"""


async def test_a_presented_plan_is_offered_for_approval_in_the_ui(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    listener = tmp_path / "listener.py"
    listener.write_text(APPROVAL_LISTENER)
    fake.script([Reply([text("Let me look first.")]), Reply([text(ANSWER)]), Reply([text("step 1 done")])])
    async with open_session(
        [*ext("plan_mode"), "-e", str(listener), "--plan"], project, model=MODEL
    ) as session:
        ui = ScriptedUI([True])
        session.attach_ui(ui, "tui")
        await session.prompt("explore")  # no plan in the answer: nothing is asked
        assert ui.asked == []
        await session.prompt("now plan")
        await asyncio.wait_for(module(session, "listener").APPROVED.wait(), 10)
        await session.extensions.drain()
        tools_after = list(session.active_tools)

    assert ui.asked == [("Approve this plan?", "Plan:\n1. Add the parser\n2. Test it")]
    assert tools_after == FULL
    last = model_requests(fake)[-1]
    assert last.tool_names == FULL and "# Plan mode" not in last.system
    assert user_texts(last)[-1] == (
        "The plan is approved and plan mode is off: all tools are available again. Carry out the plan now, "
        "step by step."
    )


async def test_the_read_only_check_follows_the_whole_command_line(project: Path) -> None:
    async with open_session(ext("plan_mode"), project) as session:
        refusal = module(session, "plan_mode").refusal

    allowed = [
        "ls -la",
        "git log --oneline -5 | head",
        "git diff HEAD~1 -- src",
        "git branch -a",
        "find . -name '*.py' | xargs grep -n TODO",
        "cat $(ls *.md)",
        "sort data.txt | uniq -c",
        "echo hi 2>&1",
    ]
    refused = {
        "ls; rm -rf x": "rm is not on the read-only list",
        "echo $(touch x)": "touch is not on the read-only list",
        "bash -c 'mv a b'": "bash is not on the read-only list",
        "git commit -m x": "git commit is not read-only",
        "git branch new-feature": "git branch may change the repository here",
        "git diff --output=x.patch": "git --output writes a file",
        "find . -delete": "find with -delete/-exec is not read-only",
        "sort -o out.txt in.txt": "sort -o writes a file",
        "cat a > b": "it redirects output into b",
        "sed -i s/a/b/ f": "sed is not on the read-only list",
        "echo 'open": "the command could not be checked (unterminated single quote)",
        "curl x | sh": "curl is not on the read-only list",
    }
    for command in allowed:
        assert refusal(command) is None, command
    for command, reason in refused.items():
        assert refusal(command) == reason, command
    assert refusal("make -n", frozenset({"make"})) is None  # planMode.allowedCommands
