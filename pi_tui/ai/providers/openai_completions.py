"""OpenAI Chat Completions (``openai-completions``) over pi-tui's own wire client (`pi_tui.ai.wire`).

Also serves OpenAI-compatible servers (llama.cpp, vLLM, DeepSeek, ...); their quirks are switched on by
``model.compat`` using pi's flag names (`resolve_compat`).
"""

from __future__ import annotations

import json
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
    END_OF_STREAM,
    IncompleteStreamError,
    MessageBuilder,
    cached_client,
    json_stringify,
    merged_headers,
    stream_over_http,
)
from ._error_hints import describe_with_hint
from ._history import prepare_messages, sanitize_surrogates, short_hash
from ._openai_compat import (
    add_thinking,
    affinity_headers,
    apply_cache_control,
    cache_control,
    default_max_tokens,
    resolve_compat,
    routing_fields,
)
from ._strict_schema import strict_parameters
from ._wire_cache import ConversionCache, PrefixMemo, encode_body

if TYPE_CHECKING:
    from ..wire import SseStream, WireClient

__all__ = [
    "DEFAULT_BASE_URL",
    "REASONING_FIELDS",
    "foreign_call_id",
    "build_request",
    "convert_messages",
    "decode_event",
    "normalize_usage",
    "openai_client",
    "resolve_compat",
    "stream_openai_completions",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Where compatible servers put reasoning text in a delta; the first non-empty one wins.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_TOOL_ID_MAX = 40  # OpenAI rejects longer tool_call ids
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
# Converted messages of the stored history, reused across requests (see _wire_cache).
_CACHE = ConversionCache()
_MEMO = PrefixMemo()


async def openai_client(model: Model, options: StreamOptions) -> WireClient:
    """The cached `WireClient` for this model's base URL, key and headers (no retries: the agent retries)."""
    from ..wire import WireClient

    base_url = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    api_key = options.api_key
    if not api_key:
        raise ValueError(
            f"No API key for provider '{model.provider}': set it in auth.json, the environment or --api-key"
        )
    # session affinity (OpenRouter's x-session-id, ...) first: the model's and the call's headers win
    affinity = affinity_headers(resolve_compat(model), options.session_id)
    headers = merged_headers(model, options, affinity)
    wire_headers = {"accept": "application/json", "authorization": f"Bearer {api_key}", **headers}
    return await cached_client(
        "openai", base_url, api_key, headers, lambda: WireClient(base_url, wire_headers)
    )


def decode_event(event: str | None, data: str, stream: SseStream) -> Any:
    """One server-sent event of Chat Completions or Responses, as the ``openai`` SDK reads it.

    ``[DONE]`` ends the stream; a JSON object with a truthy ``error`` raises `HttpStatusError` (no status:
    the HTTP answer itself was a 200), anything else is the event.
    """
    if data.startswith("[DONE]"):
        return END_OF_STREAM
    value = json_safe.loads(data, limit=json_safe.MAX_RECORD_DEPTH)
    if isinstance(value, dict) and value.get("error"):
        from ..wire import HttpStatusError

        error = value["error"]
        message = error.get("message") if isinstance(error, dict) else None
        if not message or not isinstance(message, str):
            message = "An error occurred during streaming"
        raise HttpStatusError(message, status_code=None, body=error, response=stream.response)
    return value


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body for ``POST /chat/completions`` (streaming)."""
    compat = resolve_compat(model)
    prefix = request.wire_prefix.sendable(model, options) if request.wire_prefix is not None else None
    if options.on_payload is not None:
        # The hook may change the body in place: it gets freshly converted messages, nothing shared.
        messages, boundary = prepare_messages(list(request.messages), model, request.cache_boundary)
        wire = convert_messages(messages, model, request.system_prompt, compat)
    else:
        key = (
            model.api,
            model.provider,
            model.id,
            tuple(model.input),
            model.reasoning,
            request.system_prompt,
            json.dumps(compat, sort_keys=True),
        )
        fresh = lambda: _Converter(model, request.system_prompt, compat, _CACHE)  # noqa: E731
        wire = _MEMO.convert(model, request, key, fresh, _CACHE).finish()
    if prefix is not None and request.wire_prefix is not None:
        # after the instructions; the request's messages start with a user prompt (nothing to join)
        head = 1 if wire and wire[0]["role"] in ("system", "developer") else 0
        wire = [*wire[:head], *prefix, *wire[head:]]
        _CACHE.lead_items, _CACHE.lead_json = prefix, request.wire_prefix.json
    body: JsonObject = {"model": model.id, "messages": wire, "stream": True}
    if options.session_id and _sends_cache_key(model, options, compat):
        body["prompt_cache_key"] = options.session_id[:_MAX_CACHE_KEY]
    if options.cache_retention == "long" and compat["supportsLongCacheRetention"]:
        body["prompt_cache_retention"] = "24h"
    if compat["supportsUsageInStreaming"] is not False:
        body["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        body["store"] = False
    cap = options.max_tokens
    if not cap:
        tools = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools
        ]
        cap = default_max_tokens(model, request.messages, None, request.system_prompt, tools)
    body[compat["maxTokensField"]] = cap
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if request.tools:
        tools = []
        supports_strict = bool(compat["supportsStrictMode"])
        for tool in request.tools:
            # tools asking for constrained sampling (read, bash, edit, write) go strict where the
            # server takes strict tools, as pi's do
            strict = strict_parameters(tool, supports_strict)
            function: JsonObject = {
                "name": tool.name,
                "description": tool.description,
                "parameters": strict if strict is not None else tool.parameters,
            }
            if supports_strict:
                function["strict"] = strict is not None
            tools.append({"type": "function", "function": function})
        body["tools"] = tools
        if compat.get("zaiToolStream"):
            body["tool_stream"] = True
    elif _has_tool_history(request):
        # proxies in front of Anthropic (LiteLLM and the like) reject tool history without a tools list
        body["tools"] = []
    control = cache_control(compat, options.cache_retention)
    if control is not None:
        apply_cache_control(body, control)
    if compat.get("vllmPriority") is not None:
        body["priority"] = compat["vllmPriority"]
    add_thinking(body, model, options.thinking, compat)
    body.update(routing_fields(model))
    if model.sampling_params:
        body.update(model.sampling_params)  # last, so a custom key overrides a named field (pi)
    return body


def _has_tool_history(request: LlmRequest) -> bool:
    if request.wire_prefix is not None and request.wire_prefix.has_tool_history:
        return True
    for message in request.messages:
        if isinstance(message, ToolResultMessage):
            return True
        if isinstance(message, AssistantMessage) and any(isinstance(p, ToolCall) for p in message.content):
            return True
    return False


_MAX_CACHE_KEY = 64  # characters; OpenAI rejects longer keys


def _sends_cache_key(model: Model, options: StreamOptions, compat: JsonObject) -> bool:
    """pi 0.87 sends ``prompt_cache_key`` on Chat Completions only to OpenAI's own host, or with "long"
    retention where the server keeps long caches. Elsewhere the key is part of the cache lookup of
    servers that honour it, so sending one where pi does not would miss the cache pi's requests made."""
    if not options.session_id or options.cache_retention == "none" or not compat["supportsPromptCacheKey"]:
        return False
    official = "api.openai.com" in (model.base_url or DEFAULT_BASE_URL)
    return official or (options.cache_retention == "long" and bool(compat["supportsLongCacheRetention"]))


def convert_messages(
    messages: list[LlmMessage],
    model: Model,
    system_prompt: str,
    compat: JsonObject,
    cache: ConversionCache | None = None,
    boundary: int = 0,
) -> list[JsonObject]:
    """Chat messages from a prepared history (`prepare_messages`).

    With ``cache``, the first ``boundary`` messages (the stored history) are converted once per message
    object and shared between requests (never modified here).
    """
    converter = _Converter(model, system_prompt, compat, cache)
    converter.feed(messages[:boundary], cached=True)
    converter.feed(messages[boundary:], cached=False)
    return converter.finish()


class _Converter:
    """`convert_messages` as a fold that can be copied and extended (items are never modified)."""

    __slots__ = ("model", "compat", "cache", "key", "out", "pending_images", "ids")

    def __init__(
        self, model: Model, system_prompt: str, compat: JsonObject, cache: ConversionCache | None
    ) -> None:
        self.model = model
        self.compat = compat
        self.cache = cache
        self.key = (
            model.api,
            model.provider,
            model.id,
            "image" in model.input,
            json.dumps(compat, sort_keys=True),
        )
        self.out: list[JsonObject] = []
        self.pending_images: list[JsonObject] = []
        self.ids: dict[str, str] = {}  # tool-call ids of other models' turns -> the ids pi sends
        if system_prompt.strip():
            role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
            self.out.append({"role": role, "content": sanitize_surrogates(system_prompt)})

    def copy(self) -> _Converter:
        twin = _Converter.__new__(_Converter)
        twin.model, twin.compat, twin.cache, twin.key = self.model, self.compat, self.cache, self.key
        twin.out = list(self.out)
        twin.pending_images = list(self.pending_images)
        twin.ids = dict(self.ids)
        return twin

    def _append_user(self, user: JsonObject) -> None:
        out = self.out
        if self.compat["requiresAssistantAfterToolResult"] and out and out[-1]["role"] == "tool":
            out.append({"role": "assistant", "content": "I have processed the tool results."})
        out.append(user)

    def _flush_images(self) -> None:
        # Tool messages carry text only, so images a tool returned follow as one user message.
        if self.pending_images:
            text = {"type": "text", "text": "Attached image(s) from tool result:"}
            self._append_user({"role": "user", "content": [text, *self.pending_images]})
            self.pending_images = []

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        model, compat, cache, out = self.model, self.compat, self.cache, self.out
        for message in messages:
            key: tuple[Any, ...] = self.key
            call_id = ""
            if isinstance(message, AssistantMessage) and not _same_model(message, model):
                for call in message.tool_calls():
                    self.ids[call.id] = foreign_call_id(call.id, model)
            elif isinstance(message, ToolResultMessage):
                call_id = self.ids.get(message.tool_call_id, message.tool_call_id)
                key = (*key, call_id)
            if cache is not None and cached:
                convert = lambda m=message, c=call_id: _convert(m, model, compat, c)  # noqa: E731
                # Chat messages hold strings and nulls only (tool arguments are sent as JSON text).
                converted = cache.parts(message, key, convert, plain=True)
            else:
                converted = _convert(message, model, compat, call_id)
            if isinstance(message, ToolResultMessage):
                out.extend(converted)
                if "image" in model.input:
                    images = [_image_part(p) for p in message.content if isinstance(p, ImageContent)]
                    if images:
                        self.pending_images = [*self.pending_images, *images]
                continue
            self._flush_images()
            for item in converted:
                if item["role"] == "user":
                    self._append_user(item)
                else:
                    out.append(item)

    def finish(self) -> list[JsonObject]:
        twin = self.copy()
        twin._flush_images()
        return twin.out


def _convert(
    message: LlmMessage, model: Model, compat: JsonObject, call_id: str = ""
) -> list[JsonObject]:
    """The chat message(s) one stored message becomes (without images a tool returned); ``call_id`` is the
    id a tool result answers (its call's id as sent)."""
    if isinstance(message, ToolResultMessage):
        text = "\n".join(p.text for p in message.content if isinstance(p, TextContent))
        if not text:
            has_image = any(isinstance(p, ImageContent) for p in message.content)
            text = "(see attached image)" if has_image else "(no tool output)"
        # Keys in pi's order: the serialised bytes are part of the cached prefix.
        tool_msg: JsonObject = {
            "role": "tool",
            "content": sanitize_surrogates(text),
            "tool_call_id": call_id or message.tool_call_id,
        }
        if compat["requiresToolResultName"]:
            tool_msg["name"] = message.tool_name
        return [tool_msg]
    if isinstance(message, AssistantMessage):
        converted = _assistant(message, model, compat)
        if (
            converted is not None
            and compat.get("requiresReasoningContentOnAssistantMessages")
            and model.reasoning
            and "reasoning_content" not in converted
        ):
            # DeepSeek-style servers reject an assistant turn without the field once thinking is on
            converted["reasoning_content"] = ""
        return [] if converted is None else [converted]
    if isinstance(message, UserMessage):
        user = _user(message, model)
        return [] if user is None else [user]
    return []


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def foreign_call_id(call_id: str, model: Model) -> str:
    """The id pi gives a tool call made by another model. A Responses id ``call|item`` becomes
    ``call_item`` in ``[a-zA-Z0-9_-]`` (at most 40 characters, else the call part and a hash of the
    whole); other ids are cut to 40 characters for OpenAI itself and kept as they are elsewhere."""
    if "|" in call_id:
        call, _, item = call_id.partition("|")
        call, item = _ID_CHARS.sub("_", call), _ID_CHARS.sub("_", item)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= _TOOL_ID_MAX:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{call[: max(1, _TOOL_ID_MAX - len(digest) - 1)]}_{digest}"
    if model.provider == "openai":
        return call_id[:_TOOL_ID_MAX]
    return call_id


def _image_part(image: ImageContent) -> JsonObject:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _user(message: UserMessage, model: Model) -> JsonObject | None:
    """A string stays a string and a list of blocks stays a list of parts, as pi sends them (the shape
    is part of the cached prefix of a session pi wrote)."""
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    parts: list[JsonObject] = []
    for part in message.content:
        if isinstance(part, TextContent) and part.text:  # pi drops empty texts only, not blank ones
            parts.append({"type": "text", "text": sanitize_surrogates(part.text)})
        elif isinstance(part, ImageContent) and "image" in model.input:
            parts.append(_image_part(part))
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: AssistantMessage, model: Model, compat: JsonObject) -> JsonObject | None:
    """An assistant turn as pi sends it: its texts joined into one string; thinking either as a first
    text part (``requiresThinkingAsText``, joined by blank lines, no tags) or, all joined by newlines, in
    the reasoning field the first thinking block came from; None for a turn with nothing to send."""
    same = _same_model(message, model)
    texts = [
        sanitize_surrogates(p.text) for p in message.content if isinstance(p, TextContent) and p.text.strip()
    ]
    thoughts = [p for p in message.content if isinstance(p, ThinkingContent) and p.thinking.strip()]
    calls = message.tool_calls()
    text = "".join(texts)
    content: str | list[dict[str, str]] | None = "" if compat["requiresAssistantAfterToolResult"] else None
    converted: JsonObject = {"role": "assistant", "content": content}
    if thoughts and compat["requiresThinkingAsText"]:
        joined = "\n\n".join(sanitize_surrogates(p.thinking) for p in thoughts)
        converted["content"] = [
            {"type": "text", "text": joined},
            *({"type": "text", "text": t} for t in texts),
        ]
    else:
        if text:
            converted["content"] = text
        # Same-model reasoning goes back in the field the server sent it in (prepare_messages has already
        # turned other models' thinking into text).
        field = thoughts[0].thinking_signature if thoughts else None
        if field == "reasoning" and model.provider == "opencode-go":
            field = "reasoning_content"
        if field in REASONING_FIELDS:
            converted[str(field)] = "\n".join(p.thinking for p in thoughts)
    if calls:
        converted["tool_calls"] = [
            {
                "id": call.id if same else foreign_call_id(call.id, model),
                "type": "function",
                "function": {"name": call.name, "arguments": json_stringify(call.arguments)},
            }
            for call in calls
        ]
    if not converted["content"] and not calls:
        return None
    return converted


# --- response --------------------------------------------------------------------------------------


def _get(obj: object, name: str) -> Any:
    """A field of a decoded JSON object (chunks and their parts); ``None`` when ``obj`` is no object."""
    return obj.get(name) if isinstance(obj, dict) else None


def normalize_usage(
    usage: Any,
    *,
    prompt_field: str = "prompt_tokens",
    output_field: str = "completion_tokens",
    details_field: str = "prompt_tokens_details",
    output_details_field: str = "completion_tokens_details",
) -> dict[str, int]:
    """OpenAI usage → ours: ``input`` excludes the cached (and newly cache-written) prompt tokens;
    ``reasoning`` is the output details' ``reasoning_tokens`` (0 when not sent, as pi counts it)."""
    prompt = _get(usage, prompt_field) or 0
    details = _get(usage, details_field)
    cached = _get(details, "cached_tokens") or 0
    written = _get(details, "cache_write_tokens") or 0
    return {
        "input": max(0, prompt - cached - written),
        "output": _get(usage, output_field) or 0,
        "cache_read": cached,
        "cache_write": written,
        "reasoning": _get(_get(usage, output_details_field), "reasoning_tokens") or 0,
    }


def map_finish_reason(reason: str, has_tool_calls: bool) -> tuple[StopReason, str | None]:
    if reason == "stop":
        return ("toolUse" if has_tool_calls else "stop"), None
    if reason == "length":
        return "length", None
    if reason in ("tool_calls", "function_call"):
        return "toolUse", None
    if reason == "content_filter":
        return "error", "content_filter: the provider's content filter stopped the answer"
    return "error", f"Unhandled finish reason: {reason}"


class _Reader:
    """Turns ``ChatCompletionChunk``s into normalised events; tool calls are tracked by their ``index``."""

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        # As pi: one text block and one thinking block per answer, opened by their first delta and left
        # open (later text or reasoning joins them) until the answer ends
        self.text_index: int | None = None
        self.thinking_index: int | None = None
        self.tools: dict[int | str, int] = {}  # OpenAI tool-call index -> our content index
        self.open_tools: list[int] = []
        self.finish_reason: str | None = None

    def handle(self, chunk: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        choices = _get(chunk, "choices") or []
        usage = _get(chunk, "usage")
        if (
            self.out.message.response_id is None
            and isinstance(chunk_id := _get(chunk, "id"), str)
            and chunk_id
        ):
            self.out.message.response_id = chunk_id
        for choice in choices:
            if (_get(choice, "index") or 0) != 0:
                continue
            usage = usage or _get(choice, "usage")  # Moonshot puts it here
            delta = _get(choice, "delta")
            if delta is not None:
                self._delta(delta, events)
            reason = _get(choice, "finish_reason")
            if reason:
                self.finish_reason = reason
                self.out.message.raw_stop_reason = str(reason)
                self._close_all(events)
        if usage:
            self.out.set_usage(**normalize_usage(usage))
        return events

    def _delta(self, delta: Any, events: list[StreamEvent]) -> None:
        # text before reasoning when a chunk has both, as pi reads a chunk
        content = _get(delta, "content")
        if isinstance(content, str) and content:
            if self.text_index is None:
                self.text_index, text_start = self.out.begin_text()
                events.append(text_start)
            events.append(self.out.text_delta(self.text_index, content))
        for field in REASONING_FIELDS:
            reasoning = _get(delta, field)
            if isinstance(reasoning, str) and reasoning:
                if self.thinking_index is None:
                    self.thinking_index, thinking_start = self.out.begin_thinking(signature=field)
                    events.append(thinking_start)
                events.append(self.out.thinking_delta(self.thinking_index, reasoning))
                break
        for call in _get(delta, "tool_calls") or []:
            self._tool_delta(call, events)

    def _tool_delta(self, call: Any, events: list[StreamEvent]) -> None:
        position = _get(call, "index")
        function = _get(call, "function")
        if position is None:
            # Servers that omit the index: a new id opens a call, a fragment without one continues the last.
            call_id = _get(call, "id")
            if call_id is not None:
                opened = (p for p, i in self.tools.items() if self.out.tool_call(i).id == call_id)
                position = next(opened, f"id:{call_id}")
            else:
                position = next(reversed(self.tools), "id:")
        if position not in self.tools:
            # The open text/thinking block stays open (more text joins it) and ends with the answer,
            # before the tool calls' ends: pi's event order for this API.
            call_id = _get(call, "id") or f"call_{len(self.tools)}"
            index, start = self.out.begin_tool_call(call_id, _get(function, "name") or "")
            self.tools[position] = index
            self.open_tools.append(index)
            events.append(start)
        index = self.tools[position]
        name = _get(function, "name")
        block = self.out.tool_call(index)
        if name and not block.name:
            block.name = name
        # every tool-call chunk is a delta event, one without arguments (the call's opening chunk) too, as pi
        events.append(self.out.tool_call_delta(index, _get(function, "arguments") or ""))

    def _close_all(self, events: list[StreamEvent]) -> None:
        """End every open block in content order (pi ends them all once the answer is complete)."""
        for index in sorted(
            i for i in (self.text_index, self.thinking_index, *self.open_tools) if i is not None
        ):
            if index == self.text_index:
                events.append(self.out.end_text(index))
            elif index == self.thinking_index:
                events.append(self.out.end_thinking(index))
            else:
                events.append(self.out.end_tool_call(index))
        self.text_index = self.thinking_index = None
        self.open_tools.clear()

    def result(self) -> tuple[StopReason, str | None]:
        if self.finish_reason is None:
            raise IncompleteStreamError()
        return map_finish_reason(self.finish_reason, bool(self.tools))


async def stream_openai_completions(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from Chat Completions. Never raises: failures end with an `Error` event."""
    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=build_request,
        get_client=openai_client,
        path="/chat/completions",
        decode=decode_event,
        make_reader=_Reader,
        encode=_encode,
        describe=describe_with_hint(model),
        provider_retries=True,
    ):
        yield event


def _encode(body: JsonObject) -> bytes:
    return encode_body(body, "messages", _CACHE)
