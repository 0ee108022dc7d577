"""Anthropic Messages API (``anthropic-messages``) over pi-tui's own wire client (`pi_tui.ai.wire`).

Request building (`build_request`) is pure so tests can check cache markers, thinking and message
conversion without a server; `stream_anthropic` sends it and normalises the SSE events. Events are
decoded as the ``anthropic`` SDK decodes them (`decode_event`); tests hold the SDK up as the oracle.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..types import (
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._common import (
    IncompleteStreamError,
    MessageBuilder,
    cached_client,
    merged_headers,
    stream_over_http,
)
from ._error_hints import describe_with_hint
from ._history import prepare_messages, sanitize_surrogates
from ._openai_compat import capped_max_tokens, context_room
from ._strict_schema import strict_parameters
from ._wire_cache import ConversionCache, PrefixMemo, encode_body, json_plain

if TYPE_CHECKING:
    from ..wire import SseStream, WireClient

__all__ = [
    "DEFAULT_BASE_URL",
    "THINKING_BUDGETS",
    "build_request",
    "convert_messages",
    "decode_event",
    "map_stop_reason",
    "stream_anthropic",
    "uses_adaptive_thinking",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_MIN_BUDGET = 1024
_FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"


def request_betas(model: Model, request: LlmRequest, options: StreamOptions) -> str | None:
    """The ``anthropic-beta`` features pi 0.87.1 asks for (None: no header): fine-grained tool streaming
    when tools go to a model whose compat turns off eager input streaming (Fireworks, GitHub Copilot), and
    interleaved thinking when thinking is on, unless the model is forced to adaptive thinking (Kimi For
    Coding). A configured ``anthropic-beta`` header replaces the list, as in pi."""
    compat = model.compat or {}
    features = []
    if request.tools and compat.get("supportsEagerToolInputStreaming", True) is False:
        features.append(_FINE_GRAINED_TOOL_STREAMING)
    if model.reasoning and options.thinking != "off" and compat.get("forceAdaptiveThinking") is not True:
        features.append(_INTERLEAVED_THINKING)
    return ",".join(features) or None


def affinity_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """pi's session-affinity header, for the providers whose compat asks for it (OpenRouter by default,
    Fireworks, Cloudflare's gateway): ``x-session-id`` in OpenRouter's format, else ``x-session-affinity``;
    none when caching is off."""
    compat = model.compat or {}
    is_openrouter = model.provider == "openrouter" or "openrouter.ai" in (model.base_url or "")
    if not options.session_id or options.cache_retention == "none":
        return {}
    if not compat.get("sendSessionAffinityHeaders", is_openrouter):
        return {}
    style = compat.get("sessionAffinityFormat") or ("openrouter" if is_openrouter else None)
    return {"x-session-id" if style == "openrouter" else "x-session-affinity": options.session_id}


API_VERSION = "2023-06-01"
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_VALID_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_MARKABLE = frozenset({"text", "image", "document", "tool_result", "tool_use"})
_MAX_MARKERS = 4
# Converted blocks of the stored history, reused across requests (see _wire_cache).
_CACHE = ConversionCache()
_MEMO = PrefixMemo()


# --- request ---------------------------------------------------------------------------------------


def cache_control_for(model: Model, retention: str) -> dict[str, str] | None:
    """The marker to place, or None when caching is off. A 1-hour TTL for long retention where the model's
    compat allows it (``supportsLongCacheRetention``, true unless set false: Fireworks), as pi 0.87.1."""
    if retention == "none":
        return None
    control = {"type": "ephemeral"}
    if retention == "long" and (model.compat or {}).get("supportsLongCacheRetention", True) is not False:
        control["ttl"] = "1h"
    return control


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body for ``POST /v1/messages`` (streaming)."""
    control = cache_control_for(model, options.cache_retention)
    prefix = _wire_prefix(request, model, options)
    if options.on_payload is not None:
        # The hook may change the body in place: it gets freshly converted blocks, nothing shared.
        messages, boundary = prepare_messages(list(request.messages), model, request.cache_boundary)
        wire = convert_messages(messages, model, boundary, control)
        message_markers = sum(
            "cache_control" in b for m in wire if isinstance(m["content"], list) for b in m["content"]
        )
    else:
        key = (model.api, model.provider, model.id, tuple(model.input))
        converter = _MEMO.convert(model, request, key, lambda: _Converter(model, _CACHE), _CACHE)
        wire = converter.finish(control)
        message_markers = int(control is not None and converter.marker is not None)
    if prefix is not None and request.wire_prefix is not None:
        wire = [*prefix, *wire]  # the request's messages start with a user prompt: nothing to join
        _CACHE.lead_items, _CACHE.lead_json = prefix, request.wire_prefix.json
    body: JsonObject = {"model": model.id, "messages": wire}
    if request.system_prompt.strip():
        system_block: JsonObject = {"type": "text", "text": sanitize_surrogates(request.system_prompt)}
        if control:
            system_block["cache_control"] = dict(control)
        body["system"] = [system_block]
    if request.tools:
        # ``eager_input_streaming`` as pi 0.87 sends it (unless the model's compat opts out): it is part
        # of the cached tool prefix, so a session moving between pi and pi-tui keeps its cache.
        compat = model.compat or {}
        eager = compat.get("supportsEagerToolInputStreaming", True) is not False
        # Tools that ask for constrained sampling (read, bash, edit, write) go strict, with the strict
        # schema, on models whose compat says supportsStrictTools (Anthropic's own), as pi sends them.
        supports_strict = compat.get("supportsStrictTools", False) is True
        body["tools"] = []
        for t in request.tools:
            strict = strict_parameters(t, supports_strict)
            tool: JsonObject = {"name": t.name, "description": t.description}
            if eager:
                tool["eager_input_streaming"] = True
            if strict is not None:
                tool["strict"] = True
                strict["properties"] = strict.get("properties", {})
                strict["required"] = strict.get("required", [])
            tool["input_schema"] = strict if strict is not None else t.parameters
            body["tools"].append(tool)
        # A breakpoint on the last tool, as pi puts it (unless the model's compat says the server refuses
        # cache_control on tools): the tools come first in the cached prefix.
        if control and compat.get("supportsCacheControlOnTools", True) is not False:
            body["tools"][-1]["cache_control"] = dict(control)
    markers = (
        sum("cache_control" in b for b in body.get("system", []))
        + sum("cache_control" in t for t in body.get("tools", []))
        + message_markers
    )
    if markers > _MAX_MARKERS:  # a tool, a system block and a message block today; a guard for later
        raise ValueError(f"too many cache_control markers: {markers} > {_MAX_MARKERS}")
    # pi's cap: the requested one or the model's maximum, cut to the room the context window leaves
    # (its estimate of instructions, tools and history, minus 4,096)
    estimated_tools = [
        {"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools
    ]
    room = context_room(model, request.messages, request.system_prompt, estimated_tools, _MEMO.newest_before)
    base = capped_max_tokens(options.max_tokens or model.max_tokens, room)
    body["max_tokens"] = base
    thinking_on = model.reasoning and options.thinking != "off"
    if thinking_on:
        # the catalog's forceAdaptiveThinking (Kimi For Coding, …) as well as Claude 4.6+ by id
        if uses_adaptive_thinking(model.id) or (model.compat or {}).get("forceAdaptiveThinking") is True:
            # "summarized", as pi sends it: Opus 4.7+ would otherwise return no thinking text at all
            body["thinking"] = {"type": "adaptive", "display": "summarized"}
            mapped = (model.thinking_level_map or {}).get(options.thinking)
            effort = mapped if isinstance(mapped, str) else _adaptive_effort(model.id, options.thinking)
            body["output_config"] = {"effort": effort}
        else:
            budgets = {**THINKING_BUDGETS, **(options.thinking_budgets or {})}
            level = options.thinking if options.thinking in budgets else "high"
            budget = budgets[level]
            # pi widens the cap by the budget (up to the model's maximum), then cuts it to the window again
            wanted = min(base + budget, model.max_tokens)
            max_tokens = capped_max_tokens(wanted, room)
            budget = min(budget, max(0, max_tokens - _MIN_BUDGET))  # the answer keeps 1,024 tokens
            if budget >= _MIN_BUDGET:
                body["max_tokens"] = max_tokens
                body["thinking"] = {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
            else:
                thinking_on = False
    elif model.reasoning and (model.thinking_level_map or {}).get("off", "") is not None:
        # thinking off on a model that can think is said out loud, as pi says it (unless the model's
        # thinkingLevelMap marks "off" as unsupported with null)
        body["thinking"] = {"type": "disabled"}
    if options.temperature is not None and not thinking_on:  # the API rejects temperature with thinking
        body["temperature"] = options.temperature
    body["stream"] = True
    return body


def _wire_prefix(request: LlmRequest, model: Model, options: StreamOptions) -> list[Any] | None:
    """The request's history already in wire shape (`LlmRequest.wire_prefix`), checked to be this API's."""
    prefix = request.wire_prefix
    return None if prefix is None else prefix.sendable(model, options)


_CLAUDE_VERSION = re.compile(r"claude-([a-z]+)-(\d+)(?:[-.](\d{1,2}))?(?!\d)")


def uses_adaptive_thinking(model_id: str) -> bool:
    """Opus/Sonnet 4.6 and every 4.7+ or 5.x model take ``thinking: adaptive`` plus an effort."""
    match = _CLAUDE_VERSION.search(model_id)
    if not match:
        return False
    family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    if major >= 5 or (major == 4 and minor >= 7):
        return True
    return major == 4 and minor == 6 and family in ("opus", "sonnet")


def _adaptive_effort(model_id: str, level: str) -> str:
    if level in ("minimal", "low"):
        return "low"
    if level == "xhigh":
        return "max" if "opus" in model_id else "high"
    return level


def convert_messages(
    messages: list[LlmMessage],
    model: Model,
    boundary: int,
    control: dict[str, str] | None,
    cache: ConversionCache | None = None,
) -> list[JsonObject]:
    """Anthropic messages, with one cache marker on the last block of the cached region.

    ``messages`` must already be prepared (`prepare_messages`), so tool results always follow their
    assistant turn. Consecutive tool results become the ``tool_result`` blocks of one user message; every
    other message is its own wire message, even next to one of the same role (a branch summary and the
    next prompt are two user messages). That is pi's wire shape: the API joins same-role neighbours
    itself, and matching pi byte for byte keeps a session's prompt cache when it moves between pi and
    pi-tui. With ``cache``, the blocks of the cached region are converted once per message object and
    shared between requests (never modified here).
    """
    converter = _Converter(model, cache)
    converter.feed(messages[:boundary], cached=True)
    converter.feed(messages[boundary:], cached=False)
    return converter.finish(control)


class _Converter:
    """`convert_messages` as a fold that can be copied and extended (wire messages are never modified
    in place once added: adding a tool result to the previous ones replaces that message)."""

    __slots__ = ("model", "cache", "allow_empty_signature", "key", "out", "marker")

    def __init__(self, model: Model, cache: ConversionCache | None) -> None:
        self.model = model
        self.cache = cache
        self.allow_empty_signature = _allow_empty_signature(model)
        self.key = (model.api, model.provider, model.id, "image" in model.input, self.allow_empty_signature)
        self.out: list[JsonObject] = []
        # (index in out, block); block None marks a message whose content is a plain string
        self.marker: tuple[int, JsonObject | None] | None = None

    def copy(self) -> _Converter:
        twin = _Converter(self.model, self.cache)
        twin.out = list(self.out)
        twin.marker = self.marker
        return twin

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        out, cache, key = self.out, self.cache, self.key
        use_cache = cache is not None and cached
        convert = self._convert
        touched: list[int] = []  # the wire messages this call added or extended, for the marker
        for message in messages:
            if isinstance(message, AssistantMessage):
                role = "assistant"
            else:
                role = "user"
                if isinstance(message, UserMessage) and isinstance(message.content, str):
                    # pi sends a plain-string prompt as a string, not as a one-block list.
                    text = sanitize_surrogates(message.content)
                    if text.strip():
                        out.append({"role": role, "content": text})
                        touched.append(len(out) - 1)
                    continue
            if use_cache:
                # The cached wire message itself (its JSON known to the encoder), shared between requests.
                wire = cache.message(message, key, role, convert, _plain_blocks)  # type: ignore[union-attr]
                blocks = wire["content"]
            else:
                blocks = convert(message)
                wire = {"role": role, "content": blocks}
            if not blocks:
                continue
            if isinstance(message, ToolResultMessage) and out and _is_tool_results(out[-1]):
                # Consecutive tool results share one user message, as pi sends them.
                out[-1] = {"role": role, "content": out[-1]["content"] + blocks}
            else:
                out.append(wire)
            touched.append(len(out) - 1)
        if cached:
            self._place_marker(touched)

    def _convert(self, message: LlmMessage) -> list[JsonObject]:
        return _blocks(message, self.model, self.allow_empty_signature)

    def _place_marker(self, touched: list[int]) -> None:
        """The cached region's breakpoint: the last markable block of the last wire message this call
        touched that has one (a plain-string prompt counts: it is sent as one marked text block)."""
        out = self.out
        for index in reversed(touched):
            content = out[index]["content"]
            if isinstance(content, str):
                self.marker = (index, None)
                return
            block = next((b for b in reversed(content) if b["type"] in _MARKABLE), None)
            if block is not None:
                self.marker = (index, block)
                return

    def finish(self, control: dict[str, str] | None) -> list[JsonObject]:
        out = list(self.out)
        if control is not None and self.marker is not None:
            # A marked copy in a copied list: the original block may be shared with later requests.
            index, block = self.marker
            if block is None:  # a string can carry no marker: pi sends it as one marked text block
                content = [{"type": "text", "text": out[index]["content"], "cache_control": dict(control)}]
            else:
                content = list(out[index]["content"])
                position = next(n for n, b in enumerate(content) if b is block)
                content[position] = {**block, "cache_control": dict(control)}
            out[index] = {**out[index], "content": content}
        return out


def _plain_blocks(blocks: list[JsonObject]) -> bool:
    """Whether these blocks hold plain JSON values only (`json_plain`): every field the conversion
    writes is a string or a boolean, except a tool call's input, which is the model's JSON."""
    for block in blocks:
        if block["type"] == "tool_use" and not json_plain(block["input"]):
            return False
    return True


def _is_tool_results(wire: JsonObject) -> bool:
    content = wire["content"]
    return wire["role"] == "user" and isinstance(content, list) and content[0]["type"] == "tool_result"


def _blocks(message: LlmMessage, model: Model, allow_empty_signature: bool) -> list[JsonObject]:
    if isinstance(message, AssistantMessage):
        return _assistant_blocks(message, allow_empty_signature)
    if isinstance(message, ToolResultMessage):
        return [_tool_result_block(message, model)]
    return _user_blocks(message, model)


def _user_blocks(message: UserMessage, model: Model) -> list[JsonObject]:
    content = message.content
    if isinstance(content, str):  # `_Converter.feed` sends plain strings itself; here for completeness
        return [{"type": "text", "text": sanitize_surrogates(content)}] if content.strip() else []
    blocks = [_content_block(part) for part in content]
    return [b for b in blocks if b["type"] != "text" or b["text"].strip()]


def _content_block(part: TextContent | ImageContent) -> JsonObject:
    if isinstance(part, TextContent):
        return {"type": "text", "text": sanitize_surrogates(part.text)}
    return {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}


def _allow_empty_signature(model: Model) -> bool:
    """Some Anthropic-compatible servers take thinking with an empty signature (``compat.allowEmptySignature``)."""
    return (model.compat or {}).get("allowEmptySignature") is True


def _assistant_blocks(message: AssistantMessage, allow_empty_signature: bool = False) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for part in message.content:
        if isinstance(part, TextContent):
            if part.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(part.text)})
        elif isinstance(part, ThinkingContent):
            signature = part.thinking_signature
            if part.redacted:
                if signature:  # without its payload the block means nothing to the API
                    blocks.append({"type": "redacted_thinking", "data": signature})
            elif signature and signature.strip():
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": sanitize_surrogates(part.thinking),
                        "signature": signature,
                    }
                )
            elif part.thinking.strip():
                # Without a signature the API would reject it as thinking (unless the server allows an
                # empty one); the words still matter.
                thought = sanitize_surrogates(part.thinking)
                if allow_empty_signature:
                    blocks.append({"type": "thinking", "thinking": thought, "signature": ""})
                else:
                    blocks.append({"type": "text", "text": thought})
        elif isinstance(part, ToolCall):
            blocks.append(
                {"type": "tool_use", "id": tool_use_id(part.id), "name": part.name, "input": part.arguments}
            )
    return blocks


def tool_use_id(call_id: str) -> str:
    """A tool-call id as the Messages API accepts it (``[a-zA-Z0-9_-]``, at most 64 characters), made the
    way pi makes it (other characters become ``_``, then the first 64 are kept); valid ids are unchanged."""
    if _VALID_ID.fullmatch(call_id):  # the usual id: a match costs half of a substitution
        return call_id
    return _ID_CHARS.sub("_", call_id)[:64]


def _tool_result_block(message: ToolResultMessage, model: Model) -> JsonObject:
    """pi's ``tool_result``: the text blocks joined with newlines as one string when there is no image,
    else a block list (led by a placeholder text when it holds only images); ``is_error`` always set."""
    parts = message.content
    content: str | list[JsonObject]
    if len(parts) == 1 and isinstance(parts[0], TextContent):  # the usual result: one text
        content = sanitize_surrogates(parts[0].text)
    elif not any(isinstance(part, ImageContent) for part in parts):
        content = sanitize_surrogates("\n".join(part.text for part in parts if isinstance(part, TextContent)))
    else:
        content = [_content_block(part) for part in parts]
        if not any(block["type"] == "text" for block in content):
            content.insert(0, {"type": "text", "text": "(see attached image)"})
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id(message.tool_call_id),
        "content": content,
        "is_error": bool(message.is_error),
    }


# --- response --------------------------------------------------------------------------------------


def map_stop_reason(reason: str) -> tuple[StopReason, str | None]:
    """Anthropic's stop reason → ours, plus an error text for the ones that are failures."""
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason in ("refusal", "sensitive"):
        return "error", f"The model declined to answer (stop_reason: {reason})"
    if reason == "model_context_window_exceeded":
        return "error", "model_context_window_exceeded: the answer ran into the model's context window"
    return "error", f"Unhandled stop reason: {reason}"


class _Reader:
    """Turns raw Messages SSE events (JSON objects) into normalised events on a `MessageBuilder`."""

    def __init__(self, out: MessageBuilder, tool_names: dict[str, str] | None = None) -> None:
        self.out = out
        self.tool_names = tool_names  # subscription mode: Claude Code's name (lower-cased) -> ours
        self.blocks: dict[int, tuple[str, int]] = {}  # Anthropic block index -> (kind, our content index)
        self.stop_reason: str | None = None
        self.stopped = False

    def handle(self, event: JsonObject) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event["index"], event.get("delta") or {})
        if kind == "message_start":
            started = event.get("message") or {}
            if isinstance(started.get("id"), str):
                self.out.message.response_id = started["id"]
            self._usage(started.get("usage"))
            # pi records the 1-hour part of the cache writes from the start event, 0 when not split
            self.out.message.usage.cache_write_1h = self.out.cache_write_1h
        elif kind == "content_block_start":
            return self._start(event["index"], event.get("content_block") or {})
        elif kind == "content_block_stop":
            return self._stop(event["index"])
        elif kind == "message_delta":
            reason = (event.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop_reason = reason
                self.out.message.raw_stop_reason = str(reason)
            self._usage(event.get("usage"))
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _usage(self, usage: JsonObject | None) -> None:
        if not usage:
            return
        split = usage.get("cache_creation")
        long_writes = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else None
        if long_writes is not None:  # before set_usage, which prices the counts
            self.out.cache_write_1h = long_writes
        # Later events repeat the counts cumulatively; proxies sometimes send nulls, which keep the old value.
        # Thinking tokens are a part of the output, kept only when the API says how many (as pi).
        output_details = usage.get("output_tokens_details")
        self.out.set_usage(
            input=usage.get("input_tokens"),
            output=usage.get("output_tokens"),
            cache_read=usage.get("cache_read_input_tokens"),
            cache_write=usage.get("cache_creation_input_tokens"),
            reasoning=output_details.get("thinking_tokens") if isinstance(output_details, dict) else None,
        )

    def _start(self, index: int, block: JsonObject) -> list[StreamEvent]:
        kind = block.get("type")
        event: StreamEvent
        if kind == "text":
            ours, event = self.out.begin_text()
            self.blocks[index] = ("text", ours)
            events: list[StreamEvent] = [event]
            if block.get("text"):
                events.append(self.out.text_delta(ours, block["text"]))
            return events
        if kind == "thinking":
            ours, event = self.out.begin_thinking()
            self.blocks[index] = ("thinking", ours)
            return [event]
        if kind == "redacted_thinking":
            ours, event = self.out.begin_thinking(signature=block.get("data") or "", redacted=True)
            self.out.thinking(ours).thinking = "[Reasoning redacted]"
            self.blocks[index] = ("thinking", ours)
            return [event]
        if kind == "tool_use":
            name = block["name"]
            if self.tool_names:
                name = self.tool_names.get(name.lower(), name)
            ours, event = self.out.begin_tool_call(block["id"], name)
            self.blocks[index] = ("tool", ours)
            return [event]
        self.blocks[index] = ("skip", -1)  # server tools, citations etc.: not part of our message
        return []

    def _delta(self, index: int, delta: JsonObject) -> list[StreamEvent]:
        kind, ours = self.blocks.get(index, ("skip", -1))
        delta_type = delta.get("type")
        if kind == "text" and delta_type == "text_delta":
            return [self.out.text_delta(ours, delta["text"])]
        if kind == "tool" and delta_type == "input_json_delta":
            # every fragment is an event, the empty one each call opens with too, as pi streams them
            return [self.out.tool_call_delta(ours, delta.get("partial_json") or "")]
        elif kind == "thinking" and delta_type == "thinking_delta":
            return [self.out.thinking_delta(ours, delta["thinking"])]
        elif kind == "thinking" and delta_type == "signature_delta":
            block = self.out.thinking(ours)
            block.thinking_signature = (block.thinking_signature or "") + delta["signature"]
        return []

    def _stop(self, index: int) -> list[StreamEvent]:
        kind, ours = self.blocks.get(index, ("skip", -1))
        if kind == "text":
            return [self.out.end_text(ours)]
        if kind == "thinking":
            return [self.out.end_thinking(ours)]
        if kind == "tool":
            return [self.out.end_tool_call(ours)]
        return []

    def result(self) -> tuple[StopReason, str | None]:
        if not self.stopped or self.stop_reason is None:
            raise IncompleteStreamError()
        return map_stop_reason(self.stop_reason)


def decode_event(event: str | None, data: str, stream: SseStream) -> JsonObject | None:
    """One Messages server-sent event as the SDK reads it: ``ping`` and unnamed events are skipped, an
    ``error`` event (which arrives after an HTTP 200) raises `HttpStatusError` with status 200."""
    if event == "ping" or event is None:
        return None
    if event == "error":
        from ..wire import HttpStatusError

        body: Any = data
        try:
            body = json_safe.loads(data, limit=json_safe.MAX_RECORD_DEPTH)
            message = f"{body}"
        except ValueError:
            message = data or "Error code: 200"
        raise HttpStatusError(message, status_code=200, body=body, response=stream.response)
    if not data:
        return None
    value: JsonObject = json_safe.loads(data, limit=json_safe.MAX_RECORD_DEPTH)
    return value


async def _client(model: Model, options: StreamOptions, betas: str | None = None) -> WireClient:
    from ..wire import WireClient

    base_url = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    if base_url.endswith("/v1"):  # the path below starts with /v1 itself
        base_url = base_url[:-3]
    api_key = options.api_key
    if not api_key:
        raise ValueError(
            f"No API key for provider '{model.provider}': set it in auth.json, the environment or --api-key"
        )
    subscription = is_oauth_token(api_key)
    base = {"anthropic-beta": betas} if betas else {}
    if not subscription:  # a subscription request carries Claude Code's headers only, as in pi
        base.update(affinity_headers(model, options))
    headers = merged_headers(model, options, base)
    auth: dict[str, str | None]
    if subscription:
        auth = _subscription_headers(api_key, headers)
    elif any(name.lower() == "authorization" and value is not None for name, value in headers.items()):
        auth = dict(headers)  # the header carries the credential (a Kimi Code login), as pi allows
    elif model.provider == "github-copilot":
        auth = {"authorization": f"Bearer {api_key}", **headers}  # Copilot takes its token as Bearer
    else:
        auth = {"x-api-key": api_key, **headers}
    wire_headers = {"accept": "application/json", "anthropic-version": API_VERSION, **auth}
    return await cached_client(
        "anthropic", base_url, api_key, headers, lambda: WireClient(base_url, wire_headers)
    )


async def stream_anthropic(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from the Messages API. Never raises: failures end with an `Error` event.

    With a Claude subscription token as the key, the request is made as Claude Code makes it
    (`pi_tui.ai.providers.anthropic_oauth`).
    """
    subscription = is_oauth_token(options.api_key)
    names = {t.name.lower(): t.name for t in request.tools} if subscription else None
    betas = request_betas(model, request, options)

    async def get_client(model: Model, options: StreamOptions) -> WireClient:
        return await _client(model, options, betas)

    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=_build_subscription_request if subscription else build_request,
        get_client=get_client,
        path="/v1/messages",
        decode=decode_event,
        make_reader=lambda out: _Reader(out, names),
        encode=_encode,
        describe=describe_with_hint(model),
        provider_retries=True,
    ):
        yield event


def is_oauth_token(api_key: str | None) -> bool:
    """Whether ``api_key`` is a Claude subscription token (pi's test: it contains ``sk-ant-oat``)."""
    return bool(api_key) and "sk-ant-oat" in (api_key or "")


def _build_subscription_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    from .anthropic_oauth import oauth_body  # only subscription requests need it

    return oauth_body(build_request(model, request, options))


def _subscription_headers(api_key: str, headers: dict[str, str | None]) -> dict[str, str | None]:
    from .anthropic_oauth import oauth_headers

    return oauth_headers(api_key, headers)


def _encode(body: JsonObject) -> bytes:
    return encode_body(body, "messages", _CACHE)
