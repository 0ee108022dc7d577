from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest

from pi_tui.testing import FakeLLM, Reply, fake_signature, text, thinking, tool_call

from ._helpers import ANTHROPIC_MODEL, API_KEY, user

M = ANTHROPIC_MODEL
THINK = {"type": "enabled", "budget_tokens": 1024}
TOOL = {"name": "read", "description": "read a file", "input_schema": {"type": "object"}}
CC = {"type": "ephemeral"}


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def _user_blocks(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def _use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "read", "input": {"path": "a"}}


def _result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "file body"}


def _text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


CASES: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "system_role",
        {"messages": [{"role": "system", "content": "be nice"}, user("hi")]},
        "anthropic.invalid_role",
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
    ),
    (
        "unknown_role",
        {"messages": [{"role": "tool", "content": "x"}]},
        "anthropic.invalid_role",
        "messages.0.role: Input should be 'user' or 'assistant'",
    ),
    (
        "empty_message",
        {"messages": [user(""), _assistant(_text("ok")), user("hi")]},
        "anthropic.empty_content",
        "messages.0: all messages must have non-empty content except for the optional final assistant message",
    ),
    (
        "empty_text",
        {"messages": [_user_blocks(_text(""))]},
        "anthropic.empty_text",
        "messages: text content blocks must be non-empty",
    ),
    (
        "blank_text",
        {"messages": [_user_blocks(_text("  \n"))]},
        "anthropic.empty_text",
        "messages: text content blocks must contain non-whitespace text",
    ),
    (
        "blank_system",
        {"system": [_text(" ")], "messages": [user("hi")]},
        "anthropic.empty_text",
        "system: text content blocks must contain non-whitespace text",
    ),
    (
        "prefill_whitespace",
        {"messages": [user("hi"), {"role": "assistant", "content": "Sure "}]},
        "anthropic.prefill_whitespace",
        "final assistant content cannot end with trailing whitespace",
    ),
    (
        "max_tokens",
        {"max_tokens": 200_000},
        "anthropic.max_tokens",
        f"max_tokens: 200000 > 128000, which is the maximum allowed number of output tokens for {M}",
    ),
    (
        "tool_name",
        {"tools": [{**TOOL, "name": "read file"}]},
        "anthropic.tool_name",
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
    ),
    ("duplicate_tool", {"tools": [TOOL, TOOL]}, "anthropic.tool_name", "tools: Tool names must be unique."),
    (
        "unknown_tool_choice",
        {"tools": [TOOL], "tool_choice": {"type": "tool", "name": "write"}},
        "anthropic.tool_choice_unknown",
        "Tool 'write' not found",
    ),
    (
        "tool_use_id",
        {"messages": [user("hi"), _assistant(_use("bad id!")), _user_blocks(_result("bad id!"))]},
        "anthropic.tool_use_id",
        "messages.1.content.0.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    ),
    (
        "tool_result_missing",
        {
            "messages": [
                user("hi"),
                _assistant(_text("calling"), _use("t1"), _use("t2")),
                _user_blocks(_result("t1")),
            ]
        },
        "anthropic.tool_result_missing",
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ),
    (
        "tool_result_unexpected",
        {"messages": [user("hi"), _assistant(_text("no tools")), _user_blocks(_result("t9"))]},
        "anthropic.tool_result_unexpected",
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    (
        "tool_result_order",
        {"messages": [user("hi"), _assistant(_use("t1")), _user_blocks(_text("note"), _result("t1"))]},
        "anthropic.tool_result_order",
        "messages.2.content.1: `tool_result` blocks must come first",
    ),
    (
        "budget_too_small",
        {"thinking": {"type": "enabled", "budget_tokens": 500}},
        "anthropic.thinking_budget",
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    ),
    (
        "budget_over_max_tokens",
        {"thinking": {"type": "enabled", "budget_tokens": 2000}, "max_tokens": 1500},
        "anthropic.thinking_budget",
        "`max_tokens` must be greater than `thinking.budget_tokens`",
    ),
    (
        "thinking_forced_tool",
        {"thinking": THINK, "tools": [TOOL], "tool_choice": {"type": "any"}},
        "anthropic.thinking_tool_choice",
        "Thinking may not be enabled when tool_choice forces tool use.",
    ),
    (
        "thinking_temperature",
        {"thinking": THINK, "temperature": 0.2},
        "anthropic.thinking_temperature",
        "`temperature` may only be set to 1 when thinking is enabled",
    ),
    (
        "forged_signature",
        {
            "thinking": THINK,
            "messages": [
                user("hi"),
                _assistant({"type": "thinking", "thinking": "hm", "signature": "forged"}, _text("x")),
                user("go"),
            ],
        },
        "anthropic.thinking_signature",
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    (
        "thinking_not_replayed",
        {
            "thinking": THINK,
            "tools": [TOOL],
            "messages": [user("hi"), _assistant(_use("t1")), _user_blocks(_result("t1"))],
        },
        "anthropic.thinking_replay_missing",
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block",
    ),
    (
        "five_breakpoints",
        {"system": [_text(f"s{i}", cache_control=CC) for i in range(5)]},
        "anthropic.cache_control_limit",
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "automatic_counts",
        {"system": [_text(f"s{i}", cache_control=CC) for i in range(4)], "cache_control": CC},
        "anthropic.cache_control_limit",
        "A maximum of 4 blocks with cache_control may be provided. Found 5. (this count includes the automatic breakpoint",
    ),
    (
        "cache_type",
        {"system": [_text("s", cache_control={"type": "persistent"})]},
        "anthropic.cache_control_invalid",
        "system.0.cache_control.type: Input should be 'ephemeral'",
    ),
    (
        "cache_ttl_value",
        {"system": [_text("s", cache_control={"type": "ephemeral", "ttl": "2h"})]},
        "anthropic.cache_control_invalid",
        "system.0.cache_control.ephemeral.ttl: Input should be '5m' or '1h'",
    ),
    (
        "cache_ttl_order",
        {
            "system": [_text("s", cache_control=CC)],
            "messages": [_user_blocks(_text("hi", cache_control={"type": "ephemeral", "ttl": "1h"}))],
        },
        "anthropic.cache_ttl_order",
        "ttl='1h' must not come after a breakpoint with ttl='5m'",
    ),
]


@pytest.mark.parametrize(("overrides", "rule", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_violation_is_rejected_with_the_real_text_and_recorded(
    fake_llm: FakeLLM, claude: anthropic.Anthropic, overrides: dict[str, Any], rule: str, message: str
) -> None:
    fake_llm.script([Reply("never sent")])
    body = {"model": M, "max_tokens": 4000, "messages": [user("hi")], **overrides}
    rest = {k: v for k, v in body.items() if k not in ("model", "max_tokens", "messages")}

    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(
            model=M, max_tokens=body["max_tokens"], messages=body["messages"], extra_body=rest
        )

    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert message in caught.value.body["error"]["message"]  # type: ignore[index]
    assert rule in [v.rule for v in fake_llm.violations]
    assert fake_llm.violations[0].message == caught.value.body["error"]["message"]  # type: ignore[index]
    assert fake_llm.remaining_turns == 1


@pytest.mark.parametrize("missing", ["model", "max_tokens", "messages"])
def test_missing_required_field_is_rejected(fake_llm: FakeLLM, raw: httpx2.Client, missing: str) -> None:
    body = {"model": M, "max_tokens": 10, "messages": [user("hi")]}
    del body[missing]
    response = raw.post("/v1/messages", json=body, headers={"x-api-key": API_KEY})

    assert response.status_code == 400
    assert response.json()["error"]["message"] == f"{missing}: Field required"
    assert fake_llm.violations[0].rule == "anthropic.required_field"


def test_unparsable_body_is_a_400_invalid_json_violation(fake_llm: FakeLLM, raw: httpx2.Client) -> None:
    response = raw.post("/v1/messages", content=b"{not json", headers={"x-api-key": API_KEY})

    assert response.status_code == 400
    assert response.json()["type"] == "error"
    assert fake_llm.violations[0].rule == "anthropic.invalid_json"


def test_prompt_over_the_context_window_is_rejected_as_too_long() -> None:
    from ._helpers import anthropic_for

    fake = FakeLLM(context_window=50)
    messages = [user("word " * 100)]
    with fake.serve(), anthropic_for(fake) as client:
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model=M, max_tokens=10, messages=messages)  # type: ignore[arg-type]

    tokens = fake.count_tokens({"messages": messages})
    assert caught.value.body["error"]["message"] == f"prompt is too long: {tokens} tokens > 50 maximum"  # type: ignore[index]
    assert fake.violations[0].rule == "anthropic.context_window"


def test_thinking_tool_loop_replayed_with_the_fakes_signature_is_accepted(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply([thinking("I should read it"), tool_call("read", {"path": "a"})]), Reply("done")])
    params: dict[str, Any] = {"model": M, "max_tokens": 4000, "thinking": THINK, "tools": [TOOL]}
    with claude.messages.stream(messages=[user("hi")], **params) as stream:
        first = stream.get_final_message()
    replay = [block.model_dump(exclude_none=True) for block in first.content]
    messages = [
        user("hi"),
        {"role": "assistant", "content": replay},
        _user_blocks(_result(first.content[1].id), _text("and then?")),
    ]
    second = claude.messages.create(messages=messages, **params)

    assert second.content[0].text == "done"
    assert fake_llm.violations == []


def test_tool_results_split_over_consecutive_user_messages_are_merged_like_the_api_does(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply("ok")])
    messages = [
        user("hi"),
        _assistant(_use("t1"), _use("t2")),
        _user_blocks(_result("t1")),
        _user_blocks(_result("t2")),
    ]
    claude.messages.create(model=M, max_tokens=10, messages=messages)  # type: ignore[arg-type]

    assert fake_llm.violations == []


def test_explicit_signatures_in_the_script_are_remembered_and_accepted_back(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script([Reply([thinking("hm", signature="custom-sig"), text("a")]), Reply("b")])
    claude.messages.create(model=M, max_tokens=4000, thinking=THINK, messages=[user("hi")])  # type: ignore[arg-type]
    history = [
        user("hi"),
        _assistant({"type": "thinking", "thinking": "hm", "signature": "custom-sig"}, _text("a")),
        user("more"),
    ]
    claude.messages.create(model=M, max_tokens=4000, thinking=THINK, messages=history)  # type: ignore[arg-type]

    assert fake_llm.violations == []
    assert fake_signature("hm") != "custom-sig"


def test_lenient_mode_records_violations_but_answers_from_the_script() -> None:
    from ._helpers import anthropic_for

    fake = FakeLLM(strict=False)
    fake.script([Reply("answered anyway")])
    with fake.serve(), anthropic_for(fake) as client:
        message = client.messages.create(model=M, max_tokens=10, messages=[_user_blocks(_text(""))])  # type: ignore[arg-type]

    assert message.content[0].text == "answered anyway"
    assert [v.rule for v in fake.violations] == ["anthropic.empty_text"]
    with pytest.raises(AssertionError, match="anthropic.empty_text"):
        fake.assert_no_violations()
