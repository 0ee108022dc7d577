"""pi's output cap needs the newest timestamp before the last usable answer; a provider's conversion
finds it while it converts the history in slices. Its answer must equal counting it directly, for the
request it converted (also one extending the last), and anything else is counted."""

from __future__ import annotations

import random

import pytest

from pi_tui.ai.providers import anthropic
from pi_tui.ai.providers._openai_compat import context_room
from pi_tui.ai.providers._wire_cache import ConversionCache, PrefixMemo
from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.types import AssistantMessage, LlmMessage, Model, TextContent, Usage, UserMessage

MODEL = Model(id="m", api="anthropic-messages", provider="p", context_window=1_000_000, max_tokens=64_000)


def _history(rng: random.Random, count: int) -> list[LlmMessage]:
    messages: list[LlmMessage] = []
    for index in range(count):
        stamp = rng.choice([index, index, index, 10 * count, 0])  # mostly rising, sometimes out of order
        if index % 2:
            usage = Usage(total_tokens=rng.choice([0, 50]))
            messages.append(
                AssistantMessage(content=[TextContent(text="a")], usage=usage, timestamp=stamp, provider="p")
            )
        else:
            messages.append(UserMessage(content="q" * rng.randint(0, 9), timestamp=stamp))
    return messages


def _expected(messages: list[LlmMessage], index: int) -> float:
    return max((m.timestamp for m in messages[:index]), default=float("-inf"))


@pytest.mark.parametrize("seed", range(6))
def test_the_newest_timestamp_found_while_converting_equals_counting_it(seed: int) -> None:
    rng = random.Random(seed)
    memo = PrefixMemo()
    first = _history(rng, rng.randint(0, 700))
    later = [*first, *_history(rng, rng.randint(1, 400))]  # the next request repeats the first
    for messages in (first, later):
        request = LlmRequest(system_prompt="", messages=messages, cache_boundary=max(0, len(messages) - 3))
        memo.convert(MODEL, request, "key", lambda: anthropic._Converter(MODEL, ConversionCache()))
        for index in {0, len(messages), *(rng.randint(0, len(messages)) for _ in range(40))}:
            assert memo.newest_before(messages, index) == _expected(messages, index)
    other = _history(rng, 300)  # not the list converted: counted
    assert memo.newest_before(other, 200) == _expected(other, 200)


@pytest.mark.parametrize("seed", range(6))
def test_the_output_cap_is_the_same_with_the_conversions_timestamps(seed: int) -> None:
    rng = random.Random(100 + seed)
    memo = PrefixMemo()
    messages = _history(rng, rng.randint(1, 900))
    request = LlmRequest(system_prompt="s", messages=messages, cache_boundary=len(messages))
    memo.convert(MODEL, request, "key", lambda: anthropic._Converter(MODEL, ConversionCache()))
    assert context_room(MODEL, messages, "s", None, memo.newest_before) == context_room(MODEL, messages, "s")
