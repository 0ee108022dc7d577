"""Per-request work of a long run is proportional to what is new, not to the history (issue #12).

A request extends the previous one; the ledger and the fingerprints must not walk the whole history
again for each request. These tests count what is read or hashed (not time), so they fail when an
O(history) pass comes back, and check the shortcuts give what the plain definitions give.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.context import request as request_module
from pi_tui.context.ledger import Attribution, CacheLedger
from pi_tui.context.request import Block, common_prefix_blocks, fingerprint

TOOLS = [ToolDefinition(name="read", description="Read a file", parameters={"type": "object"})]


class _Counted(list[Block]):
    """A block list that counts how many of its blocks are read (by index, slice or iteration)."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        got = super().__getitem__(index)
        _Counted.reads += len(got) if isinstance(index, slice) else 1
        return got

    def __iter__(self) -> Iterator[Block]:
        for block in super().__iter__():
            _Counted.reads += 1
            yield block


def _history(calls: int) -> list[Any]:
    messages: list[Any] = [UserMessage(content="Read the files one by one.")]
    for n in range(calls):
        messages.append(
            AssistantMessage(content=[ToolCall(id=f"t{n}", name="read", arguments={"path": f"f{n}"})])
        )
        messages.append(
            ToolResultMessage(tool_call_id=f"t{n}", tool_name="read", content=[TextContent(text=f"body {n}")])
        )
    return messages


def _request(messages: list[Any], uncached: int = 0) -> LlmRequest:
    return LlmRequest(
        system_prompt="You are terse.",
        messages=messages,
        tools=TOOLS,
        cache_boundary=len(messages) - uncached,
    )


def _reads_of_next_request(calls: int) -> int:
    """Blocks of the history the ledger reads to note a request that adds one tool call to ``calls``."""
    history = _history(calls + 1)
    ledger = CacheLedger()
    ledger.note_request("m", _Counted(fingerprint(_request(history[:-2]))), [])
    _Counted.reads = 0
    ledger.note_request("m", _Counted(fingerprint(_request(history))), [])
    return _Counted.reads


def test_noting_a_request_reads_a_logarithmic_number_of_history_blocks() -> None:
    small, large = _reads_of_next_request(50), _reads_of_next_request(3000)
    # 6,000 more messages add ~6 bisection steps (2 reads each), not thousands of reads.
    assert large <= small + 16, (small, large)
    assert large < 60


def test_the_ledger_figures_equal_the_plain_sums() -> None:
    history = _history(40)
    ledger = CacheLedger()
    requests = [
        _request(history[:21]),
        _request(history[:41], uncached=2),
        _request(history[:61]),
        # A changed system prompt: everything after the tools is lost.
        LlmRequest(system_prompt="Changed.", messages=history[:63], tools=TOOLS, cache_boundary=63),
        LlmRequest(system_prompt="Changed.", messages=history[:81], tools=TOOLS, cache_boundary=81),
    ]
    previous: list[Block] = []
    for number, request in enumerate(requests):
        blocks = fingerprint(request)
        attributions = [Attribution("test", "why", "system")] if number == 3 else []
        record = ledger.note_request("m", blocks, attributions)
        hit = _plain_common_prefix(previous, blocks)
        assert record.prompt_tokens_estimate == sum(b.tokens for b in blocks)
        assert record.expected_cache_tokens == sum(b.tokens for b in blocks[:hit])
        previous = blocks
    lost = [i for i in ledger.invalidations if i.request_index == 3]
    assert [i.source for i in lost] == ["test"] and lost[0].tokens_rebilled > 0
    assert len(ledger.invalidations) == 1


def _plain_common_prefix(previous: list[Block], current: list[Block]) -> int:
    count = 0
    for old, new in zip(previous, current, strict=False):
        if old.digest != new.digest:
            break
        count += 1
    return count


@pytest.mark.parametrize("seed", range(20))
def test_the_bisected_common_prefix_equals_the_plain_walk(seed: int) -> None:
    rng = random.Random(seed)
    history = _history(rng.randint(0, 30))
    first = fingerprint(_request(history[: rng.randint(1, len(history))]))
    other = list(history)
    if rng.random() < 0.7 and len(other) > 1:  # change one message somewhere
        at = rng.randrange(len(other))
        other[at] = UserMessage(content=f"changed {seed}")
    second = fingerprint(_request(other[: rng.randint(1, len(other))]))
    assert common_prefix_blocks(first, second) == _plain_common_prefix(first, second)
    assert common_prefix_blocks(second, first) == _plain_common_prefix(second, first)
    assert common_prefix_blocks([], second) == 0


def test_fingerprinting_the_next_request_hashes_only_the_new_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed: list[str] = []
    chain = request_module._chain

    def counting_chain(raw: str, previous: str) -> str:
        hashed.append(raw)
        return chain(raw, previous)

    monkeypatch.setattr(request_module, "_chain", counting_chain)
    for calls in (5, 500):
        history = _history(calls + 1)
        fingerprint(_request(history[:-2]))
        hashed.clear()
        blocks = fingerprint(_request(history))
        assert len(hashed) == 2, calls  # the new assistant message and its tool result
        assert [b.upto for b in blocks] == [
            sum(b.tokens for b in blocks[: i + 1]) for i in range(len(blocks))
        ]


def test_a_tool_definition_is_estimated_once_and_as_its_json() -> None:
    import json

    from pi_tui.ai.tokens import estimate_tokens
    from pi_tui.context.request import tool_tokens

    tool = ToolDefinition(name="grep", description="Search " * 40, parameters={"type": "object"})
    assert tool_tokens(tool) == estimate_tokens(json.dumps(tool.to_json_dict()))


def test_a_strictness_request_is_not_counted_as_tokens_the_model_reads() -> None:
    from pi_tui.agent.tool import PREFER_STRICT_SCHEMA
    from pi_tui.context.request import tool_tokens

    plain = ToolDefinition(name="read", description="Read a file " * 20, parameters={"type": "object"})
    strict = ToolDefinition(
        name="read",
        description="Read a file " * 20,
        parameters={"type": "object"},
        constrained_sampling=dict(PREFER_STRICT_SCHEMA),
    )
    assert tool_tokens(strict) == tool_tokens(plain)


def test_the_first_request_is_fingerprinted_only_when_asked_and_once() -> None:
    history = _history(40)
    request = _request(history[:41])
    calls: list[int] = []

    def blocks() -> list[Block]:
        calls.append(1)
        return fingerprint(request)

    ledger = CacheLedger()
    record = ledger.note_request("m", blocks, [])
    assert calls == [] and record.expected_cache_tokens == 0
    # A retry of the same request compares with the first: the first is fingerprinted then, once.
    retry = ledger.note_request("m", blocks, [])
    assert len(calls) == 2
    assert record.prompt_tokens_estimate == retry.prompt_tokens_estimate == ledger.last_blocks[-1].upto
    assert retry.expected_cache_tokens == ledger.last_blocks[-1].upto  # the whole request repeats
    assert len(calls) == 2


def test_a_deferred_fingerprint_is_computed_when_the_blocks_are_read() -> None:
    request = _request(_history(10)[:21])
    ledger = CacheLedger()
    record = ledger.note_request("m", lambda: fingerprint(request), [])
    assert not ledger.fingerprinted
    assert ledger.last_blocks == fingerprint(request)
    assert ledger.fingerprinted and record.prompt_tokens_estimate == ledger.last_blocks[-1].upto
