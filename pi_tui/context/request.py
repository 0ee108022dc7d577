"""Mapping an envelope to a provider request, and fingerprinting requests for cache accounting.

The provider always receives cached messages first and uncached messages last; ``cache_boundary`` tells
the provider where the cached region ends so it can put its last breakpoint there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.tokens import estimate_tokens
from pi_tui.ai.types import ToolDefinition, dump_message

from .envelope import ContextEnvelope

__all__ = ["to_llm_request", "Block", "fingerprint", "common_prefix_blocks", "message_tokens"]


def message_tokens(message: Any) -> int:
    """Estimated tokens of one message as it is serialised (chars/4 of its JSON)."""
    return estimate_tokens(json.dumps(dump_message(message), ensure_ascii=False))


def to_llm_request(env: ContextEnvelope, available_tools: Iterable[str] | None = None) -> LlmRequest:
    """Build the provider-neutral request from an envelope.

    Tool definitions whose implementation is not loaded (``available_tools``) are omitted: a model must
    never be offered a tool nobody can run.
    """
    from pi_tui.agent.convert import convert_to_llm, transform_messages

    cached = transform_messages(convert_to_llm(list(env.cached)))
    uncached = transform_messages(convert_to_llm(list(env.uncached)))
    tools: list[ToolDefinition] = list(env.tools)
    if available_tools is not None:
        names = set(available_tools)
        tools = [t for t in tools if t.name in names]
    return LlmRequest(
        system_prompt=env.system_compiled,
        messages=[*cached, *uncached],
        tools=tools,
        cache_boundary=len(cached),
    )


@dataclass(frozen=True, slots=True)
class Block:
    """One cacheable unit of a request, in the order providers hash them (tools, system, messages)."""

    kind: str  # "tool" | "system" | "message"
    label: str
    digest: str
    tokens: int
    cached: bool


def _digest(data: Any, previous: str) -> str:
    raw = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b((previous + raw).encode(), digest_size=12).hexdigest()


def fingerprint(request: LlmRequest) -> list[Block]:
    """Running-prefix digests and token estimates per block: block *i*'s digest covers blocks 0..i."""
    blocks: list[Block] = []
    prev = ""
    for tool in request.tools:
        data = tool.to_json_dict()
        prev = _digest(data, prev)
        blocks.append(Block("tool", tool.name, prev, estimate_tokens(json.dumps(data)), True))
    prev = _digest(request.system_prompt, prev)
    blocks.append(Block("system", "system", prev, estimate_tokens(request.system_prompt), True))
    boundary = len(request.messages) if request.cache_boundary is None else request.cache_boundary
    for index, message in enumerate(request.messages):
        data = dump_message(message)
        data.pop("timestamp", None)
        data.pop("usage", None)
        prev = _digest(data, prev)
        label = f"messages[{index}] {message.role}"
        blocks.append(
            Block(
                "message",
                label,
                prev,
                estimate_tokens(json.dumps(data, ensure_ascii=False)),
                index < boundary,
            )
        )
    return blocks


def common_prefix_blocks(previous: list[Block], current: list[Block]) -> int:
    """How many leading blocks of ``current`` match ``previous`` exactly (a prefix-cache hit)."""
    count = 0
    for old, new in zip(previous, current, strict=False):
        if old.digest != new.digest:
            break
        count += 1
    return count
