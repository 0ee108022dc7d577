from __future__ import annotations

import pytest

from pi_tui.testing import count_tokens
from pi_tui.testing._tokens import (
    BLOCK_OVERHEAD,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    TOOL_OVERHEAD,
    canonical_json,
)


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100)])
def test_text_costs_a_quarter_token_per_char_rounded_up(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


def test_anthropic_body_adds_block_message_and_tool_overheads() -> None:
    tool = {"name": "read", "input_schema": {"type": "object"}}
    body = {
        "tools": [tool],
        "system": "abcd" * 3,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "abcd"}, {"type": "image", "source": {}}]}
        ],
    }

    expected = (
        TOOL_OVERHEAD
        + count_tokens(canonical_json(tool))
        + BLOCK_OVERHEAD
        + 3
        + MESSAGE_OVERHEAD
        + BLOCK_OVERHEAD
        + 1
        + BLOCK_OVERHEAD
        + IMAGE_TOKENS
    )
    assert count_tokens(body) == expected


def test_cache_control_and_key_order_do_not_change_the_count() -> None:
    plain = {
        "tools": [{"name": "t", "input_schema": {"a": 1, "b": 2}}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    marked = {
        "tools": [{"input_schema": {"b": 2, "a": 1}, "name": "t", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }

    assert count_tokens(plain) == count_tokens(marked)


def test_openai_bodies_count_content_and_tool_calls() -> None:
    chat = {
        "messages": [
            {"role": "user", "content": "abcd"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "ab", "arguments": "{}"}}
                ],
            },
        ]
    }
    responses = {"instructions": "abcd", "input": "abcd"}

    assert count_tokens(chat, api="openai-chat") == (MESSAGE_OVERHEAD + BLOCK_OVERHEAD + 1) + (
        MESSAGE_OVERHEAD + BLOCK_OVERHEAD + 2
    )
    assert count_tokens(responses, api="openai-responses") == (BLOCK_OVERHEAD + 1) + (
        MESSAGE_OVERHEAD + BLOCK_OVERHEAD + 1
    )


def test_unknown_api_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown api"):
        count_tokens({}, api="cohere")
