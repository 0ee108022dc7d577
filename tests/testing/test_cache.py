from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import openai
import pytest

from pi_tui.testing import FakeLLM, ModelLimits, Reply

from ._helpers import ANTHROPIC_MODEL, OPENAI_MODEL, anthropic_for, user

CC: dict[str, Any] = {"type": "ephemeral"}
CC_1H: dict[str, Any] = {"type": "ephemeral", "ttl": "1h"}
BIG_SYSTEM = "You are a careful coding agent. " * 250  # ~2000 fake tokens


def _system(cache_control: dict[str, Any] | None = CC) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": BIG_SYSTEM}
    if cache_control:
        block["cache_control"] = cache_control
    return [block]


def _user_cc(text: str, cache_control: dict[str, Any] = CC) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": cache_control}]}


def _user_text(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _body(
    messages: list[dict[str, Any]], system: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 100,
        "system": system or _system(),
        "messages": messages,
        **extra,
    }


def _usage(client: anthropic.Anthropic, body: dict[str, Any]) -> anthropic.types.Usage:
    rest = {k: v for k, v in body.items() if k not in ("model", "max_tokens", "messages")}
    message = client.messages.create(
        model=body["model"], max_tokens=body["max_tokens"], messages=body["messages"], extra_body=rest
    )
    usage = message.usage
    assert usage.input_tokens + (usage.cache_read_input_tokens or 0) + (
        usage.cache_creation_input_tokens or 0
    ) == FakeLLM.count_tokens(body)
    return usage


@pytest.fixture
def answers(fake_llm: FakeLLM) -> FakeLLM:
    fake_llm.responder = lambda request: Reply("ok")
    return fake_llm


def test_second_request_reads_the_prefix_the_first_one_wrote(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    first = _body([_user_cc("first question")])
    second = _body(
        [
            _user_text("first question"),  # the shape it had in the first request
            {"role": "assistant", "content": "an answer"},
            _user_cc("second question"),
        ]
    )

    u1 = _usage(claude, first)
    u2 = _usage(claude, second)

    t1, t2 = FakeLLM.count_tokens(first), FakeLLM.count_tokens(second)
    assert (u1.input_tokens, u1.cache_read_input_tokens, u1.cache_creation_input_tokens) == (0, 0, t1)
    assert (u2.input_tokens, u2.cache_read_input_tokens, u2.cache_creation_input_tokens) == (0, t1, t2 - t1)
    stats = answers.cache_stats()
    assert [(r.cache_read, r.cache_write, r.total) for r in stats.requests] == [
        (0, t1, t1),
        (t1, t2 - t1, t2),
    ]
    assert stats.hit_ratio == pytest.approx(t1 / (t1 + t2))
    assert answers.requests[1].cache.hit == 1


def test_tokens_after_the_last_breakpoint_are_plain_input(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = _body([user("no breakpoint here"), {"role": "assistant", "content": "fine"}, user("nor here")])
    usage = _usage(claude, body)

    system_tokens = FakeLLM.count_tokens({"system": _system()})
    assert usage.cache_creation_input_tokens == system_tokens
    assert usage.input_tokens == FakeLLM.count_tokens(body) - system_tokens


def test_prefix_below_the_minimum_is_neither_read_nor_written_and_raises_nothing(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = _body([_user_cc("hi")], system=[{"type": "text", "text": "short", "cache_control": CC}])
    first, again = _usage(claude, body), _usage(claude, body)

    assert (first.cache_read_input_tokens, first.cache_creation_input_tokens) == (0, 0)
    assert (again.cache_read_input_tokens, again.cache_creation_input_tokens) == (0, 0)
    assert again.input_tokens == FakeLLM.count_tokens(body)


def test_minimum_cacheable_length_is_configurable_per_model() -> None:
    fake = FakeLLM(
        model_limits={"claude-tiny": ModelLimits(min_cacheable_tokens=5)}, responder=lambda r: Reply("ok")
    )
    body = _body(
        [_user_cc("hi there")], system=[{"type": "text", "text": "short system", "cache_control": CC}]
    )
    with fake.serve(), anthropic_for(fake) as client:
        default_model = _usage(client, body)
        tiny = _usage(client, {**body, "model": "claude-tiny-1"})

    assert default_model.cache_creation_input_tokens == 0
    assert tiny.cache_creation_input_tokens == FakeLLM.count_tokens(body)


def test_five_minute_entry_expires_on_the_fake_clock_but_a_hit_refreshes_it(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = _body([_user_cc("q")])
    total = FakeLLM.count_tokens(body)

    _usage(claude, body)
    answers.advance_clock(200)
    refreshed = _usage(claude, body)
    answers.advance_clock(250)  # 450 s after the write, 250 s after the refresh
    still = _usage(claude, body)
    answers.advance_clock(301)
    expired = _usage(claude, body)

    assert refreshed.cache_read_input_tokens == still.cache_read_input_tokens == total
    assert (expired.cache_read_input_tokens, expired.cache_creation_input_tokens) == (0, total)


def test_one_hour_ttl_survives_past_five_minutes_and_is_reported_separately(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = _body([_user_cc("q")], system=_system(CC_1H))
    system_tokens = FakeLLM.count_tokens({"system": _system()})

    first = _usage(claude, body)
    answers.advance_clock(600)
    second = _usage(claude, body)

    assert first.cache_creation is not None
    assert first.cache_creation.ephemeral_1h_input_tokens == system_tokens
    assert first.cache_creation.ephemeral_5m_input_tokens == FakeLLM.count_tokens(body) - system_tokens
    assert second.cache_read_input_tokens == system_tokens


@pytest.mark.parametrize(("new_blocks", "hit"), [(18, True), (19, False)])
def test_lookup_walks_back_at_most_twenty_blocks(
    answers: FakeLLM, claude: anthropic.Anthropic, new_blocks: int, hit: bool
) -> None:
    first = _body([_user_cc("question")], system=_system(None))
    filler = [{"type": "text", "text": f"step {i}"} for i in range(new_blocks)]
    second = _body(
        [_user_text("question"), {"role": "assistant", "content": filler}, _user_cc("next")],
        system=_system(None),
    )

    _usage(claude, first)
    usage = _usage(claude, second)

    assert usage.cache_read_input_tokens == (FakeLLM.count_tokens(first) if hit else 0)


def test_top_level_cache_control_moves_a_breakpoint_onto_the_last_block(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    first = _body([user("q1")], system=_system(None), cache_control=CC)
    second = _body(
        [user("q1"), {"role": "assistant", "content": "a1"}, user("q2")],
        system=_system(None),
        cache_control=CC,
    )

    u1, u2 = _usage(claude, first), _usage(claude, second)

    assert u1.cache_creation_input_tokens == FakeLLM.count_tokens(first)
    assert u2.cache_read_input_tokens == FakeLLM.count_tokens(first)
    assert u2.input_tokens == 0


def test_cache_is_isolated_per_api_key_and_per_model(answers: FakeLLM) -> None:
    body = _body([_user_cc("q")])
    with anthropic_for(answers) as one, anthropic_for(answers, api_key="other-key") as other:
        _usage(one, body)
        other_key = _usage(other, body)
        other_model = _usage(one, {**body, "model": "claude-opus-4-8"})
        same = _usage(one, body)

    assert other_key.cache_read_input_tokens == 0
    assert other_model.cache_read_input_tokens == 0
    assert same.cache_read_input_tokens == FakeLLM.count_tokens(body)


def test_changing_the_system_prompt_invalidates_everything_after_it(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = _body([_user_cc("q")])
    changed = _body(
        [_user_cc("q")], system=[{"type": "text", "text": BIG_SYSTEM + " (now 12:01)", "cache_control": CC}]
    )

    _usage(claude, body)
    usage = _usage(claude, changed)

    assert usage.cache_read_input_tokens == 0


def test_streamed_usage_matches_in_message_start_and_message_delta(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    body = _body([_user_cc("q")])
    _usage(claude, body)
    with claude.messages.create(
        model=ANTHROPIC_MODEL, max_tokens=100, system=body["system"], messages=body["messages"], stream=True
    ) as stream:
        events = list(stream)

    start, delta = events[0].message.usage, events[-2].usage
    assert start.cache_read_input_tokens == delta.cache_read_input_tokens == FakeLLM.count_tokens(body)
    assert start.cache_creation_input_tokens == delta.cache_creation_input_tokens == 0
    assert start.input_tokens == delta.input_tokens == 0


# -- OpenAI ------------------------------------------------------------------------------------------


def _chat(
    client: openai.OpenAI, messages: list[dict[str, Any]], **extra: Any
) -> openai.types.CompletionUsage:
    completion = client.chat.completions.create(
        model=OPENAI_MODEL, messages=messages, extra_body=extra or None
    )  # type: ignore[arg-type]
    assert completion.usage is not None
    return completion.usage


def _rounded(tokens: int) -> int:
    return 0 if tokens < 1024 else 1024 + 128 * ((tokens - 1024) // 128)


CHAT_FIRST = [{"role": "system", "content": BIG_SYSTEM}, user("first")]
CHAT_SECOND = [*CHAT_FIRST, {"role": "assistant", "content": "answer"}, user("second")]


def test_openai_reads_the_shared_prefix_in_128_token_steps(answers: FakeLLM, gpt: openai.OpenAI) -> None:
    u1 = _chat(gpt, CHAT_FIRST)
    u2 = _chat(gpt, CHAT_SECOND)

    t1 = FakeLLM.count_tokens({"messages": CHAT_FIRST}, api="openai-chat")
    t2 = FakeLLM.count_tokens({"messages": CHAT_SECOND}, api="openai-chat")
    assert u1.prompt_tokens_details.cached_tokens == 0
    assert u2.prompt_tokens == t2
    assert u2.prompt_tokens_details.cached_tokens == _rounded(t1)
    assert (_rounded(t1) - 1024) % 128 == 0 and _rounded(t1) > 1024
    assert answers.cache_stats().requests[1].input == t2 - _rounded(t1)


def test_openai_prompt_below_1024_tokens_is_never_cached(answers: FakeLLM, gpt: openai.OpenAI) -> None:
    short = [user("tiny prompt")]
    _chat(gpt, short)

    assert _chat(gpt, short).prompt_tokens_details.cached_tokens == 0


def test_openai_prompt_cache_key_partitions_the_cache(answers: FakeLLM, gpt: openai.OpenAI) -> None:
    _chat(gpt, CHAT_FIRST, prompt_cache_key="session-a")

    assert _chat(gpt, CHAT_FIRST, prompt_cache_key="session-b").prompt_tokens_details.cached_tokens == 0
    assert _chat(gpt, CHAT_FIRST, prompt_cache_key="session-a").prompt_tokens_details.cached_tokens > 0


def test_openai_in_memory_cache_expires_unless_24h_retention_is_asked(
    answers: FakeLLM, gpt: openai.OpenAI
) -> None:
    _chat(gpt, CHAT_FIRST, prompt_cache_key="short")
    _chat(gpt, CHAT_FIRST, prompt_cache_key="long", prompt_cache_retention="24h")
    answers.advance_clock(400)

    assert _chat(gpt, CHAT_FIRST, prompt_cache_key="short").prompt_tokens_details.cached_tokens == 0
    assert (
        _chat(
            gpt, CHAT_FIRST, prompt_cache_key="long", prompt_cache_retention="24h"
        ).prompt_tokens_details.cached_tokens
        > 0
    )


def test_responses_reports_cached_tokens_under_input_tokens_details(
    answers: FakeLLM, gpt: openai.OpenAI
) -> None:
    items = [user("first question")]
    gpt.responses.create(model=OPENAI_MODEL, instructions=BIG_SYSTEM, input=items)  # type: ignore[arg-type]
    response = gpt.responses.create(model=OPENAI_MODEL, instructions=BIG_SYSTEM, input=[*items, user("more")])  # type: ignore[arg-type]

    first_total = FakeLLM.count_tokens({"instructions": BIG_SYSTEM, "input": items}, api="openai-responses")
    assert response.usage is not None
    assert response.usage.input_tokens_details.cached_tokens == _rounded(first_total)
    assert response.usage.input_tokens == FakeLLM.count_tokens(
        {"instructions": BIG_SYSTEM, "input": [*items, user("more")]}, api="openai-responses"
    )


def test_cache_simulation_handles_a_long_session_of_large_prompts_quickly() -> None:
    fake = FakeLLM(context_window=1_000_000, responder=lambda r: Reply("ok"))
    tool_result = "R" * 3600
    messages: list[dict[str, Any]] = [user("start")]
    bodies = []
    for i in range(110):
        for message in messages:
            for block in message["content"] if isinstance(message["content"], list) else []:
                block.pop("cache_control", None)
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"f{i}"}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": tool_result, "cache_control": CC}
        messages = [*messages, {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
        bodies.append(json.dumps(_body(messages)).encode())
    assert len(bodies[-1]) > 400_000

    # CPU time, not wall time: at a load of 13 on 2 cores the wall clock ran 15 times the work.
    started = time.process_time()
    for raw in bodies:
        fake.engine.handle("POST", "/v1/messages", {"x-api-key": "k"}, raw)
    elapsed = time.process_time() - started

    assert fake.violations == []
    assert fake.cache_stats().hit_ratio > 0.95
    assert elapsed < 5  # ~0.3 s of CPU here; the bound only catches quadratic blow-ups


LONG_OUTPUT = "line of tool output\n" * 150


def _tool_turn(result_content: Any) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": result_content, "is_error": False}
    return [user("read it"), {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def test_a_tool_result_sent_as_a_string_does_not_reuse_the_prefix_cached_as_a_block_list(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    as_blocks = _tool_turn([{"type": "text", "text": LONG_OUTPUT}])
    as_string = _tool_turn(LONG_OUTPUT)
    _usage(claude, _body([*as_blocks, _user_cc("next")]))

    same_shape = _usage(claude, _body([*as_blocks, _user_cc("next")]))
    other_shape = _usage(claude, _body([*as_string, _user_cc("next")]))

    before_result = FakeLLM.count_tokens(_body(as_blocks[:2]))
    assert same_shape.cache_read_input_tokens == FakeLLM.count_tokens(_body([*as_blocks, _user_cc("next")]))
    assert other_shape.cache_read_input_tokens == FakeLLM.count_tokens({"system": _system()})
    assert other_shape.cache_read_input_tokens < before_result  # nothing after the tool call is read


def test_a_user_message_sent_as_a_string_is_not_the_prefix_of_one_sent_as_a_text_block(
    answers: FakeLLM, claude: anthropic.Anthropic
) -> None:
    _usage(claude, _body([_user_cc("a question " * 100)]))
    again = _usage(claude, _body([{"role": "user", "content": "a question " * 100}, _user_cc("more")]))

    assert again.cache_read_input_tokens == FakeLLM.count_tokens({"system": _system()})


def test_openai_tool_output_as_a_string_and_as_a_part_list_are_different_prefixes(
    answers: FakeLLM, gpt: openai.OpenAI
) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    head = [*CHAT_FIRST, {"role": "assistant", "content": None, "tool_calls": [call]}]
    as_string = {"role": "tool", "tool_call_id": "call_1", "content": LONG_OUTPUT * 3}
    as_parts = {**as_string, "content": [{"type": "text", "text": LONG_OUTPUT * 3}]}
    _chat(gpt, [*head, as_string, user("next")])

    same = _chat(gpt, [*head, as_string, user("again")]).prompt_tokens_details.cached_tokens
    other = _chat(gpt, [*head, as_parts, user("again")]).prompt_tokens_details.cached_tokens

    head_tokens = FakeLLM.count_tokens({"messages": head}, api="openai-chat")
    assert same > head_tokens + 1000
    assert other <= head_tokens
