"""The body of a Bedrock ``ConverseStream`` request, as pi 0.87.1 builds it (through the AWS SDK).

- ``messages``: user turns of ``{text}`` and ``{image: {format, source: {bytes: <base64>}}}`` blocks
  (a blank text is dropped, an empty turn gets ``<empty>``); assistant turns of text, ``toolUse`` and
  ``reasoningContent`` (Claude: ``reasoningText`` with its signature, unsigned thinking as plain text;
  other models: text without signature; encrypted reasoning replayed as ``redactedContent``); all the
  tool results of a turn in one user message of ``toolResult`` blocks (``status`` success/error).
- ``system``: ``[{text}]``; ``inferenceConfig``: ``maxTokens``, ``temperature``; ``toolConfig`` with
  ``toolSpec``s (none when there are no tools), in the strict form with ``strict: true`` for tools that
  ask for constrained sampling on models whose ``compat`` has ``supportsStrictMode``.
- prompt caching for Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5 (or any model with
  ``AWS_BEDROCK_FORCE_CACHE=1``): a ``cachePoint`` after the system prompt and at the end of the last
  user message (``ttl: "1h"`` with long retention);
- thinking (Claude only) in ``additionalModelRequestFields``: ``adaptive`` with an ``output_config``
  effort on the adaptive models, else ``enabled`` with a token budget and the interleaved-thinking beta.

The model id travels in the URL, not the body; the keys are in the order pi's SDK sends them.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any

from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamOptions
from ..thinking import clamp_thinking_level, level_map
from ..types import (
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from ._history import prepare_messages, sanitize_surrogates
from ._strict_schema import strict_parameters
from ._wire_cache import ConversionCache, PrefixMemo, encode_body, json_plain

__all__ = [
    "EMPTY_TEXT",
    "build_request",
    "encode_request",
    "is_claude",
    "smithy_document",
    "supports_adaptive_thinking",
    "supports_prompt_caching",
    "text_block",
    "tool_use_id",
]

EMPTY_TEXT = "<empty>"
# Converted messages of the stored history, reused across requests (see _wire_cache).
CACHE = ConversionCache()
_MEMO = PrefixMemo()
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384, "max": 16384}
_MIN_ANSWER = 1024


class BedrockRequestError(ValueError):
    """The conversation holds something Bedrock cannot take (e.g. an image type it does not know)."""


# --- model traits -----------------------------------------------------------------------------------


def _candidates(model: Model) -> list[str]:
    values = [model.id, model.name] if model.name else [model.id]
    out = []
    for value in values:
        lower = value.lower()
        out.extend([lower, re.sub(r"[\s_.:]+", "-", lower)])
    return out


def is_claude(model: Model) -> bool:
    """An Anthropic Claude model (by id, or by name for application inference profiles)."""
    model_id, name = model.id.lower(), (model.name or "").lower()
    return any(s in model_id for s in ("anthropic.claude", "anthropic/claude")) or "claude" in name


def supports_adaptive_thinking(model: Model) -> bool:
    fragments = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "fable-5")
    return any(f in s for s in _candidates(model) for f in fragments)


def _native_xhigh(model: Model) -> bool:
    fragments = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "fable-5")
    return any(f in s for s in _candidates(model) for f in fragments)


def supports_prompt_caching(model: Model) -> bool:
    candidates = _candidates(model)
    if not any("claude" in s for s in candidates):
        return os.environ.get("AWS_BEDROCK_FORCE_CACHE") == "1"
    fragments = ("fable-5", "opus-5", "sonnet-5", "-4-", "claude-3-7-sonnet", "claude-3-5-haiku")
    return any(f in s for s in candidates for f in fragments)


def _gov_cloud(model: Model) -> bool:
    region = (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "").lower()
    model_id = model.id.lower()
    return region.startswith("us-gov-") or model_id.startswith(("us-gov.", "arn:aws-us-gov:"))


# --- thinking and limits ----------------------------------------------------------------------------


def _effort(model: Model, level: str) -> str:
    if level == "xhigh" and _native_xhigh(model):
        return "xhigh"
    mapping = level_map(model)
    mapped = mapping.get(level) if mapping is not None else None
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def _thinking_level(model: Model, options: StreamOptions) -> str | None:
    if not model.reasoning or options.thinking == "off":
        return None
    level = clamp_thinking_level(model, options.thinking)
    return None if level == "off" else level


def _limits(model: Model, options: StreamOptions) -> tuple[int, JsonObject | None]:
    """``maxTokens`` and ``additionalModelRequestFields``, as pi's ``streamSimple`` sets them."""
    base = options.max_tokens or model.max_tokens
    level = _thinking_level(model, options)
    if level is None or not is_claude(model):
        return base, None
    display = None if _gov_cloud(model) else "summarized"
    with_display = {"display": display} if display is not None else {}
    if supports_adaptive_thinking(model):
        fields: JsonObject = {
            "thinking": {"type": "adaptive", **with_display},
            "output_config": {"effort": _effort(model, level)},
        }
        return base, fields
    clamped = "high" if level in ("xhigh", "max") else level
    budget = (options.thinking_budgets or {}).get(clamped, _BUDGETS.get(level, _BUDGETS["high"]))
    max_tokens = model.max_tokens if options.max_tokens is None else min(base + budget, model.max_tokens)
    budget = min(budget, max(0, max_tokens - _MIN_ANSWER))
    fields = {
        "thinking": {"type": "enabled", "budget_tokens": budget, **with_display},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }
    return max_tokens, fields


# --- messages ---------------------------------------------------------------------------------------


def tool_use_id(call_id: str) -> str:
    """The ``toolUseId`` a tool call is sent under (characters Bedrock rejects replaced, 64 at most)."""
    return _ID_CHARS.sub("_", call_id)[:64]


def text_block(text: str) -> JsonObject | None:
    """A ``{text}`` block, or None for a blank text (Bedrock refuses those)."""
    clean = sanitize_surrogates(text)
    return {"text": clean} if clean.strip() else None


def _image(image: ImageContent) -> JsonObject:
    image_format = _IMAGE_FORMATS.get(image.mime_type)
    if image_format is None:
        raise BedrockRequestError(
            f"Bedrock cannot take images of type {image.mime_type} (jpeg, png, gif and webp only)"
        )
    return {"image": {"format": image_format, "source": {"bytes": image.data}}}


def _user(message: LlmMessage) -> JsonObject:
    content: list[JsonObject] = []
    if isinstance(message.content, str):
        content.append(text_block(message.content) or {"text": EMPTY_TEXT})
    else:
        for part in message.content:
            if isinstance(part, TextContent):
                block = text_block(part.text)
                if block is not None:
                    content.append(block)
            elif isinstance(part, ImageContent):
                content.append(_image(part))
        if not content:
            content.append({"text": EMPTY_TEXT})
    return {"role": "user", "content": content}


def _assistant(message: AssistantMessage, claude: bool) -> JsonObject | None:
    """An assistant turn; ``claude``: whether the model is a Claude model (`is_claude`), which replays
    signed reasoning."""
    blocks: list[JsonObject] = []
    for part in message.content:
        if isinstance(part, TextContent):
            block = text_block(part.text)
            if block is not None:
                blocks.append(block)
        elif isinstance(part, ToolCall):
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": tool_use_id(part.id),
                        "name": part.name,
                        "input": smithy_document(part.arguments),
                    }
                }
            )
        elif isinstance(part, ThinkingContent):
            if part.redacted:
                if part.thinking_signature:
                    blocks.append({"reasoningContent": {"redactedContent": part.thinking_signature}})
                continue
            thinking = sanitize_surrogates(part.thinking)
            if not thinking.strip():
                continue
            if not claude:
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            elif not (part.thinking_signature or "").strip():
                blocks.append({"text": thinking})
            else:
                blocks.append(
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": thinking, "signature": part.thinking_signature}
                        }
                    }
                )
    return {"role": "assistant", "content": blocks} if blocks else None


def smithy_document(value: Any) -> Any:
    """Tool arguments as a Smithy document: keys that are empty strings are dropped."""
    if isinstance(value, list):
        return [smithy_document(v) for v in value]
    if isinstance(value, dict):
        return {k: smithy_document(v) for k, v in value.items() if k}
    return value


def _tool_result(message: ToolResultMessage) -> JsonObject:
    content: list[JsonObject] = []
    for part in message.content:
        if isinstance(part, ImageContent):
            content.append(_image(part))
        elif isinstance(part, TextContent):
            block = text_block(part.text)
            if block is not None:
                content.append(block)
    if not content:
        content.append({"text": EMPTY_TEXT})
    return {
        "toolResult": {
            "toolUseId": tool_use_id(message.tool_call_id),
            "content": content,
            "status": "error" if message.is_error else "success",
        }
    }


def _cache_point(options: StreamOptions) -> JsonObject:
    point: JsonObject = {"type": "default"}
    if options.cache_retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def convert_messages(
    messages: list[LlmMessage], model: Model, options: StreamOptions
) -> list[JsonObject]:
    """``messages`` for a prepared history (`prepare_messages`), with the last cache point."""
    converter = _Converter(model, None)
    converter.feed(messages, cached=False)
    return converter.finish(model, options)


# A message's items of the body, as the conversion cache takes them (bound to their arguments with
# `functools.partial` in `_Converter.feed`, so a conversion the cache runs later sees its own message).
def _user_parts(message: LlmMessage) -> list[JsonObject]:
    return [_user(message)]


def _assistant_parts(message: AssistantMessage, claude: bool) -> list[JsonObject]:
    converted = _assistant(message, claude)
    return [] if converted is None else [converted]


def _tool_result_parts(message: ToolResultMessage) -> list[JsonObject]:
    return [{"role": "user", "content": [_tool_result(message)]}]


def _plain_turn(parts: list[JsonObject]) -> bool:
    """Whether an assistant turn holds plain JSON values only (`json_plain`): everything but a tool
    call's input is a string."""
    return all(
        json_plain(block["toolUse"]["input"])
        for part in parts
        for block in part["content"]
        if "toolUse" in block
    )


class _Converter:
    """The ``messages`` of a prepared history, as a fold that can be copied and extended (see
    `PrefixMemo`); with a cache, the stored history's messages are converted once each.

    Messages already added are never modified: a tool result joining the previous results replaces that
    message with a new one, and the cache point goes on a copy of the last message (`finish`).
    """

    __slots__ = ("claude", "cache", "key", "out")

    def __init__(self, model: Model, cache: ConversionCache | None) -> None:
        self.claude = is_claude(model)
        self.cache = cache
        self.key = (model.api, model.provider, model.id, self.claude)
        self.out: list[JsonObject] = []

    def copy(self) -> _Converter:
        twin = _Converter.__new__(_Converter)
        twin.claude, twin.cache, twin.key = self.claude, self.cache, self.key
        twin.out = list(self.out)
        return twin

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        out, cache, claude = self.out, self.cache, self.claude
        for message in messages:
            convert: Callable[[], list[JsonObject]]
            plain: bool | Callable[[list[JsonObject]], bool] = True  # texts, ids and base64 images
            if isinstance(message, AssistantMessage):
                convert, plain = functools.partial(_assistant_parts, message, claude), _plain_turn
            elif isinstance(message, ToolResultMessage):
                convert = functools.partial(_tool_result_parts, message)
            else:
                convert = functools.partial(_user_parts, message)
            parts = cache.parts(message, self.key, convert, plain) if cache is not None and cached else convert()
            if not parts:
                continue
            if isinstance(message, ToolResultMessage) and out:
                previous = out[-1]
                if previous["role"] == "user" and "toolResult" in previous["content"][-1]:
                    # one user message holds all results of a turn
                    out[-1] = {"role": "user", "content": [*previous["content"], *parts[0]["content"]]}
                    continue
            out.extend(parts)

    def finish(self, model: Model, options: StreamOptions) -> list[JsonObject]:
        """The messages, the last one (a user message) with the cache point when the model caches."""
        out = list(self.out)
        if (
            options.cache_retention != "none"
            and supports_prompt_caching(model)
            and out
            and out[-1]["role"] == "user"
        ):
            last = out[-1]
            out[-1] = {"role": "user", "content": [*last["content"], _cache_point(options)]}
        return out


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body of ``ConverseStream`` (the model id goes in the URL)."""
    if options.on_payload is not None:
        # The hook may change the body in place: it gets freshly converted messages, nothing shared.
        messages, _ = prepare_messages(list(request.messages), model, request.cache_boundary)
        wire = convert_messages(messages, model, options)
    else:
        key = (model.api, model.provider, model.id, model.name)
        converter = _MEMO.convert(model, request, key, lambda: _Converter(model, CACHE), CACHE)
        wire = converter.finish(model, options)
    if request.wire_prefix is not None:
        # The history's old part already in wire shape (a resumed session's first request): it goes
        # first; the request's messages start with a user prompt, so no results join across the cut.
        prefix = request.wire_prefix.sendable(model, options)
        wire = [*prefix, *wire]
        CACHE.lead_items, CACHE.lead_json = prefix, request.wire_prefix.json
    max_tokens, fields = _limits(model, options)
    body: JsonObject = {"messages": wire}
    if request.system_prompt:
        system: list[JsonObject] = [{"text": sanitize_surrogates(request.system_prompt)}]
        if options.cache_retention != "none" and supports_prompt_caching(model):
            system.append(_cache_point(options))
        body["system"] = system
    inference: JsonObject = {"maxTokens": max_tokens}
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    if request.tools:
        supports_strict = (model.compat or {}).get("supportsStrictMode") is True
        specs = []
        for tool in request.tools:
            strict = strict_parameters(tool, supports_strict)
            spec: JsonObject = {
                "name": tool.name,
                "description": tool.description,
                "inputSchema": {"json": strict if strict is not None else tool.parameters},
            }
            if strict is not None:
                spec["strict"] = True
            specs.append({"toolSpec": spec})
        body["toolConfig"] = {"tools": specs}
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    return body


def encode_request(body: JsonObject) -> bytes:
    """The body as sent: the stored history's messages spliced from the conversion cache
    `build_request` filled (a long history is not encoded again with every request)."""
    return encode_body(body, "messages", CACHE)
