from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call

from .helpers import AZURE, CODEX, GEMINI, MODELS, open_session, without_cache_control

# Long enough that the conversation prefix crosses OpenAI's 128-token cache steps beyond the first request.
NOTES = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(40))
FIRST_PROMPT = "What is in notes.txt?"
ENTRY_ID = re.compile(r"^[0-9a-f]{8}$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _conversation() -> list[Reply]:
    return [
        Reply([text("Let me read it."), tool_call("read", {"path": "notes.txt"})]),
        Reply([text("It is a list of foxes.")]),
    ]


async def _first_run(project: Path, model: str) -> Path:
    (project / "notes.txt").write_text(NOTES)
    async with open_session(["--model", model], project) as session:
        await session.prompt(FIRST_PROMPT)
        path = session.session_manager.path
    assert path is not None
    return path


def _prompt_parts(request: RecordedRequest) -> tuple[Any, Any, Any]:
    body = request.body
    return request.messages, body.get("system", body.get("systemInstruction")), body.get("tools")


@pytest.mark.parametrize("model", MODELS)
async def test_the_session_file_holds_what_pi_writes(model: str, fake: FakeLLM, project: Path) -> None:
    fake.script(_conversation())
    path = await _first_run(project, model)

    header, *entries = [json.loads(line) for line in path.read_text().splitlines()]
    provider, model_id = model.split("/")
    assert set(header) == {"type", "version", "id", "timestamp", "cwd"}
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == str(project.resolve())
    assert path.name.endswith(f"_{header['id']}.jsonl")

    kinds = [(e["type"], e.get("message", {}).get("role")) for e in entries]
    assert kinds == [
        ("model_change", None),
        ("thinking_level_change", None),
        ("message", "system"),  # the prompt and tools sent, as pi 0.86+ records them
        ("message", "user"),
        ("message", "assistant"),
        ("message", "toolResult"),
        ("message", "assistant"),
    ]
    parents = [None] + [e["id"] for e in entries[:-1]]
    assert [e["parentId"] for e in entries] == parents  # one linear chain, root first
    assert all(ENTRY_ID.match(e["id"]) and ISO_UTC.match(e["timestamp"]) for e in entries)

    model_change, thinking_change, system, user, call, result, answer = entries
    assert list(system["message"]) == ["role", "content", "sections", "timestamp", "toolsAdded"]
    assert (model_change["provider"], model_change["modelId"]) == (provider, model_id)
    assert thinking_change["thinkingLevel"] == "off"  # models.json models without "reasoning"
    assert user["message"] == {
        "role": "user",
        "content": [{"type": "text", "text": FIRST_PROMPT}],  # a block list, as pi 0.87 writes prompts
        "timestamp": user["message"]["timestamp"],
    }
    tool_call_block = call["message"]["content"][1]
    assert tool_call_block["type"] == "toolCall" and tool_call_block["arguments"] == {"path": "notes.txt"}
    assert call["message"]["stopReason"] == "toolUse"
    for assistant in (call, answer):
        message = assistant["message"]
        assert (message["provider"], message["model"]) == (provider, model_id)
        # pi's usage fields, with its reasoning count and 1-hour cache writes where the API reports them
        base = {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
        assert base <= set(message["usage"]) <= base | {"reasoning", "cacheWrite1h"}
    assert result["message"]["toolCallId"] == tool_call_block["id"]
    assert result["message"]["toolName"] == "read" and result["message"]["isError"] is False
    assert result["message"]["content"] == [{"type": "text", "text": NOTES}]
    assert answer["message"]["stopReason"] == "stop"
    answer_block = answer["message"]["content"]
    if model == GEMINI:  # Gemini 3 signs an answer without calls; pi keeps the signature on the text block
        assert answer_block[0].pop("textSignature")
    if model in (AZURE, CODEX):  # Responses: pi keeps the message item's id as the text block's signature
        assert json.loads(answer_block[0].pop("textSignature"))["id"].startswith("msg_")
    assert answer_block == [{"type": "text", "text": "It is a list of foxes."}]


@pytest.mark.parametrize("model", MODELS)
async def test_continuing_a_session_resends_the_whole_conversation_from_the_cache(
    model: str, fake: FakeLLM, project: Path
) -> None:
    fake.script([*_conversation(), Reply([text("Still foxes.")])])
    path = await _first_run(project, model)
    lines_before = path.read_text().splitlines()

    async with open_session(["-c"], project) as session:
        assert session.session_manager.path == path
        assert session.model.label == model  # restored from the file, not given again
        await session.prompt("And now?")

    fake.assert_script_consumed()
    assert fake.violations == []
    first, previous, resumed = fake.requests
    old_messages, old_system, old_tools = (without_cache_control(p) for p in _prompt_parts(previous))
    new_messages, new_system, new_tools = (without_cache_control(p) for p in _prompt_parts(resumed))
    assert (new_system, new_tools) == (old_system, old_tools)
    assert new_messages[: len(old_messages)] == old_messages
    answer_role = "model" if model == GEMINI else "assistant"
    assert [m["role"] for m in new_messages[len(old_messages) :]] == [answer_role, "user"]
    assert resumed.last_user_text() == "And now?"

    stats = {row.seq: row for row in fake.cache_stats().requests}
    prefix = stats[previous.seq].total
    read = stats[resumed.seq].cache_read
    # Anthropic reads the whole previous prompt; OpenAI caches in 128-token steps
    assert read > stats[first.seq].total and read > prefix - 128

    lines_after = path.read_text().splitlines()
    assert lines_after[: len(lines_before)] == lines_before  # appended, never rewritten
    added = [json.loads(line) for line in lines_after[len(lines_before) :]]
    assert [(e["type"], e["message"]["role"]) for e in added] == [
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert added[0]["parentId"] == json.loads(lines_before[-1])["id"]


@pytest.mark.parametrize("model", MODELS)
async def test_a_resumed_session_sends_what_the_live_session_would_have_sent(
    model: str, fake: FakeLLM, project: Path
) -> None:
    fake.script([*_conversation(), Reply([text("Still foxes.")])])
    await _first_run(project, model)
    async with open_session(["-c"], project) as session:
        await session.prompt("And now?")
    resumed = _prompt_parts(fake.last_request)

    fake.reset()  # tool call ids are numbered per fake: start again from the same state
    fake.script([*_conversation(), Reply([text("Still foxes.")])])
    async with open_session(["--model", model, "--no-session"], project) as session:
        await session.prompt(FIRST_PROMPT)
        await session.prompt("And now?")
    live = _prompt_parts(fake.last_request)

    assert resumed == live  # byte for byte, cache breakpoints included
