"""pi-tui writes the prompt and tools it sends into the session as pi 0.86+ does (``message`` entries
with ``role: "system"``): the whole of them at a session's first request, a patch when they change,
and the first one into an older session at its next request, without changing a byte sent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.session.system import SystemState, system_update
from pi_tui.testing import FakeLLM, Reply, text

from ..e2e.helpers import open_session
from ..pi087 import Pi087

MODEL = "fake-anthropic/claude-fake"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def _kinds(entries: list[dict[str, Any]]) -> list[str]:
    return [e["message"]["role"] if e["type"] == "message" else e["type"] for e in entries]


def _systems(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "system"]


async def test_first_request_writes_the_whole_prompt_and_tools_before_the_prompt(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(["--model", MODEL], project) as agent:
        await agent.prompt("hi")
        await agent.prompt("again")
        path = agent.session_manager.path
        tools = list(agent.active_tools)
    assert path is not None
    entries = _entries(path)
    assert _kinds(entries) == [
        "model_change",
        "thinking_level_change",
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    (system,) = _systems(entries)
    assert list(system) == ["role", "content", "sections", "timestamp", "toolsAdded"]
    assert system["content"] == ""
    assert list(system["sections"])[0] == "preamble"
    assert list(system["sections"])[-1] == "environment"
    assert [t["name"] for t in system["toolsAdded"]] == tools
    assert all(list(t)[:3] == ["name", "description", "parameters"] for t in system["toolsAdded"])
    first, second = fake.requests
    assert first.body["system"] == second.body["system"]
    assert first.body["tools"] == second.body["tools"]
    sent = "".join(block["text"] for block in first.body["system"])
    assert sent.startswith(system["sections"]["preamble"])
    assert all(section in sent for section in system["sections"].values())
    assert [t["name"] for t in first.body["tools"]] == tools


GREETER = """
def register(pi):
    {body}
"""
GREET_TOOL = (
    'pi.register_tool(name="greet", description="Greets someone.", '
    'parameters={"type": "object", "properties": {"who": {"type": "string"}}}, execute=lambda *a: "hi")'
)


async def test_a_tool_added_by_reload_is_recorded_as_a_patch(
    project: Path, tmp_path: Path, fake: FakeLLM
) -> None:
    extension = tmp_path / "exts" / "greeter.py"
    extension.parent.mkdir()
    extension.write_text(GREETER.format(body="pass"))
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    async with open_session(["--model", MODEL, "-e", str(extension)], project) as agent:
        await agent.prompt("hi")
        extension.write_text(GREETER.format(body=GREET_TOOL))
        await agent.reload()
        await agent.prompt("again")
        await agent.prompt("once more")  # unchanged since: nothing more is written
        path = agent.session_manager.path
    assert path is not None
    entries = _entries(path)
    assert _kinds(entries)[2:] == [
        "system",
        "user",
        "assistant",
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    first, patch = _systems(entries)
    assert "greet" not in [t["name"] for t in first["toolsAdded"]]
    # the tool has no prompt snippet: only the declaration changes, as pi writes it
    assert patch == {
        "role": "system",
        "content": "",
        "timestamp": patch["timestamp"],
        "toolsAdded": [
            {
                "name": "greet",
                "description": "Greets someone.",
                "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
            }
        ],
    }
    assert [t["name"] for t in fake.requests[1].body["tools"]][-1] == "greet"


async def test_a_changed_context_file_is_patched_by_section_and_requests_keep_their_bytes(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    async with open_session(["--model", MODEL], project) as agent:
        await agent.prompt("hi")
        path = agent.session_manager.path
    assert path is not None
    (project / "AGENTS.md").write_text("Always answer in haiku.\n")
    async with open_session(["--model", MODEL, "--session", str(path)], project) as agent:
        await agent.prompt("again")
        expected_system = agent.system_prompt()
    (project / "AGENTS.md").unlink()
    async with open_session(["--model", MODEL, "--session", str(path)], project) as agent:
        await agent.prompt("and again")
    entries = _entries(path)
    first, added, removed = _systems(entries)
    assert list(added) == ["role", "content", "sections", "timestamp"]
    assert list(added["sections"]) == ["project_context"]
    assert "Always answer in haiku." in added["sections"]["project_context"]
    assert removed["sections"] == {"project_context": None}
    sent = "".join(block["text"] for block in fake.requests[1].body["system"])
    assert sent == expected_system
    assert fake.requests[0].body["system"] == fake.requests[2].body["system"]


async def test_an_older_session_gets_its_first_system_message_at_its_next_request_with_the_same_bytes(
    project: Path, tmp_path: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    async with open_session(["--model", MODEL], project) as agent:
        await agent.prompt("hi")
        path = agent.session_manager.path
    assert path is not None
    # the same session as pi-tui wrote it before it recorded its prompt: no system message
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    older = tmp_path / "older.jsonl"
    kept = [line for line in lines if '"role":"system"' not in line]
    system_id = json.loads(next(line for line in lines if '"role":"system"' in line))["id"]
    thinking_id = json.loads(kept[2])["id"]
    older.write_text("".join(kept).replace(f'"parentId":"{system_id}"', f'"parentId":"{thinking_id}"'))
    for session in (path, older):
        async with open_session(["--model", MODEL, "--session", str(session)], project) as agent:
            await agent.prompt("again")
    with_record, without_record = fake.requests[1], fake.requests[2]
    assert json.dumps(without_record.body) == json.dumps(with_record.body)  # the record changes no byte sent
    entries = _entries(older)
    assert _kinds(entries) == [
        "model_change",
        "thinking_level_change",
        "user",
        "assistant",
        "system",
        "user",
        "assistant",
    ]
    assert _systems(entries) == [
        {**_systems(_entries(path))[0], "timestamp": _systems(entries)[0]["timestamp"]}
    ]
    assert len(_systems(_entries(path))) == 1  # the newer session needed no patch


_PI_DIFF = """
const [dir, cases] = [process.argv[2], JSON.parse(process.argv[3])];
const { getToolStateChanges } = await import(dir + "/node_modules/@earendil-works/pi-ai/dist/utils/transcript.js");
const { diffSystemPromptSections } = await import(
  dir + "/node_modules/@earendil-works/pi-coding-agent/dist/core/system-prompt.js"
);
console.log(JSON.stringify(cases.map((c) => ({
  sections: diffSystemPromptSections(c.previous.sections, c.sections) ?? null,
  tools: getToolStateChanges(c.previous.tools, c.tools),
}))));
"""


def test_patches_are_the_ones_pi_0_87_1_computes(tmp_path: Path, pi087: Pi087) -> None:
    """pi's own diff functions (its compiled sources, run by its Node) give the patch `system_update`
    writes, for sections changed, added, removed and reordered, and tools added, redeclared and gone."""
    tool_a = {"name": "a", "description": "A", "parameters": {"type": "object"}}
    tool_b = {"name": "b", "description": "B", "parameters": {"type": "object", "properties": {}}}
    tool_a2 = {**tool_a, "description": "A, better"}
    strict = {**tool_b, "constrainedSampling": {"type": "json_schema", "strict": "prefer"}}
    cases = [
        {
            "previous": {"sections": {}, "tools": []},
            "sections": {"preamble": "P", "environment": "E"},
            "tools": [tool_a],
        },
        {
            "previous": {"sections": {"preamble": "P", "x": "1"}, "tools": [tool_a, tool_b]},
            "sections": {"preamble": "P", "y": "2", "x": "11"},
            "tools": [tool_b, tool_a2],
        },
        {
            "previous": {"sections": {"preamble": "P", "x": "1"}, "tools": [tool_a, tool_b]},
            "sections": {"preamble": "P"},
            "tools": [tool_a],
        },
        {
            "previous": {"sections": {"preamble": "P"}, "tools": [tool_b]},
            "sections": {"preamble": "P"},
            "tools": [strict],
        },
        {
            "previous": {"sections": {"preamble": "P"}, "tools": [tool_a]},
            "sections": {"preamble": "P"},
            "tools": [tool_a],
        },
    ]
    script = tmp_path / "diff.mjs"
    script.write_text(_PI_DIFF)
    run = subprocess.run(
        [str(pi087.node), str(script), str(pi087.dir), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
        env=pi087.env(),
    )
    assert run.returncode == 0, run.stderr
    for case, pis in zip(cases, json.loads(run.stdout), strict=True):
        state = SystemState()
        state.apply({"sections": case["previous"]["sections"], "toolsAdded": case["previous"]["tools"]})
        ours = system_update(state, case["sections"], case["tools"], 7)
        expected: dict[str, Any] | None = {"role": "system", "content": ""}
        assert expected is not None
        if pis["sections"] is not None:
            expected["sections"] = pis["sections"]
        expected["timestamp"] = 7
        if pis["tools"]["toolsAdded"]:
            expected["toolsAdded"] = pis["tools"]["toolsAdded"]
        if pis["tools"]["toolsRemoved"]:
            expected["toolsRemoved"] = pis["tools"]["toolsRemoved"]
        if list(expected) == ["role", "content", "timestamp"]:
            expected = None
        assert ours == expected, case
        if ours is not None:
            assert json.dumps(ours) == json.dumps(expected)  # pi's key order too
