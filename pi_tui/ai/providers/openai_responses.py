"""OpenAI Responses API (``openai-responses``) over pi-tui's own wire client (`pi_tui.ai.wire`).

Stateless use (``store: false``): every request carries the whole history as input items, and reasoning
is replayed from its encrypted content, which the finished reasoning item is kept as (JSON, in the
thinking block's signature).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.util import json_safe

from ..stream import LlmRequest, ProviderError, StreamEvent, StreamOptions
from ..thinking import level_value
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
from ._history import prepare_messages, sanitize_tool_call_id
from ._wire_cache import ConversionCache, PrefixMemo, encode_body
from .openai_completions import DEFAULT_BASE_URL, decode_event, normalize_usage, openai_client

__all__ = ["build_request", "convert_input", "stream_openai_responses"]

_CALL_ID_MAX = 64
# Converted input items of the stored history, reused across requests (see _wire_cache).
_CACHE = ConversionCache()
_MEMO = PrefixMemo()


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> dict[str, Any]:
    """The JSON body for ``POST /responses`` (streaming, stateless)."""
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
        )
        fresh = lambda: _Converter(model, request.system_prompt, _CACHE)  # noqa: E731
        items = _MEMO.convert(model, request, key, fresh).finish()
    body: dict[str, Any] = {"model": model.id, "input": items, "stream": True, "store": False}
    if options.session_id and options.cache_retention != "none":
        body["prompt_cache_key"] = options.session_id
    if options.cache_retention == "long" and "api.openai.com" in (model.base_url or DEFAULT_BASE_URL):
        body["prompt_cache_retention"] = "24h"
    if options.max_tokens:
        body["max_output_tokens"] = options.max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in request.tools
        ]
    if model.reasoning and options.thinking != "off":
        effort = level_value(model, options.thinking) or options.thinking
        body["reasoning"] = {"effort": effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    return body


def convert_input(
    messages: list[LlmMessage],
    model: Model,
    system_prompt: str,
    cache: ConversionCache | None = None,
    boundary: int = 0,
) -> list[dict[str, Any]]:
    """Input items from a prepared history (`prepare_messages`).

    With ``cache``, the first ``boundary`` messages (the stored history) are converted once per message
    object and shared between requests (never modified here).
    """
    converter = _Converter(model, system_prompt, cache)
    converter.feed(messages[:boundary], cached=True)
    converter.feed(messages[boundary:], cached=False)
    return converter.finish()


def _attached_images(images: list[dict[str, Any]]) -> dict[str, Any]:
    # function_call_output is text only; images a tool returned follow as a user message.
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Attached image(s) from tool result:"}, *images],
    }


class _Converter:
    """`convert_input` as a fold that can be copied and extended (items are never modified)."""

    __slots__ = ("model", "cache", "key", "items", "pending_images")

    def __init__(self, model: Model, system_prompt: str, cache: ConversionCache | None) -> None:
        self.model = model
        self.cache = cache
        self.key = (model.api, model.provider, model.id, "image" in model.input)
        self.items: list[dict[str, Any]] = []
        self.pending_images: list[dict[str, Any]] = []
        if system_prompt.strip():
            self.items.append(
                {"role": "developer" if model.reasoning else "system", "content": system_prompt}
            )

    def copy(self) -> _Converter:
        twin = _Converter.__new__(_Converter)
        twin.model, twin.cache, twin.key = self.model, self.cache, self.key
        twin.items = list(self.items)
        twin.pending_images = list(self.pending_images)
        return twin

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        model, cache, items = self.model, self.cache, self.items
        for message in messages:
            if cache is not None and cached:
                converted = cache.parts(message, self.key, lambda m=message: _convert(m, model))  # type: ignore[misc]
            else:
                converted = _convert(message, model)
            if isinstance(message, ToolResultMessage):
                items.extend(converted)
                if "image" in model.input:
                    images = [_image(p) for p in message.content if isinstance(p, ImageContent)]
                    if images:
                        self.pending_images = [*self.pending_images, *images]
                continue
            if self.pending_images:
                items.append(_attached_images(self.pending_images))
                self.pending_images = []
            items.extend(converted)

    def finish(self) -> list[dict[str, Any]]:
        if self.pending_images:
            return [*self.items, _attached_images(self.pending_images)]
        return list(self.items)


def _convert(message: LlmMessage, model: Model) -> list[dict[str, Any]]:
    """The input items one stored message becomes (without images a tool returned)."""
    if isinstance(message, ToolResultMessage):
        text = "\n".join(p.text for p in message.content if isinstance(p, TextContent))
        return [
            {
                "type": "function_call_output",
                "call_id": _call_id(message.tool_call_id),
                "output": text or "(no output)",
            }
        ]
    if isinstance(message, AssistantMessage):
        return _assistant_items(message)
    if isinstance(message, UserMessage):
        user = _user_item(message, model)
        return [] if user is None else [user]
    return []


def _call_id(tool_call_id: str) -> str:
    return sanitize_tool_call_id(tool_call_id.split("|", 1)[0], _CALL_ID_MAX)


def _image(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{image.mime_type};base64,{image.data}",
    }


def _user_item(message: UserMessage, model: Model) -> dict[str, Any] | None:
    content = [TextContent(text=message.content)] if isinstance(message.content, str) else message.content
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextContent) and part.text.strip():
            parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImageContent) and "image" in model.input:
            parts.append(_image(part))
    return {"type": "message", "role": "user", "content": parts} if parts else None


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    # Item ids are only sent next to their replayed reasoning item: without it the API rejects them.
    with_ids = False
    for part in message.content:
        if isinstance(part, ThinkingContent):
            reasoning = _reasoning_item(part)
            if reasoning is not None:
                items.append(reasoning)
                with_ids = True
        elif isinstance(part, TextContent) and part.text.strip():
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": part.text, "annotations": []}],
                "status": "completed",
            }
            if with_ids and part.text_signature and part.text_signature.startswith("msg_"):
                item["id"] = part.text_signature
            items.append(item)
        elif isinstance(part, ToolCall):
            call_id, _, item_id = part.id.partition("|")
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": sanitize_tool_call_id(call_id, _CALL_ID_MAX),
                "name": part.name,
                "arguments": json_stringify(part.arguments),
            }
            if with_ids and item_id.startswith("fc_"):
                call["id"] = item_id
            items.append(call)
    return items


def _reasoning_item(part: ThinkingContent) -> dict[str, Any] | None:
    if not part.thinking_signature:
        return None
    try:
        item = json_safe.loads(part.thinking_signature)
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

    def handle(self, event: dict[str, Any]) -> list[StreamEvent]:
        kind = event.get("type", "")
        output_index = event.get("output_index")
        entry = self.items.get(output_index, ("skip", -1)) if output_index is not None else ("skip", -1)
        delta = event.get("delta")
        if kind == "response.output_item.added":
            return self._added(event["output_index"], event.get("item") or {})
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            if entry[0] == "thinking" and delta:
                return [self.out.thinking_delta(entry[1], delta)]
        elif kind == "response.reasoning_summary_part.added":
            if entry[0] == "thinking" and self.out.thinking(entry[1]).thinking:
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

    def _added(self, output_index: int, item: dict[str, Any]) -> list[StreamEvent]:
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

    def _done(self, output_index: int, entry: tuple[str, int], item: dict[str, Any]) -> list[StreamEvent]:
        kind, index = entry
        if kind == "thinking":
            block = self.out.thinking(index)
            if not block.thinking:
                summary = item.get("summary") or []
                block.thinking = "\n\n".join(s.get("text") or "" for s in summary)
            block.thinking_signature = json.dumps(_without_nones(item))
            return [self.out.end_thinking(index)]
        if kind == "text":
            text_block = self.out.message.content[index]
            assert isinstance(text_block, TextContent)
            if not text_block.text:
                text_block.text = "".join(
                    c.get("text") or c.get("refusal") or "" for c in item.get("content") or []
                )
            return [self.out.end_text(index, signature=item.get("id"))]
        if kind == "tool":
            final = self.final_args.get(output_index) or item.get("arguments")
            return [self.out.end_tool_call(index, final)]
        return []

    def _finished(self, response: dict[str, Any]) -> None:
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
        get_client=openai_client,
        path="/responses",
        decode=decode_event,
        make_reader=_Reader,
        encode=_encode,
    ):
        yield event


def _encode(body: dict[str, Any]) -> bytes:
    return encode_body(body, "input", _CACHE)
