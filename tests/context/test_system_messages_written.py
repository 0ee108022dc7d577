"""pi-tui writes the prompt and tools it sends into the session as pi 0.86+ does (``message`` entries
with ``role: "system"``): the whole of them at a session's first request, a patch when they change,
and the first one into an older session at its next request, without changing a byte sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from ..e2e.helpers import open_session

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
