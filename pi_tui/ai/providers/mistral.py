"""Mistral's chat API (``mistral-conversations``) over pi-tui's own wire client, as pi 0.87.1 speaks it.

``POST {baseUrl}/v1/chat/completions`` with a bearer key and a snake_case body: the system prompt as a
``system`` message, assistant turns as ``{prefix: false, content: [text | thinking], tool_calls}``, tool
results as ``tool`` messages with text and image chunks (``"[tool error] "`` in front of a failed one),
images as data-URL strings. Tool-call ids of other models are squeezed into Mistral's rule (exactly nine
letters or digits) by pi's hash, so a session moves between pi and pi-tui with the same ids.

Thinking: ``reasoning_effort`` for the models that take it (``mistral-small-latest``, ``-2603``,
``mistral-medium-*``, ``zai-glm-5-2``), ``prompt_mode: "reasoning"`` for the other reasoning models.
Streamed thinking arrives as ``{"type": "thinking", "thinking": [{"type": "text", ...}]}`` content chunks.

No retries here (pi's adapter has none): the agent's retry decides. Errors read
``Mistral API error (<status>): <body>`` as pi words them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..thinking import clamp_thinking_level, level_map
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
    END_OF_STREAM,
    MessageBuilder,
    cached_client,
    describe_error,
    http_failure,
    json_stringify,
    merged_headers,
    stream_over_http,
)
from ._history import (
    TOOL_IMAGE_PLACEHOLDER,
    USER_IMAGE_PLACEHOLDER,
    images_as_placeholders,
    prepare_messages,
    sanitize_surrogates,
    short_hash,
)
from ._openai_compat import default_max_tokens
from ._strict_schema import strict_parameters
from ._wire_cache import ConversionCache, PrefixMemo, encode_body

if TYPE_CHECKING:
    from ..wire import SseStream, WireClient

__all__ = [
    "DEFAULT_BASE_URL",
    "MistralStreamError",
    "ToolCallIds",
    "build_request",
    "convert_messages",
    "decode_event",
    "describe_mistral_error",
    "mistral_tool_call_id",
    "stream_mistral",
]

DEFAULT_BASE_URL = "https://api.mistral.ai"
PATH = "/v1/chat/completions"
TOOL_CALL_ID_LENGTH = 9  # Mistral accepts only ids of exactly nine letters and digits
_MAX_ERROR_BODY = 4000  # characters of an error body kept in the message (pi's limit)
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")
# Models that take ``reasoning_effort``; the other reasoning models take ``prompt_mode: "reasoning"``.
_EFFORT_MODELS = frozenset({"mistral-small-2603", "mistral-small-latest", "zai-glm-5-2"})
# Converted messages of the stored history, reused across requests (see _wire_cache).
_CACHE = ConversionCache()
_MEMO = PrefixMemo()


class MistralStreamError(Exception):
    """The stream sent something that is not a chat chunk (or an error object instead of one)."""


# --- tool-call ids -----------------------------------------------------------------------------------


def mistral_tool_call_id(call_id: str, attempt: int = 0) -> str:
    """pi's derivation of a nine-character id: an id that is nine letters and digits once other
    characters are dropped stays as it is; anything else is hashed (``attempt`` > 0 after a collision)."""
    normalized = _NOT_ALNUM.sub("", call_id)
    if attempt == 0 and len(normalized) == TOOL_CALL_ID_LENGTH:
        return normalized
    seed_base = normalized or call_id
    seed = seed_base if attempt == 0 else f"{seed_base}:{attempt}"
    return _NOT_ALNUM.sub("", short_hash(seed))[:TOOL_CALL_ID_LENGTH]


class ToolCallIds:
    """One request's mapping of other models' tool-call ids onto Mistral ids, without collisions."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def copy(self) -> ToolCallIds:
        twin = ToolCallIds()
        twin._ids, twin._owners = dict(self._ids), dict(self._owners)
        return twin

    def __call__(self, call_id: str) -> str:
        known = self._ids.get(call_id)
        if known is not None:
            return known
        attempt = 0
        while True:
            candidate = mistral_tool_call_id(call_id, attempt)
            owner = self._owners.get(candidate)
            if owner is None or owner == call_id:
                self._ids[call_id] = candidate
                self._owners[candidate] = call_id
                return candidate
            attempt += 1


# --- request -----------------------------------------------------------------------------------------


def _uses_effort(model: Model) -> bool:
    return model.id in _EFFORT_MODELS or model.id.startswith("mistral-medium-")


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body for ``POST /v1/chat/completions`` (streaming), keys in the order pi sends them."""
    if options.on_payload is not None:
        # The hook may change the body in place: it gets freshly converted messages, nothing shared.
        messages, _ = prepare_messages(list(request.messages), model, request.cache_boundary)
        wire = convert_messages(messages, model, request.system_prompt)
    else:
        key = (model.api, model.provider, model.id, tuple(model.input), request.system_prompt)
        fresh = lambda: _Converter(model, request.system_prompt, _CACHE)  # noqa: E731
        wire = _MEMO.convert(model, request, key, fresh, _CACHE).finish()
    if request.wire_prefix is not None:
        # The history's old part already in wire shape (a resumed session's first request), after the
        # system message; the request's messages start with a user prompt.
        prefix = request.wire_prefix.sendable(model, options)
        head = 1 if wire and wire[0]["role"] == "system" else 0
        wire = [*wire[:head], *prefix, *wire[head:]]
        _CACHE.lead_items, _CACHE.lead_json = prefix, request.wire_prefix.json
    body: JsonObject = {"model": model.id, "stream": True, "messages": wire}
    if request.tools:
        tools = []
        for tool in request.tools:
            strict = strict_parameters(tool, True)
            function = {
                "name": tool.name,
                "description": tool.description,
                "parameters": strict if strict is not None else tool.parameters,
                "strict": strict is not None,
            }
            tools.append({"type": "function", "function": function})
        body["tools"] = tools
    if options.temperature is not None:
        body["temperature"] = options.temperature
    body["max_tokens"] = options.max_tokens or default_max_tokens(model, request.messages, None)
    level = clamp_thinking_level(model, options.thinking) if options.thinking != "off" else "off"
    if model.reasoning and level != "off":
        if _uses_effort(model):
            mapped = (level_map(model) or {}).get(level)
            body["reasoning_effort"] = mapped if mapped is not None else "high"
        else:
            body["prompt_mode"] = "reasoning"
    if _caches(options):
        body["prompt_cache_key"] = options.session_id
    return body


def _caches(options: StreamOptions) -> bool:
    return options.cache_retention != "none" and bool(options.session_id)


def convert_messages(messages: list[LlmMessage], model: Model, system_prompt: str) -> list[JsonObject]:
    """Mistral chat messages from a prepared history (`prepare_messages`)."""
    converter = _Converter(model, system_prompt, None)
    converter.feed(messages, cached=False)
    return converter.finish()


class _Converter:
    """`convert_messages` as a fold that can be copied and extended (see `PrefixMemo`); with a cache, the
    stored history's messages are converted once each (messages are never modified here)."""

    __slots__ = ("model", "cache", "key", "images", "ids", "renamed", "out")

    def __init__(self, model: Model, system_prompt: str, cache: ConversionCache | None) -> None:
        self.model = model
        self.cache = cache
        self.images = "image" in model.input
        self.key = (model.api, model.provider, model.id, self.images)
        self.ids = ToolCallIds()
        self.renamed: dict[str, str] = {}  # another model's tool-call id -> the id it was sent under
        self.out: list[JsonObject] = []
        if system_prompt:
            self.out.append({"role": "system", "content": sanitize_surrogates(system_prompt)})

    def copy(self) -> _Converter:
        twin = _Converter.__new__(_Converter)
        twin.model, twin.cache, twin.key, twin.images = self.model, self.cache, self.key, self.images
        twin.ids = self.ids.copy()
        twin.renamed = dict(self.renamed)
        twin.out = list(self.out)
        return twin

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        model, images, out = self.model, self.images, self.out
        for message in messages:
            convert: Callable[[], list[JsonObject]]
            key: tuple[Any, ...] = self.key
            if isinstance(message, UserMessage):
                convert = functools.partial(_user_parts, message, images)
            elif isinstance(message, AssistantMessage):
                mapping: dict[str, str] = {}
                if (message.provider, message.api, message.model) != (model.provider, model.api, model.id):
                    for call in message.tool_calls():
                        mapping[call.id] = self.ids(call.id)
                        if mapping[call.id] != call.id:
                            self.renamed[call.id] = mapping[call.id]
                key = (*self.key, tuple(mapping.items()))
                convert = functools.partial(_assistant_parts, message, mapping)
            elif isinstance(message, ToolResultMessage):
                call_id = self.renamed.get(message.tool_call_id, message.tool_call_id)
                key = (*self.key, call_id)
                convert = functools.partial(_tool_result_parts, message, images, call_id)
            else:
                continue
            if self.cache is not None and cached:
                # Strings, booleans and integers only (a call's arguments travel as a JSON string): the
                # body's encoder writes long runs of them at once.
                out.extend(self.cache.parts(message, key, convert, plain=True))
            else:
                out.extend(convert())

    def finish(self) -> list[JsonObject]:
        return list(self.out)


def _listed(item: JsonObject | None) -> list[JsonObject]:
    return [] if item is None else [item]


# A message's items of the body, as the conversion cache takes them (bound to their arguments with
# `functools.partial` in `feed`'s loop, so a conversion the cache runs later sees its own message).
def _user_parts(message: UserMessage, images: bool) -> list[JsonObject]:
    return _listed(_user(message, images))


def _assistant_parts(message: AssistantMessage, ids: dict[str, str]) -> list[JsonObject]:
    return _listed(_assistant(message, ids))


def _tool_result_parts(message: ToolResultMessage, images: bool, call_id: str) -> list[JsonObject]:
    return [_tool_result(message, images, call_id)]


def _image_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def _user(message: UserMessage, images: bool) -> JsonObject | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    blocks = message.content if images else images_as_placeholders(message.content, USER_IMAGE_PLACEHOLDER)
    content: list[JsonObject] = []
    for block in blocks:
        if isinstance(block, TextContent):
            content.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ImageContent):
            content.append({"type": "image_url", "image_url": _image_url(block)})
    return {"role": "user", "content": content} if content else None


def _assistant(message: AssistantMessage, ids: dict[str, str]) -> JsonObject | None:
    """An assistant turn; ``ids`` maps another model's tool-call ids to the ids sent for them."""
    content: list[JsonObject] = []
    calls: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                content.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                text = {"type": "text", "text": sanitize_surrogates(block.thinking)}
                content.append({"type": "thinking", "thinking": [text]})
        elif isinstance(block, ToolCall):
            call_id = ids.get(block.id, block.id)
            function = {"name": block.name, "arguments": json_stringify(block.arguments or {})}
            calls.append({"id": call_id, "type": "function", "function": function, "index": 0})
    if not content and not calls:
        return None
    converted: JsonObject = {"role": "assistant", "prefix": False}
    if content:
        converted["content"] = content
    if calls:
        converted["tool_calls"] = calls
    return converted


def _tool_result(message: ToolResultMessage, images: bool, call_id: str) -> JsonObject:
    blocks = message.content if images else images_as_placeholders(message.content, TOOL_IMAGE_PLACEHOLDER)
    text = "\n".join(sanitize_surrogates(b.text) for b in blocks if isinstance(b, TextContent)).strip()
    has_images = any(isinstance(b, ImageContent) for b in blocks)
    prefix = "[tool error] " if message.is_error else ""
    if text:
        wording = text
    elif has_images:
        wording = "(see attached image)"
    else:
        wording = "(no tool output)"
    content: list[JsonObject] = [{"type": "text", "text": f"{prefix}{wording}"}]
    for block in blocks:
        if isinstance(block, ImageContent):
            content.append({"type": "image_url", "image_url": _image_url(block)})
    return {
        "role": "tool",
        "name": message.tool_name,
        "content": content,
        "tool_call_id": call_id,
    }


# --- client and errors -------------------------------------------------------------------------------


async def mistral_client(model: Model, options: StreamOptions) -> WireClient:
    """The cached `WireClient` for this model's base URL, key and headers."""
    from ..wire import WireClient

    api_key = options.api_key
    if not api_key:
        raise ValueError(f"No API key for provider: {model.provider} (set MISTRAL_API_KEY or use /login)")
    base_url = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    affinity = {"x-affinity": options.session_id} if _caches(options) and options.session_id else {}
    headers = merged_headers(model, options, affinity)
    wire_headers = {"accept": "text/event-stream", "authorization": f"Bearer {api_key}", **headers}
    return await cached_client(
        "mistral", base_url, api_key, headers, lambda: WireClient(base_url, wire_headers)
    )


def decode_event(event: str | None, data: str, stream: SseStream) -> Any:
    """One server-sent event: ``[DONE]`` ends the stream; a chunk must carry a ``choices`` list."""
    text = data.strip()
    if not text:
        return None
    if text == "[DONE]":
        return END_OF_STREAM
    value = json_safe.loads(text, limit=json_safe.MAX_RECORD_DEPTH)
    if isinstance(value, dict) and isinstance(value.get("choices"), list):
        return value
    if isinstance(value, dict) and (value.get("object") == "error" or "message" in value):
        # An error object in place of a chunk: keep the server's words (pi only says the event is invalid).
        raise MistralStreamError(f"Mistral stream error: {json_stringify(value)[:_MAX_ERROR_BODY]}")
    raise MistralStreamError("Invalid Mistral streaming event")


def describe_mistral_error(exc: BaseException) -> str:
    """pi's wording: ``Mistral API error (<status>): <body>`` (the body cut at 4,000 characters), plus
    the server's retry hint and, for a refused key, what to check."""
    failure = http_failure(exc)
    status = failure.status if failure is not None else None
    if failure is None or status is None or status == 200:
        return str(exc) if isinstance(exc, MistralStreamError) else describe_error(exc)
    body = failure.text.strip()
    if len(body) > _MAX_ERROR_BODY:
        body = f"{body[:_MAX_ERROR_BODY]}... [truncated {len(body) - _MAX_ERROR_BODY} chars]"
    text = f"Mistral API error ({status}): {body or 'Request failed with status ' + str(status)}"
    if status in (401, 403):
        text += " (check MISTRAL_API_KEY or the key stored for mistral in auth.json)"
    elif status == 404:
        text += " (check the model id and the provider's baseUrl in models.json)"
    elif status == 429:
        text += " (mistral's rate limit or quota reached; wait and retry, or check the plan's limits)"
    elif status >= 500:
        text += " (mistral's server failed; retrying may help)"
    wait = failure.retry_after_ms()
    if wait is not None:
        text += f" (retry after {wait} ms)"
    return text


# --- response ----------------------------------------------------------------------------------------


def _stop_reason(reason: str) -> tuple[StopReason, str | None]:
    if reason == "stop":
        return "stop", None
    if reason in ("length", "model_length"):
        return "length", None
    if reason == "tool_calls":
        return "toolUse", None
    return "error", f"Provider stopped with: {reason}"


def _cached_tokens(usage: JsonObject, prompt: int) -> int:
    """Cached prompt tokens from whichever field this server version uses (pi reads all of them)."""
    for outer, inner in (
        ("promptTokensDetails", "cachedTokens"),
        ("prompt_tokens_details", "cached_tokens"),
        ("promptTokenDetails", "cachedTokens"),
        ("prompt_token_details", "cached_tokens"),
    ):
        details = usage.get(outer)
        if isinstance(details, dict) and details.get(inner) is not None:
            value = details[inner]
            break
    else:
        value = usage.get("numCachedTokens", usage.get("num_cached_tokens", 0))
    cached = value if isinstance(value, int | float) and not isinstance(value, bool) else 0
    return int(min(prompt, max(0, cached)))


class _Reader:
    """Chat chunks → normalised events, in pi's order: text and thinking blocks end when another kind
    starts (or a tool call arrives); tool calls end together when the stream is over."""

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.current: tuple[str, int] | None = None
        self.tools: dict[Any, int] = {}  # tool-call index (or id) -> content index
        self.stop: tuple[StopReason, str | None] | None = None

    def handle(self, chunk: JsonObject) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        message = self.out.message
        if not message.response_id and isinstance(chunk.get("id"), str) and chunk["id"]:
            message.response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            prompt = usage.get("prompt_tokens") or 0
            cached = _cached_tokens(usage, prompt)
            self.out.set_usage(
                input=max(0, prompt - cached),
                output=usage.get("completion_tokens") or 0,
                cache_read=cached,
                cache_write=0,
            )
        choices = chunk["choices"]
        choice = choices[0] if choices and isinstance(choices[0], dict) else None
        if choice is None:
            return events
        reason = choice.get("finish_reason")
        if reason:
            message.raw_stop_reason = str(reason)
            self.stop = _stop_reason(str(reason))
        raw_delta = choice.get("delta")
        delta: JsonObject = raw_delta if isinstance(raw_delta, dict) else {}
        content = delta.get("content")
        if content is not None:
            for item in (
                [content] if isinstance(content, str) else content if isinstance(content, list) else []
            ):
                self._content(item, events)
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                self._tool_call(call, events)
        return events

    def _content(self, item: Any, events: list[StreamEvent]) -> None:
        if isinstance(item, str):
            self._append("text", sanitize_surrogates(item), events)
        elif isinstance(item, dict) and item.get("type") == "thinking":
            parts = item.get("thinking") or []
            text = "".join(p.get("text") or "" for p in parts if isinstance(p, dict))
            if text:
                self._append("thinking", sanitize_surrogates(text), events)
        elif isinstance(item, dict) and item.get("type") == "text":
            self._append("text", sanitize_surrogates(str(item.get("text") or "")), events)

    def _append(self, kind: str, delta: str, events: list[StreamEvent]) -> None:
        if self.current is None or self.current[0] != kind:
            self._end_current(events)
            index, start = self.out.begin_text() if kind == "text" else self.out.begin_thinking()
            events.append(start)
            self.current = (kind, index)
        index = self.current[1]
        events.append(
            self.out.text_delta(index, delta) if kind == "text" else self.out.thinking_delta(index, delta)
        )

    def _end_current(self, events: list[StreamEvent]) -> None:
        if self.current is None:
            return
        kind, index = self.current
        events.append(self.out.end_text(index) if kind == "text" else self.out.end_thinking(index))
        self.current = None

    def _tool_call(self, call: JsonObject, events: list[StreamEvent]) -> None:
        self._end_current(events)
        raw_id = call.get("id")
        position = call.get("index")
        if isinstance(raw_id, str) and raw_id and raw_id != "null":
            call_id = raw_id
        else:
            call_id = mistral_tool_call_id(f"toolcall:{position if position is not None else 0}")
        key = position if position is not None else call_id
        raw_function = call.get("function")
        function: JsonObject = raw_function if isinstance(raw_function, dict) else {}
        if key not in self.tools:
            index, start = self.out.begin_tool_call(call_id, str(function.get("name") or ""))
            self.tools[key] = index
            events.append(start)
        arguments = function.get("arguments")
        fragment = arguments if isinstance(arguments, str) else json_stringify(arguments or {})
        events.append(self.out.tool_call_delta(self.tools[key], fragment))

    def result(self) -> tuple[StopReason, str | None]:
        if self.stop is None:
            raise MistralStreamError("Mistral stream ended without a finish reason")
        return self.stop

    def close_blocks(self) -> list[StreamEvent]:
        """End the open text/thinking block, then every tool call (pi does so after the last chunk)."""
        events: list[StreamEvent] = []
        self._end_current(events)
        for index in self.tools.values():
            events.append(self.out.end_tool_call(index))
        return events


def _encode(body: JsonObject) -> bytes:
    """Compact JSON in pi's key order, the stored history's messages spliced from the conversion cache
    `build_request` filled (a long history is not encoded again with every request)."""
    return encode_body(body, "messages", _CACHE, keep_order=True)


def _close_blocks(reader: _Reader) -> list[StreamEvent]:
    return reader.close_blocks()


async def stream_mistral(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from Mistral's chat API. Never raises: failures end with an `Error` event."""
    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=build_request,
        get_client=mistral_client,
        path=PATH,
        decode=decode_event,
        make_reader=_Reader,
        encode=_encode,
        describe=describe_mistral_error,
        close_blocks=_close_blocks,
    ):
        yield event
