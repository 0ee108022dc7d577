"""What every renderer needs: the per-request context, tool ids, and delta splitting."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pi_tui.util.json_types import JsonObject

from ._script import Chunking, Part, Reply, TextPart, ThinkingPart, ToolCallPart, fake_signature
from ._tokens import text_tokens

__all__ = ["RenderContext", "ResolvedCall", "output_tokens", "split_json", "split_text"]

_WORDS = re.compile(r"\S+\s*|\s+")
_JSON_CHUNK = 24


@dataclass
class ResolvedCall:
    """A tool call with its final id."""

    part: ToolCallPart
    id: str


@dataclass
class RenderContext:
    """Everything a renderer needs besides the reply.

    Attributes:
        seq: the request's sequence number (ids derive from it).
        model: the model to echo.
        body: the request body.
        usage: reported usage: ``input``, ``cache_read``, ``cache_write``, ``cache_write_5m``,
            ``cache_write_1h``, ``output``, ``reasoning``.
        created: the unix time to report.
        next_tool_number: hands out the fake-wide tool-call counter.
        remember_signature: called with (signature, thinking text) for every signature sent.
        reasoning_field: Chat Completions: delta field carrying thinking text (``None``: omit thinking).
    """

    seq: int
    model: str
    body: JsonObject
    usage: dict[str, int]
    created: int
    next_tool_number: Callable[[], int]
    remember_signature: Callable[[str, str], None]
    reasoning_field: str | None = "reasoning_content"
    tool_ids: list[str] = field(default_factory=list)

    def call_id(self, part: ToolCallPart, prefix: str) -> str:
        call_id = part.id or f"{prefix}{self.next_tool_number():04d}"
        self.tool_ids.append(call_id)
        return call_id

    def signature(self, part: ThinkingPart) -> str:
        signature = part.signature if part.signature is not None else fake_signature(part.thinking)
        self.remember_signature(signature, part.thinking)
        return signature


def split_text(text: str, chunk: Chunking) -> list[str]:
    """Deltas for a text: by word (default), whole, or fixed char counts; they join back to ``text``."""
    if not text:
        return []
    if chunk == "whole":
        return [text]
    if isinstance(chunk, int):
        return [text[i : i + chunk] for i in range(0, len(text), chunk)]
    return _WORDS.findall(text)


def split_json(arguments: str, chunk: Chunking) -> list[str]:
    """Deltas for tool-call arguments: fixed 24-char pieces unless ``chunk`` says otherwise."""
    if not arguments:
        return []
    if chunk == "whole":
        return [arguments]
    size = chunk if isinstance(chunk, int) else _JSON_CHUNK
    return [arguments[i : i + size] for i in range(0, len(arguments), size)]


def part_tokens(part: Part) -> int:
    if isinstance(part, TextPart):
        return text_tokens(part.text)
    if isinstance(part, ThinkingPart):
        return 0 if part.redacted else text_tokens(part.thinking)
    return text_tokens(part.name) + text_tokens(part.arguments())


def output_tokens(reply: Reply) -> tuple[int, int]:
    """(output tokens, of which reasoning) for a reply, by the fake's heuristic; at least 1 output token."""
    reasoning = sum(part_tokens(p) for p in reply.part_list if isinstance(p, ThinkingPart))
    total = sum(part_tokens(p) for p in reply.part_list)
    return max(total, 1), reasoning
