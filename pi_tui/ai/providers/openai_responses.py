"""OpenAI Responses API (``openai-responses``) over pi-tui's own wire client (`pi_tui.ai.wire`).

Stateless use (``store: false``): every request carries the whole history as input items, and reasoning
is replayed from its encrypted content, which the finished reasoning item is kept as (JSON, in the
thinking block's signature).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, ProviderError, StreamEvent, StreamOptions
from ..thinking import level_map, level_value
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
    json_stringify,
    stream_over_http,
)
from ._error_hints import describe_with_hint
from ._history import (
    prepare_messages,
    sanitize_surrogates,
    short_hash,
)
from ._openai_compat import default_max_tokens
from ._strict_schema import strict_parameters
from ._wire_cache import ConversionCache, PrefixMemo, encode_body, json_plain
from .openai_completions import decode_event, normalize_usage, openai_client

if TYPE_CHECKING:
    from ..wire import WireClient

_MIN_OUTPUT_TOKENS = 16

__all__ = ["ResponsesReader", "build_request", "convert_input", "encode_request", "stream_openai_responses"]

_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
# Providers whose call ids keep the ``call|item`` form for other models' calls (Azure: pi's Azure adapter).
_OPENAI_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode", "azure-openai-responses"})
# Converted input items of the stored history, reused across requests (see _wire_cache).
_CACHE = ConversionCache()
_MEMO = PrefixMemo()


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body for ``POST /responses`` (streaming, stateless)."""
    prefix = request.wire_prefix.sendable(model, options) if request.wire_prefix is not None else None
    # Messages before the request's that became items (a history prefix already in wire shape): the
    # ids pi gives texts without one count them.
    before = request.wire_prefix.converted if request.wire_prefix is not None else 0
    if options.on_payload is not None:
        # The hook may change the body in place: it gets freshly converted items, nothing shared.
        messages, boundary = prepare_messages(list(request.messages), model, request.cache_boundary)
        items = convert_input(messages, model, request.system_prompt)
    else:
        key = (
            model.api,
            model.provider,
            model.id,
            tuple(model.input),
            model.reasoning,
            request.system_prompt,
            before,
        )
        fresh = lambda: _Converter(model, request.system_prompt, _CACHE, before)  # noqa: E731
        items = _MEMO.convert(model, request, key, fresh, _CACHE).finish()
    if prefix is not None and request.wire_prefix is not None:
        # after the instructions; the request's messages start with a user prompt (nothing to join)
        head = 1 if items and items[0].get("role") in ("system", "developer") else 0
        items = [*items[:head], *prefix, *items[head:]]
        _CACHE.lead_items, _CACHE.lead_json = prefix, request.wire_prefix.json
    body: JsonObject = {"model": model.id, "input": items, "stream": True, "store": False}
    if options.session_id and options.cache_retention != "none":
        body["prompt_cache_key"] = options.session_id
    compat = model.compat or {}
    long_ok = compat.get("supportsLongCacheRetention", True) is not False
    if compat.get("supportsExplicitPromptCacheMode") is True:  # OpenAI's own: explicit cache options
        if options.cache_retention == "none":
            body["prompt_cache_options"] = {"mode": "explicit"}
        elif options.cache_retention == "long" and long_ok:
            body["prompt_cache_options"] = {"ttl": "30m"}
    elif options.cache_retention == "long" and long_ok:
        body["prompt_cache_retention"] = "24h"
    if (model.compat or {}).get("supportsMaxOutputTokens") is not False:
        # the requested cap, else the model's maximum cut to the room left in the window (pi's); the API
        # rejects caps below 16
        tools = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools
        ]
        cap = options.max_tokens or default_max_tokens(
            model, request.messages, None, request.system_prompt, tools
        )
        body["max_output_tokens"] = max(cap, _MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if request.tools:
        # pi sends ``strict`` only to models whose compat says they support strict mode; there, tools that
        # ask for constrained sampling (read, bash, edit, write) go strict with the strict schema
        body["tools"] = responses_tools(model, request, supports_by_default=False)
    if model.reasoning and options.thinking != "off":
        effort = level_value(model, options.thinking) or options.thinking
        body["reasoning"] = {"effort": effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    elif model.reasoning and model.provider != "github-copilot":
        # Thinking off is asked for, as pi asks: without an effort OpenAI's reasoning models think at
        # their default (medium). The model's map may name its own "off" value, or None: cannot be off.
        mapping = level_map(model) or {}
        if not ("off" in mapping and mapping["off"] is None):
            body["reasoning"] = {"effort": mapping.get("off") or "none"}
    return body


def responses_tools(
    model: Model, request: LlmRequest, *, supports_by_default: bool, loose: bool | None = False
) -> list[JsonObject]:
    """The Responses family's tool list: each tool asking for constrained sampling goes strict (with the
    strict schema) where the model supports strict mode; then every tool carries ``strict``.

    Args:
        supports_by_default: Whether a model whose compat does not say supports strict mode (pi's
            default differs per API: no for OpenAI, yes for Azure and Codex).
        loose: The ``strict`` value of a tool that is not strict (``False``; Codex sends ``null``).
    """
    supports = (model.compat or {}).get("supportsStrictMode")
    supports_strict = supports_by_default if supports is None else bool(supports)
    tools = []
    for t in request.tools:
        strict = strict_parameters(t, supports_strict)
        tool: JsonObject = {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": strict if strict is not None else t.parameters,
        }
        if supports_strict:
            tool["strict"] = True if strict is not None else loose
        tools.append(tool)
    return tools


def convert_input(
    messages: list[LlmMessage],
    model: Model,
    system_prompt: str,
    cache: ConversionCache | None = None,
    boundary: int = 0,
) -> list[JsonObject]:
    """Input items from a prepared history (`prepare_messages`).

    With ``cache``, the first ``boundary`` messages (the stored history) are converted once per message
    object and shared between requests (never modified here).
    """
    converter = _Converter(model, system_prompt, cache)
    converter.feed(messages[:boundary], cached=True)
    converter.feed(messages[boundary:], cached=False)
    return converter.finish()


class _Converter:
    """`convert_input` as a fold that can be copied and extended (items are never modified).

    ``emitted`` counts the messages that produced items: pi names an assistant text without an item id
    after that position (``msg_pi_<n>``)."""

    __slots__ = ("model", "cache", "key", "items", "emitted", "ids")

    def __init__(
        self, model: Model, system_prompt: str, cache: ConversionCache | None, emitted: int = 0
    ) -> None:
        self.model = model
        self.cache = cache
        self.key = (model.api, model.provider, model.id, "image" in model.input)
        self.items: list[JsonObject] = []
        self.emitted = emitted
        self.ids: dict[str, str] = {}  # tool-call ids of other models' turns -> the ids pi sends
        if system_prompt.strip():
            role = (
                "developer" if model.reasoning and _compat(model, "supportsDeveloperRole", True) else "system"
            )
            self.items.append({"role": role, "content": sanitize_surrogates(system_prompt)})

    def copy(self) -> _Converter:
        twin = _Converter.__new__(_Converter)
        twin.model, twin.cache, twin.key = self.model, self.cache, self.key
        twin.items = list(self.items)
        twin.emitted = self.emitted
        twin.ids = dict(self.ids)
        return twin

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        model, cache, items = self.model, self.cache, self.items
        for message in messages:
            if isinstance(message, AssistantMessage):
                if not _same_model(message, model):
                    for call in message.tool_calls():
                        self.ids[call.id] = _foreign_call_id(call.id, model, message)
                # The fallback item ids depend on the position, so the cache key carries it.
                index = self.emitted
                if cache is not None and cached:
                    key = (*self.key, index)
                    convert = lambda m=message, i=index: _assistant_items(m, model, i)  # noqa: E731
                    # reasoning items replay the server's JSON as stored: checked, not assumed plain
                    converted = cache.parts(message, key, convert, json_plain)
                else:
                    converted = _assistant_items(message, model, index)
            elif isinstance(message, ToolResultMessage):
                call_id = self.ids.get(message.tool_call_id, message.tool_call_id)
                if cache is not None and cached:
                    convert = lambda m=message, c=call_id: _tool_result_items(m, model, c)  # noqa: E731
                    converted = cache.parts(message, (*self.key, call_id), convert, plain=True)
                else:
                    converted = _tool_result_items(message, model, call_id)
            elif cache is not None and cached:
                converted = cache.parts(message, self.key, functools.partial(_convert, message, model), plain=True)
            else:
                converted = _convert(message, model)
            if converted:
                items.extend(converted)
                self.emitted += 1

    def finish(self) -> list[JsonObject]:
        return list(self.items)


def _compat(model: Model, name: str, default: bool) -> bool:
    value = (model.compat or {}).get(name)
    return default if value is None else bool(value)


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _id_part(part: str) -> str:
    return _ID_CHARS.sub("_", part)[:64].rstrip("_")


def _foreign_call_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    return foreign_call_id(call_id, model, source.provider, source.api)


def foreign_call_id(call_id: str, model: Model, provider: str, api: str) -> str:
    """The id pi gives a tool call made by another model (of ``provider`` and ``api``): ``[a-zA-Z0-9_-]``
    parts of at most 64 characters; OpenAI's own providers keep the ``call|item`` form, with a hashed
    ``fc_`` item id for a call from another provider or API."""
    if model.provider not in _OPENAI_CALL_PROVIDERS or "|" not in call_id:
        return _id_part(call_id)
    call, _, rest = call_id.partition("|")
    item = rest.split("|", 1)[0]
    foreign = provider != model.provider or api != model.api
    item_id = f"fc_{short_hash(item)}"[:64] if foreign else _id_part(item)
    if not item_id.startswith("fc_"):
        item_id = _id_part(f"fc_{item_id}")
    return f"{_id_part(call)}|{item_id}"


def _tool_result_items(message: ToolResultMessage, model: Model, call_id: str) -> list[JsonObject]:
    output = _tool_output(message, model)
    return [{"type": "function_call_output", "call_id": call_id.split("|", 1)[0], "output": output}]


def _convert(message: LlmMessage, model: Model) -> list[JsonObject]:
    """The input items a stored user message becomes."""
    if isinstance(message, UserMessage):
        user = _user_item(message, model)
        return [] if user is None else [user]
    return []


def _tool_output(message: ToolResultMessage, model: Model) -> str | list[JsonObject]:
    """pi's ``output``: the text blocks joined by newlines, or input parts when an image goes along."""
    text = "\n".join(p.text for p in message.content if isinstance(p, TextContent))
    images = [p for p in message.content if isinstance(p, ImageContent)]
    if not images or "image" not in model.input:
        return sanitize_surrogates(text or ("(see attached image)" if images else "(no tool output)"))
    parts = [{"type": "input_text", "text": sanitize_surrogates(text)}] if text else []
    return [*parts, *(_image(image) for image in images)]


def _image(image: ImageContent) -> JsonObject:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{image.mime_type};base64,{image.data}",
    }


def _user_item(message: UserMessage, model: Model) -> JsonObject | None:
    content = [TextContent(text=message.content)] if isinstance(message.content, str) else message.content
    parts = [
        {"type": "input_text", "text": sanitize_surrogates(part.text)}
        if isinstance(part, TextContent)
        else _image(part)
        for part in content
    ]
    return {"role": "user", "content": parts} if parts else None


def text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """(item id, phase) from a text block's signature: pi's ``{"v":1,"id":…,"phase":…}`` or a bare id."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = json_safe.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _signature_of(item: JsonObject) -> str | None:
    """A finished message item's id and phase, stored as pi stores them (``{"v":1,"id":…,"phase":…}``) so
    a later request replays both."""
    item_id = item.get("id")
    if not isinstance(item_id, str):
        return None
    phase = item.get("phase")
    payload: JsonObject = {"v": 1, "id": item_id, **({"phase": phase} if isinstance(phase, str) else {})}
    return json_stringify(payload)


def _assistant_items(message: AssistantMessage, model: Model, index: int) -> list[JsonObject]:
    """An assistant turn as pi replays it: reasoning items from their signatures, each text as a
    completed message item with its id (or ``msg_pi_<index>[_<n>]``), each tool call as a
    ``function_call`` keeping its ``fc_`` item id unless the turn came from another model of this API."""
    items: list[JsonObject] = []
    other_model = (
        message.provider == model.provider and message.api == model.api and message.model != model.id
    )
    texts = 0
    for part in message.content:
        if isinstance(part, ThinkingContent):
            reasoning = reasoning_item(part.thinking_signature)
            if reasoning is not None:
                items.append(reasoning)
        elif isinstance(part, TextContent):
            item_id, phase = text_signature(part.text_signature)
            if not item_id:
                item_id = f"msg_pi_{index}" if texts == 0 else f"msg_pi_{index}_{texts}"
            elif len(item_id) > 64:
                item_id = f"msg_{short_hash(item_id)}"
            texts += 1
            item: JsonObject = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": sanitize_surrogates(part.text), "annotations": []}
                ],
                "status": "completed",
                "id": item_id,
            }
            if phase is not None:
                item["phase"] = phase
            items.append(item)
        elif isinstance(part, ToolCall):
            full_id = part.id if _same_model(message, model) else _foreign_call_id(part.id, model, message)
            call_id, _, rest = full_id.partition("|")
            item_id = rest.split("|", 1)[0]
            call: JsonObject = {"type": "function_call"}
            if item_id.startswith("fc_") and not other_model:
                call["id"] = item_id
            call.update(call_id=call_id, name=part.name, arguments=json_stringify(part.arguments))
            items.append(call)
    return items


def reasoning_item(signature: str | None) -> JsonObject | None:
    """The reasoning item a thinking block's signature stores (the server's JSON), or None."""
    if not signature:
        return None
    try:
        item = json_safe.loads(signature)
    except ValueError:
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


# --- response --------------------------------------------------------------------------------------


def _without_nones(value: Any) -> Any:
    """The item as the SDK dumped it (``exclude_none``): null fields dropped at every level."""
    if isinstance(value, dict):
        return {k: _without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nones(v) for v in value]
    return value


class _Reader:
    """Turns Responses stream events (JSON objects) into normalised events, keyed by ``output_index``."""

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.items: dict[int, tuple[str, int]] = {}  # output_index -> (kind, our content index)
        self.final_args: dict[int, str] = {}
        self.status: str | None = None
        self.incomplete_reason: str | None = None
        self.has_tool_calls = False

    def handle(self, event: JsonObject) -> list[StreamEvent]:
        kind = event.get("type", "")
        output_index = event.get("output_index")
        entry = self.items.get(output_index, ("skip", -1)) if output_index is not None else ("skip", -1)
        delta = event.get("delta")
        if kind == "response.output_item.added":
            return self._added(event["output_index"], event.get("item") or {})
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            if entry[0] == "thinking" and delta:
                return [self.out.thinking_delta(entry[1], delta)]
        elif kind == "response.reasoning_summary_part.done":
            # each summary part ends with a blank line as it streams (the final text is set at the item's end)
            if entry[0] == "thinking":
                return [self.out.thinking_delta(entry[1], "\n\n")]
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            if entry[0] == "text" and delta:
                return [self.out.text_delta(entry[1], delta)]
        elif kind == "response.function_call_arguments.delta":
            if entry[0] == "tool" and delta:
                return [self.out.tool_call_delta(entry[1], delta)]
        elif kind == "response.function_call_arguments.done":
            self.final_args[event["output_index"]] = event["arguments"]
        elif kind == "response.output_item.done":
            return self._done(event["output_index"], entry, event.get("item") or {})
        elif kind == "response.created":
            created = event.get("response") or {}
            if isinstance(created.get("id"), str):
                self.out.message.response_id = created["id"]
        elif kind in ("response.completed", "response.incomplete", "response.failed", "response.cancelled"):
            self._finished(event.get("response") or {})
        elif kind == "error":
            code = event.get("code") or "error"
            raise ProviderError(f"{code}: {event.get('message') or 'error event in the stream'}")
        return []

    def _added(self, output_index: int, item: JsonObject) -> list[StreamEvent]:
        item_type = item.get("type")
        start: StreamEvent
        if item_type == "reasoning":
            index, start = self.out.begin_thinking()
            self.items[output_index] = ("thinking", index)
        elif item_type == "message":
            index, start = self.out.begin_text()
            self.items[output_index] = ("text", index)
        elif item_type == "function_call":
            # pi's id shape: the call id the API pairs results with, then the item id for replay.
            index, start = self.out.begin_tool_call(f"{item['call_id']}|{item.get('id')}", item["name"])
            self.items[output_index] = ("tool", index)
            self.has_tool_calls = True
            if item.get("arguments"):
                return [start, self.out.tool_call_delta(index, item["arguments"])]
        else:
            return []
        return [start]

    def _done(self, output_index: int, entry: tuple[str, int], item: JsonObject) -> list[StreamEvent]:
        kind, index = entry
        if kind == "thinking":
            block = self.out.thinking(index)
            # as pi: the item's summary parts (else its reasoning text parts) joined by a blank line, which
            # drops the blank line streamed after the last part; what streamed when the item has neither
            summary = "\n\n".join(s.get("text") or "" for s in item.get("summary") or [])
            content = "\n\n".join(c.get("text") or "" for c in item.get("content") or [])
            block.thinking = summary or content or block.thinking
            # compact, as pi stores it (JSON.stringify)
            block.thinking_signature = json.dumps(
                _without_nones(item), separators=(",", ":"), ensure_ascii=False
            )
            return [self.out.end_thinking(index)]
        if kind == "text":
            text_block = self.out.message.content[index]
            assert isinstance(text_block, TextContent)
            if not text_block.text:
                text_block.text = "".join(
                    c.get("text") or c.get("refusal") or "" for c in item.get("content") or []
                )
            return [self.out.end_text(index, signature=_signature_of(item))]
        if kind == "tool":
            final = self.final_args.get(output_index) or item.get("arguments")
            return [self.out.end_tool_call(index, final)]
        return []

    def _finished(self, response: JsonObject) -> None:
        self.status = response.get("status") or "completed"
        details = response.get("incomplete_details")
        self.incomplete_reason = details.get("reason") if isinstance(details, dict) else None
        if isinstance(response.get("id"), str):
            self.out.message.response_id = response["id"]
        raw = f"{self.status}.{self.incomplete_reason}" if self.incomplete_reason else self.status
        self.out.message.raw_stop_reason = str(raw)
        usage = response.get("usage")
        if usage is not None:
            self.out.set_usage(
                **normalize_usage(
                    usage,
                    prompt_field="input_tokens",
                    output_field="output_tokens",
                    details_field="input_tokens_details",
                    output_details_field="output_tokens_details",
                )
            )
        if self.status == "failed":
            error = response.get("error") or {}
            code = error.get("code") or "failed"
            raise ProviderError(f"{code}: {error.get('message') or 'the response failed'}")

    def result(self) -> tuple[StopReason, str | None]:
        if self.status is None:
            raise IncompleteStreamError()
        if self.status == "completed":
            return ("toolUse" if self.has_tool_calls else "stop"), None
        if self.status == "incomplete":
            if self.incomplete_reason == "content_filter":
                return "error", "content_filter: the provider's content filter stopped the answer"
            return "length", None
        return "error", f"response {self.status}"


async def stream_openai_responses(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from the Responses API. Never raises: failures end with an `Error` event."""
    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=build_request,
        get_client=responses_client,
        path="/responses",
        decode=decode_event,
        make_reader=_Reader,
        encode=_encode,
        describe=describe_with_hint(model),
        provider_retries=True,
    ):
        yield event


def session_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """pi 0.87.1's session headers on the Responses API (unless caching is off): ``session_id`` and
    ``x-client-request-id`` (OpenAI's format, the default), only ``x-client-request-id`` (compat
    ``openai-nosession``: OpenCode), or ``x-session-id`` (OpenRouter). OpenAI routes requests of one
    session to the same cache with them."""
    session = options.session_id
    if not session or options.cache_retention == "none":
        return {}
    is_openrouter = model.provider == "openrouter" or "openrouter.ai" in (model.base_url or "")
    style = (model.compat or {}).get("sessionAffinityFormat") or ("openrouter" if is_openrouter else "openai")
    if style == "openrouter":
        return {"x-session-id": session}
    return (
        {"session_id": session, "x-client-request-id": session}
        if style == "openai"
        else {"x-client-request-id": session}
    )


async def responses_client(model: Model, options: StreamOptions) -> WireClient:
    """The Chat Completions client with the Responses API's session headers (the call's own win)."""
    extra = session_headers(model, options)
    if extra:
        options = dataclasses.replace(options, headers={**extra, **(options.headers or {})})
    return await openai_client(model, options)


def encode_request(body: JsonObject) -> bytes:
    """A Responses body as bytes, the stored history's input items spliced from their cached JSON (for
    the APIs that share this conversion: Azure, Codex)."""
    return _encode(body)


def _encode(body: JsonObject) -> bytes:
    return encode_body(body, "input", _CACHE)


# The event reader, for the APIs that share the Responses stream (Azure, Codex).
ResponsesReader = _Reader
