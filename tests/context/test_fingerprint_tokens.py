"""A message block's token estimate is chars/4 of the message's default-spaced JSON (without timestamp
and usage), computed from the canonical form plus a separator count instead of a second dump."""

from __future__ import annotations

import json
import math
from typing import Any

from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    dump_message,
)
from pi_tui.context.request import fingerprint


def _expected(message: Any) -> int:
    data = dump_message(message)
    data.pop("timestamp", None)
    data.pop("usage", None)
    return math.ceil(len(json.dumps(data, ensure_ascii=False)) / 4)


def test_message_block_tokens_match_default_json_length() -> None:
    messages: list[Any] = [
        UserMessage(content="plain, with: separators inside a string"),
        UserMessage(
            content=[TextContent(text="é ü \u2028"), ImageContent(data="QUJD", mime_type="image/png")]
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm", thinking_signature="sig"),
                ToolCall(
                    id="t1", name="read", arguments={"path": "a.py", "opts": {"n": [1, 2.5, None, True]}}
                ),
                ToolCall(id="t2", name="ls", arguments={}),
            ]
        ),
        ToolResultMessage(
            tool_call_id="t1", tool_name="read", content=[], details={"empty": [], "nested": [[], {}]}
        ),
    ]
    blocks = fingerprint(LlmRequest(system_prompt="sys", messages=messages, tools=[]))
    tokens = [b.tokens for b in blocks if b.kind == "message"]
    assert tokens == [_expected(m) for m in messages]
