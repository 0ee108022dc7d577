"""pi's estimate of the history's tokens (the output cap's room) picks the answer pi picks: the last
usable one not older than any message before it, whatever the order of timestamps."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pi_tui.ai.providers._openai_compat import (
    capped_max_tokens,
    context_room,
    default_max_tokens,
)
from pi_tui.ai.tokens import count_message_tokens
from pi_tui.ai.types import AssistantMessage, Model, TextContent, ToolResultMessage, Usage, UserMessage

MODEL = Model(id="m", api="anthropic-messages", provider="p", context_window=1_000_000, max_tokens=64_000)


def _pi_estimate(messages: list[Any]) -> int:
    """pi's rule as it reads: walk forward, keep the last usable answer not older than what came before."""
    last, reported, latest = -1, 0, float("-inf")
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.timestamp >= latest:
            usage = message.usage
            total = usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write
            if message.stop_reason not in ("aborted", "error") and total > 0:
                last, reported = index, total
        latest = max(latest, message.timestamp)
    return reported + sum(count_message_tokens(m) for m in messages[last + 1 :])


def _history(rng: random.Random, size: int) -> list[Any]:
    messages: list[Any] = []
    clock = 1_000
    for n in range(size):
        clock += rng.choice([-500, 0, 1, 10, 100])  # sometimes older than the message before
        roll = rng.random()
        if roll < 0.3:
            messages.append(UserMessage(content=f"user {n} " * rng.randint(1, 9), timestamp=clock))
        elif roll < 0.8:
            total = rng.choice([0, 0, 50, 1_200, 9_000])
            usage = Usage(total_tokens=total) if rng.random() < 0.7 else Usage(input=total, output=7)
            messages.append(
                AssistantMessage(
                    content=[TextContent(text=f"answer {n}")],
                    usage=usage,
                    stop_reason=rng.choice(["stop", "toolUse", "error", "aborted"]),
                    timestamp=clock,
                )
            )
        else:
            text = [TextContent(text="r" * rng.randint(0, 40))]
            messages.append(ToolResultMessage(tool_call_id="c", tool_name="t", content=text, timestamp=clock))
    return messages


@pytest.mark.parametrize("seed", range(40))
def test_the_room_is_what_pis_rule_leaves(seed: int) -> None:
    rng = random.Random(seed)
    messages = _history(rng, rng.randint(0, 30))
    expected = MODEL.context_window - _pi_estimate(messages) - 4096
    assert context_room(MODEL, messages) == expected
    assert default_max_tokens(MODEL, messages, None) == min(64_000, max(1, expected))


def test_an_unknown_window_leaves_the_wanted_cap() -> None:
    model = MODEL.model_copy(update={"context_window": 0})
    assert context_room(model, [UserMessage(content="hi")]) is None
    assert capped_max_tokens(500, None) == 500 and capped_max_tokens(0, None) == 1
    assert capped_max_tokens(500, -3) == 1 and capped_max_tokens(500, 200) == 200
