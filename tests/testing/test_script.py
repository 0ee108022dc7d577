from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from pi_tui.testing import (
    FakeLLM,
    Fault,
    RecordedRequest,
    Reply,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    text,
    tool_call,
    turn_from_dict,
    turns_from_json,
)

from ._helpers import ANTHROPIC_MODEL, OPENAI_MODEL, anthropic_for, user

ASK = {"model": ANTHROPIC_MODEL, "max_tokens": 100}


def test_exhausted_script_answers_a_non_retryable_500_and_fails_the_consumption_check(
    fake_llm: FakeLLM,
) -> None:
    with anthropic_for(fake_llm, max_retries=2) as client:
        with pytest.raises(anthropic.InternalServerError, match="script is exhausted"):
            client.messages.create(messages=[user("hi")], **ASK)  # type: ignore[arg-type]

    assert len(fake_llm.requests) == 1
    assert fake_llm.exhausted
    with pytest.raises(AssertionError, match="request #1 arrived after all 0 scripted turns"):
        fake_llm.assert_script_consumed()


def test_unused_turns_fail_the_consumption_check(fake_llm: FakeLLM, claude: anthropic.Anthropic) -> None:
    fake_llm.script([Reply("one"), Reply("two")])
    claude.messages.create(messages=[user("hi")], **ASK)  # type: ignore[arg-type]

    assert fake_llm.remaining_turns == 1
    with pytest.raises(AssertionError, match="1 scripted turn"):
        fake_llm.assert_script_consumed()


def _file_reader(request: RecordedRequest) -> Reply:
    last = request.last_tool_result()
    if last is None:
        return Reply([tool_call("read", {"path": "notes.txt"})])
    return Reply([text(f"{last.tool_call_id} returned {len(last.content)} chars")])


def test_dynamic_responder_answers_from_the_last_tool_result(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.responder = _file_reader
    first = claude.messages.create(messages=[user("read my notes")], **ASK)  # type: ignore[arg-type]
    call = first.content[0]
    history = [
        user("read my notes"),
        {"role": "assistant", "content": [call.model_dump(exclude_none=True)]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "x" * 42}]},
    ]
    second = claude.messages.create(messages=history, **ASK)  # type: ignore[arg-type]

    assert call.name == "read"
    assert second.content[0].text == "toolu_fake_0001 returned 42 chars"
    fake_llm.assert_script_consumed()


def test_callable_turn_in_the_script_is_used_once_in_order(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([lambda request: f"you said {request.last_user_text()}", Reply("then this")])
    first = claude.messages.create(messages=[user("ping")], **ASK)  # type: ignore[arg-type]
    second = claude.messages.create(messages=[user("pong")], **ASK)  # type: ignore[arg-type]

    assert (first.content[0].text, second.content[0].text) == ("you said ping", "then this")
    assert [r.turn_index for r in fake_llm.requests] == [0, 1]


def test_responder_that_raises_gives_a_500_and_a_recorded_problem(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    def broken(request: RecordedRequest) -> Reply:
        raise KeyError("no such file")

    fake_llm.responder = broken
    with pytest.raises(anthropic.InternalServerError, match="responder raised KeyError"):
        claude.messages.create(messages=[user("hi")], **ASK)  # type: ignore[arg-type]

    assert "KeyError" in fake_llm.problems[0]
    with pytest.raises(AssertionError, match="responder raised"):
        fake_llm.assert_script_consumed()


def test_script_replace_drops_only_the_unused_turns(fake_llm: FakeLLM, claude: anthropic.Anthropic) -> None:
    fake_llm.script([Reply("a"), Reply("stale")])
    claude.messages.create(messages=[user("hi")], **ASK)  # type: ignore[arg-type]
    fake_llm.script([Reply("fresh")], replace=True)
    second = claude.messages.create(messages=[user("hi")], **ASK)  # type: ignore[arg-type]

    assert second.content[0].text == "fresh"
    fake_llm.assert_script_consumed()


def test_json_turns_build_the_same_replies_and_faults() -> None:
    turns = turns_from_json(
        {
            "turns": [
                {
                    "parts": [
                        "plain",
                        {"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "tool_call", "name": "bash", "arguments": '{"cmd": "l'},
                        {"type": "tool_call", "name": "read", "input": {"path": "a"}, "id": "my_id"},
                    ],
                    "stop_reason": "stop",
                    "usage": {"output": 3},
                    "chunk": 4,
                },
                {"type": "fault", "kind": "prompt_too_long", "tokens": 9},
                {"type": "fault", "kind": "drop", "after_frames": 2, "reply": {"parts": ["partial"]}},
            ]
        }
    )

    reply, overflow, drop = turns
    assert isinstance(reply, Reply)
    assert reply.parts == (
        TextPart("plain"),
        ThinkingPart("hm", "s"),
        ToolCallPart("bash", '{"cmd": "l'),
        ToolCallPart("read", {"path": "a"}, "my_id"),
    )
    assert (reply.stop_reason, reply.usage, reply.chunk) == ("end_turn", {"output": 3}, 4)
    assert overflow == Fault("context_overflow", tokens=9)
    assert isinstance(drop, Fault) and drop.reply == Reply(["partial"])


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"turns": [{"type": "poem"}]}, "unknown turn type"),
        ({"turns": [{"type": "fault", "kind": "meteor"}]}, "unknown fault kind"),
        ({"turns": [{"parts": [{"type": "image"}]}]}, "unknown reply part type"),
        ({"turns": [{"parts": [], "stop_reason": "bored"}]}, "unknown stop_reason"),
        ({"turns": [{"parts": [], "usage": {"tokens": 1}}]}, "unknown usage keys"),
        ({"steps": []}, "a script must be"),
    ],
)
def test_invalid_json_scripts_are_rejected_with_a_reason(document: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        turns_from_json(document)


def test_turn_from_dict_defaults_to_a_reply() -> None:
    assert turn_from_dict({"parts": ["hi"]}) == Reply("hi")


def test_control_plane_loads_a_script_and_reports_log_stats_and_violations(
    fake_llm: FakeLLM, raw: httpx2.Client
) -> None:
    loaded = raw.post("/_fake/script", json={"turns": [{"parts": ["scripted over http"]}]})
    answer = raw.post("/v1/messages", json={**ASK, "messages": [user("hi")]}, headers={"x-api-key": "k"})
    bad = raw.post(
        "/v1/messages",
        json={**ASK, "messages": [{"role": "user", "content": ""}]},
        headers={"x-api-key": "k"},
    )
    log = raw.get("/_fake/log").json()
    stats = raw.get("/_fake/stats").json()
    violations = raw.get("/_fake/violations").json()

    assert loaded.json() == {"loaded": 1, "remaining_turns": 1}
    assert answer.json()["content"][0]["text"] == "scripted over http"
    assert bad.status_code == 400
    assert [r["api"] for r in log["requests"]] == ["anthropic", "anthropic"]
    assert log["requests"][0]["response"]["kind"] == "reply"
    assert stats["requests"] == 2 and stats["violations"] == 1 and stats["remaining_turns"] == 0
    assert stats["cache"]["total"] == FakeLLM.count_tokens({"messages": [user("hi")]})
    assert violations["violations"][0]["rule"] == "anthropic.empty_content"


def test_control_plane_advances_the_clock_and_resets(fake_llm: FakeLLM, raw: httpx2.Client) -> None:
    fake_llm.script([Reply("x")])
    now = raw.post("/_fake/clock/advance", json={"seconds": 301}).json()
    reset = raw.post("/_fake/reset")
    unknown = raw.get("/_fake/nothing")
    broken = raw.post("/_fake/script", content=b"{")

    assert now == {"now": 301.0}
    assert reset.json() == {"ok": True}
    assert fake_llm.remaining_turns == 0
    assert unknown.status_code == 404
    assert broken.status_code == 400


def test_unknown_api_path_is_a_404_in_the_providers_shape(raw: httpx2.Client) -> None:
    response = raw.post("/v1/embeddings", json={}, headers={"anthropic-version": "2023-06-01"})

    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"


def test_recorded_request_offers_neutral_views_for_every_api(
    fake_llm: FakeLLM, gpt: openai.OpenAI, claude: anthropic.Anthropic
) -> None:
    fake_llm.responder = lambda request: Reply("ok")
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    chat = [
        {"role": "system", "content": "sys prompt"},
        user("hi"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "chat result"},
    ]
    gpt.chat.completions.create(model=OPENAI_MODEL, messages=chat, tools=tools)  # type: ignore[arg-type]
    items = [
        user("question"),
        {"type": "function_call", "call_id": "c2", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "responses result"},
    ]
    gpt.responses.create(
        model=OPENAI_MODEL,
        instructions="be brief",
        input=items,
        tools=[{"type": "function", "name": "read", "parameters": {}}],
    )  # type: ignore[arg-type]
    claude.messages.create(system="anthropic sys", messages=[user("last words")], **ASK)  # type: ignore[arg-type]

    chat_req, responses_req, anthropic_req = fake_llm.requests
    assert (chat_req.system, chat_req.tool_names, chat_req.last_user_text()) == ("sys prompt", ["read"], "hi")
    assert chat_req.last_tool_result() == chat_req.tool_results()[0]
    assert (chat_req.tool_results()[0].tool_call_id, chat_req.tool_results()[0].content) == (
        "c1",
        "chat result",
    )
    assert (responses_req.system, responses_req.tool_names, responses_req.last_user_text()) == (
        "be brief",
        ["read"],
        "question",
    )
    assert responses_req.last_tool_result().content == "responses result"  # type: ignore[union-attr]
    assert (anthropic_req.system, anthropic_req.last_user_text(), anthropic_req.last_tool_result()) == (
        "anthropic sys",
        "last words",
        None,
    )


def test_server_module_serves_a_script_file_and_prints_its_url(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"parts": ["from the cli"]}]}), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_tui.testing.server", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        with anthropic.Anthropic(api_key="k", base_url=url, max_retries=0, timeout=10) as client:
            message = client.messages.create(messages=[user("hi")], **ASK)  # type: ignore[arg-type]
        stats = httpx2.get(f"{url}/_fake/stats", timeout=10).json()
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()

    assert url.startswith("http://127.0.0.1:")
    assert message.content[0].text == "from the cli"
    assert stats["remaining_turns"] == 0
    assert process.returncode == 0


def test_reply_and_fault_reject_unknown_options() -> None:
    with pytest.raises(ValueError, match="unknown stop_reason"):
        Reply("x", stop_reason="done")
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("explode")
    with pytest.raises(TypeError, match="Reply parts must be"):
        Reply([42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="chunk"):
        Reply("x", chunk=0)
