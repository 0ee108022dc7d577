"""The fake's deterministic token heuristic and the canonical flattening of prompts into segments.

Real tokenizers are unavailable offline (``tiktoken`` downloads its tables), so the fake counts
``ceil(len(text) / 4)`` tokens per piece of text plus small fixed overheads:

=====================  ======  ===========================================================
constant               tokens  charged for
=====================  ======  ===========================================================
``BLOCK_OVERHEAD``     3       every content block / content part / system block
``MESSAGE_OVERHEAD``   4       every message (added to its first block)
``TOOL_OVERHEAD``      8       every tool definition (on top of its sorted-key JSON)
``IMAGE_TOKENS``       1600    every image, wherever it appears
=====================  ======  ===========================================================

A prompt is flattened into an ordered list of `Segment` objects — tools, then system, then message
blocks — which is both what the token count sums over and what the prompt-cache simulation hashes.
Each segment has a *header* (block type, role, ids: hashed but not counted) and a *text* (counted).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pi_tui.util.json_types import JsonObject

__all__ = [
    "BLOCK_OVERHEAD",
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "TOOL_OVERHEAD",
    "Segment",
    "anthropic_segments",
    "canonical_json",
    "chat_segments",
    "count_tokens",
    "gemini_segments",
    "responses_segments",
    "text_tokens",
    "with_message_boundary",
]

CHARS_PER_TOKEN = 4
BLOCK_OVERHEAD = 3
MESSAGE_OVERHEAD = 4
TOOL_OVERHEAD = 8
IMAGE_TOKENS = 1600


def text_tokens(text: str) -> int:
    """Tokens for a piece of text: ``ceil(len(text) / 4)``."""
    return -(-len(text) // CHARS_PER_TOKEN)


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON: the canonical form of tool schemas and tool inputs."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class Segment:
    """One flattened prompt block.

    Attributes:
        section: ``"tools"``, ``"system"`` or ``"messages"``.
        header: identifying bytes that are hashed but not counted (type, role, ids, signatures).
        text: the counted content.
        overhead: fixed tokens charged before the text.
        extra: fixed tokens charged after the text (images).
        cache_control: the block's ``cache_control`` (or OpenAI ``prompt_cache_breakpoint``), if any.
        cacheable: whether the block may carry a cache breakpoint (thinking blocks may not).
        message_index: index of the message the block belongs to (-1 for tools and system).
    """

    section: str
    header: str
    text: str
    overhead: int
    extra: int = 0
    cache_control: JsonObject | None = None
    cacheable: bool = True
    message_index: int = -1

    @property
    def tokens(self) -> int:
        return self.overhead + text_tokens(self.text) + self.extra

    def prefix_bytes(self) -> bytes:
        """The delimiter and header fed to the hash before the text."""
        return b"\x1e" + self.header.encode() + b"\x1f"


def _cc(block: JsonObject) -> JsonObject | None:
    value = block.get("cache_control")
    return value if isinstance(value, dict) else None


def _without_cc(block: JsonObject) -> JsonObject:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _digest(value: Any) -> str:
    return hashlib.sha1(canonical_json(value).encode()).hexdigest()[:16]


def _tool_segment(tool: Any, index: int) -> Segment:
    if not isinstance(tool, dict):
        return Segment("tools", f"tool:{index}", canonical_json(tool), TOOL_OVERHEAD)
    return Segment("tools", "tool", canonical_json(_without_cc(tool)), TOOL_OVERHEAD, cache_control=_cc(tool))


# ---------------------------------------------------------------------------------------------------
# Anthropic Messages
# ---------------------------------------------------------------------------------------------------


def _anthropic_nested_text(content: Any) -> tuple[str, int, str, JsonObject | None]:
    """Text, image tokens, header extra and the last nested cache_control of a tool_result's content.

    The header extra records the content's shape as sent: a string and a list of text blocks with the
    same words are different prompts to the cache (only byte-identical prefixes are reused)."""
    if isinstance(content, str):
        return content, 0, "str", None
    if not isinstance(content, list):
        return "" if content is None else canonical_json(content), 0, "json", None
    texts: list[str] = []
    images = 0
    marks: list[str] = [f"list{len(content)}"]
    cc: JsonObject | None = None
    for part in content:
        if not isinstance(part, dict):
            texts.append(canonical_json(part))
            continue
        cc = _cc(part) or cc
        if part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") == "image":
            images += IMAGE_TOKENS
            marks.append("img:" + _digest(part.get("source")))
        else:
            texts.append(canonical_json(_without_cc(part)))
    return "\n".join(texts), images, ",".join(marks), cc


def _anthropic_block(role: str, block: Any) -> Segment:
    if isinstance(block, str):
        return Segment("messages", f"{role}:text", block, BLOCK_OVERHEAD)
    if not isinstance(block, dict):
        return Segment("messages", f"{role}:?", canonical_json(block), BLOCK_OVERHEAD)
    kind = block.get("type")
    cc = _cc(block)
    if kind == "text":
        text = str(block.get("text", ""))
        return Segment(
            "messages", f"{role}:text", text, BLOCK_OVERHEAD, cache_control=cc, cacheable=bool(text)
        )
    if kind == "thinking":
        header = f"{role}:thinking:{block.get('signature', '')}"
        return Segment("messages", header, str(block.get("thinking", "")), BLOCK_OVERHEAD, cacheable=False)
    if kind == "redacted_thinking":
        header = f"{role}:redacted:{_digest(block.get('data'))}"
        return Segment("messages", header, "", BLOCK_OVERHEAD, cacheable=False)
    if kind == "tool_use":
        text = f"{block.get('name', '')} {canonical_json(block.get('input', {}))}"
        return Segment(
            "messages", f"{role}:tool_use:{block.get('id', '')}", text, BLOCK_OVERHEAD, cache_control=cc
        )
    if kind == "tool_result":
        text, images, marks, nested_cc = _anthropic_nested_text(block.get("content"))
        err = ":error" if block.get("is_error") else ""
        header = f"{role}:tool_result:{block.get('tool_use_id', '')}{err}:{marks}"
        return Segment("messages", header, text, BLOCK_OVERHEAD, images, cache_control=cc or nested_cc)
    if kind == "image":
        header = f"{role}:image:{_digest(block.get('source'))}"
        return Segment("messages", header, "", BLOCK_OVERHEAD, IMAGE_TOKENS, cache_control=cc)
    if kind == "document":
        source = block.get("source")
        data = source.get("data") if isinstance(source, dict) and source.get("type") == "text" else None
        text = str(data) if data is not None else canonical_json(_without_cc(block))
        return Segment("messages", f"{role}:document", text, BLOCK_OVERHEAD, cache_control=cc)
    return Segment(
        "messages", f"{role}:{kind}", canonical_json(_without_cc(block)), BLOCK_OVERHEAD, cache_control=cc
    )


def _with_message_boundary(segments: list[Segment], role: str, index: int) -> list[Segment]:
    """Fold the message boundary (role marker and overhead) into the message's first block."""
    if not segments:
        segments = [Segment("messages", f"{role}:empty", "", 0, cacheable=False)]
    first = segments[0]
    first.header = f"\x1d{role}\x1d{first.header}"
    first.overhead += MESSAGE_OVERHEAD
    for seg in segments:
        seg.message_index = index
    return segments


with_message_boundary = _with_message_boundary  # for the flatteners of other modules (Bedrock)


def anthropic_segments(body: JsonObject) -> list[Segment]:
    """Flatten a Messages request: each tool → each system block → each message content block."""
    segments = [_tool_segment(tool, i) for i, tool in enumerate(_list(body.get("tools")))]
    system = body.get("system")
    if isinstance(system, str):
        if system:
            segments.append(Segment("system", "system:text", system, BLOCK_OVERHEAD))
    else:
        for block in _list(system):
            if isinstance(block, dict):
                text = str(block.get("text", ""))
                segments.append(
                    Segment(
                        "system",
                        "system:text",
                        text,
                        BLOCK_OVERHEAD,
                        cache_control=_cc(block),
                        cacheable=bool(text),
                    )
                )
    for index, message in enumerate(_list(body.get("messages"))):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            # A string is not the same prompt as a list holding one text block with that string.
            blocks = [Segment("messages", f"{role}:str", content, BLOCK_OVERHEAD)] if content else []
        else:
            blocks = [_anthropic_block(role, b) for b in _list(content)]
        segments.extend(_with_message_boundary(blocks, role, index))
    return segments


# ---------------------------------------------------------------------------------------------------
# OpenAI Chat Completions and Responses
# ---------------------------------------------------------------------------------------------------


def _openai_part(role: str, part: Any) -> Segment:
    if isinstance(part, str):
        return Segment("messages", f"{role}:text", part, BLOCK_OVERHEAD)
    if not isinstance(part, dict):
        return Segment("messages", f"{role}:?", canonical_json(part), BLOCK_OVERHEAD)
    kind = part.get("type")
    breakpoint = part.get("prompt_cache_breakpoint")
    cc = breakpoint if isinstance(breakpoint, dict) else None
    if kind in ("text", "input_text", "output_text", "refusal", "summary_text", "reasoning_text"):
        text = str(part.get("text", part.get("refusal", "")))
        return Segment("messages", f"{role}:text", text, BLOCK_OVERHEAD, cache_control=cc)
    if kind in ("image_url", "input_image"):
        header = f"{role}:image:{_digest(part.get('image_url') or part.get('file_id'))}"
        return Segment("messages", header, "", BLOCK_OVERHEAD, IMAGE_TOKENS, cache_control=cc)
    clean = {k: v for k, v in part.items() if k != "prompt_cache_breakpoint"}
    return Segment("messages", f"{role}:{kind}", canonical_json(clean), BLOCK_OVERHEAD, cache_control=cc)


def _content_segments(role: str, content: Any) -> list[Segment]:
    if isinstance(content, str):  # hashed apart from a one-part list with the same text: sent differently
        return [Segment("messages", f"{role}:str", content, BLOCK_OVERHEAD)]
    return [_openai_part(role, part) for part in _list(content)]


def chat_segments(body: JsonObject) -> list[Segment]:
    """Flatten a Chat Completions request: each tool → each message's content parts and tool calls."""
    segments = [_tool_segment(tool, i) for i, tool in enumerate(_list(body.get("tools")))]
    for index, message in enumerate(_list(body.get("messages"))):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        parts = _content_segments(role, message.get("content"))
        if role == "tool":
            for seg in parts:
                seg.header = f"{seg.header}:{message.get('tool_call_id', '')}"
        for call in _list(message.get("tool_calls")):
            function = call.get("function", {}) if isinstance(call, dict) else {}
            text = f"{function.get('name', '')} {function.get('arguments', '')}"
            call_id = call.get("id", "") if isinstance(call, dict) else ""
            parts.append(Segment("messages", f"{role}:tool_call:{call_id}", text, BLOCK_OVERHEAD))
        segments.extend(_with_message_boundary(parts, role, index))
    return segments


def _responses_item(item: Any, index: int) -> list[Segment]:
    if not isinstance(item, dict):
        return _with_message_boundary(
            [Segment("messages", "?", canonical_json(item), BLOCK_OVERHEAD)], "?", index
        )
    kind = item.get("type", "message")
    if kind == "message":
        role = str(item.get("role", ""))
        return _with_message_boundary(_content_segments(role, item.get("content")), role, index)
    if kind == "function_call":
        text = f"{item.get('name', '')} {item.get('arguments', '')}"
        seg = Segment("messages", f"function_call:{item.get('call_id', '')}", text, BLOCK_OVERHEAD)
        return _with_message_boundary([seg], "assistant", index)
    if kind == "function_call_output":
        output = item.get("output")
        parts = _content_segments("tool", output) if isinstance(output, list) else None
        if parts is None:
            parts = [Segment("messages", "tool:str", "" if output is None else str(output), BLOCK_OVERHEAD)]
        for seg in parts:
            seg.header = f"{seg.header}:{item.get('call_id', '')}"
        return _with_message_boundary(parts, "tool", index)
    if kind == "reasoning":
        summary = "\n".join(str(s.get("text", "")) for s in _list(item.get("summary")) if isinstance(s, dict))
        header = f"reasoning:{_digest(item.get('encrypted_content'))}"
        return _with_message_boundary(
            [Segment("messages", header, summary, BLOCK_OVERHEAD)], "assistant", index
        )
    seg = Segment("messages", str(kind), canonical_json(item), BLOCK_OVERHEAD)
    return _with_message_boundary([seg], "?", index)


def responses_segments(body: JsonObject) -> list[Segment]:
    """Flatten a Responses request: each tool → instructions → each input item."""
    segments = [_tool_segment(tool, i) for i, tool in enumerate(_list(body.get("tools")))]
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        segments.append(Segment("system", "system:text", instructions, BLOCK_OVERHEAD))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for index, item in enumerate(_list(items)):
        segments.extend(_responses_item(item, index))
    return segments


# ---------------------------------------------------------------------------------------------------
# Gemini generateContent
# ---------------------------------------------------------------------------------------------------


def _gemini_part(role: str, part: Any) -> Segment:
    if not isinstance(part, dict):
        return Segment("messages", f"{role}:?", canonical_json(part), BLOCK_OVERHEAD)
    signature = part.get("thoughtSignature")
    mark = f":sig:{_digest(signature)}" if isinstance(signature, str) else ""
    if "functionCall" in part:
        call = part["functionCall"] if isinstance(part["functionCall"], dict) else {}
        text = f"{call.get('name', '')} {canonical_json(call.get('args', {}))}"
        return Segment("messages", f"{role}:function_call:{call.get('id', '')}{mark}", text, BLOCK_OVERHEAD)
    if "functionResponse" in part:
        response = part["functionResponse"] if isinstance(part["functionResponse"], dict) else {}
        images = sum(IMAGE_TOKENS for p in _list(response.get("parts")) if isinstance(p, dict))
        text = f"{response.get('name', '')} {canonical_json(response.get('response', {}))}"
        header = f"{role}:function_response:{response.get('id', '')}"
        return Segment("messages", header, text, BLOCK_OVERHEAD, images)
    if "inlineData" in part:
        return Segment(
            "messages", f"{role}:image:{_digest(part['inlineData'])}", "", BLOCK_OVERHEAD, IMAGE_TOKENS
        )
    if "text" in part:
        kind = "thought" if part.get("thought") is True else "text"
        return Segment("messages", f"{role}:{kind}{mark}", str(part.get("text", "")), BLOCK_OVERHEAD)
    return Segment("messages", f"{role}:other", canonical_json(part), BLOCK_OVERHEAD)


def gemini_segments(body: JsonObject) -> list[Segment]:
    """Flatten a generateContent request: each function declaration → system instruction → each part."""
    segments: list[Segment] = []
    for tool in _list(body.get("tools")):
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for i, declaration in enumerate(_list(declarations)):
            segments.append(_tool_segment(declaration, i))
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        for part in _list(system.get("parts")):
            if isinstance(part, dict):
                segments.append(Segment("system", "system:text", str(part.get("text", "")), BLOCK_OVERHEAD))
    for index, content in enumerate(_list(body.get("contents"))):
        if not isinstance(content, dict):
            continue
        role = str(content.get("role", ""))
        parts = [_gemini_part(role, p) for p in _list(content.get("parts"))]
        segments.extend(_with_message_boundary(parts, role, index))
    return segments


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_FLATTENERS = {
    "anthropic": anthropic_segments,
    "openai-chat": chat_segments,
    "mistral": chat_segments,
    "openai-responses": responses_segments,
    "gemini": gemini_segments,
    "pi-messages": lambda body: _pi_messages_segments(body),
}


def _pi_messages_segments(body: JsonObject) -> list[Segment]:
    from ._pi_messages import pi_messages_segments  # that module imports this one

    return pi_messages_segments(body)


def segments_for(api: str, body: JsonObject) -> list[Segment]:
    """Flatten a request body of the given API (``anthropic``, ``openai-chat``, ``openai-responses``)."""
    try:
        flatten = _FLATTENERS[api]
    except KeyError:
        raise ValueError(f"unknown api {api!r}; expected one of {sorted(_FLATTENERS)}") from None
    return flatten(body)


def iter_tokens(segments: list[Segment]) -> Iterator[int]:
    for seg in segments:
        yield seg.tokens


def count_tokens(value: str | JsonObject, api: str = "anthropic") -> int:
    """Count tokens the way the fake does.

    Args:
        value: a piece of text (``ceil(len/4)``, no overhead) or a whole request body.
        api: for a body, which wire format it is: ``"anthropic"``, ``"openai-chat"``, ``"openai-responses"``
            or ``"gemini"``.

    Returns:
        The fake token count; for a body this is the prompt total the fake reports.
    """
    if isinstance(value, str):
        return text_tokens(value)
    return sum(iter_tokens(segments_for(api, value)))
