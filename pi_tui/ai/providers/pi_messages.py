"""pi's own message protocol, ``pi-messages`` (the Radius gateway, or any backend that speaks it).

The request is one ``POST {baseUrl}/messages`` with ``Authorization: Bearer <key>`` and the body
``{"model", "context", "options"}``: ``context`` is pi's transcript itself (``{"messages": [...]}``, a
leading ``system`` message carrying the prompt as ``content`` and the tools as ``toolsAdded``, then the
user, assistant and toolResult messages as pi stores them), and ``options`` holds ``temperature``,
``maxTokens``, ``reasoning`` (the thinking level, not a provider value: the backend maps it),
``cacheRetention``, ``sessionId`` and ``toolChoice``, each only when set. The answer is server-sent events
whose ``data:`` lines are pi's own stream events (``text_start``/``_delta``/``_end``, ``thinking_*``,
``toolcall_*``), ended by ``done`` or ``error`` carrying the stop reason, the usage (with its cost, as the
backend priced it) and the response id. An HTTP error reads ``<status> <status text>: <message> (<code>)``,
as pi words it. pi does not retry this API, and neither does the adapter (the agent's retry still applies).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..thinking import clamp_thinking_level
from ..types import StopReason, TextContent, Usage
from ._common import (
    MessageBuilder,
    cached_client,
    describe_error,
    http_failure,
    json_stringify,
    merged_headers,
    stream_over_http,
)
from ._error_hints import http_hint

if TYPE_CHECKING:
    from ..types import Model
    from ..wire import SseStream, WireClient

__all__ = [
    "PATH",
    "PiMessagesStreamError",
    "build_request",
    "describe_pi_messages_error",
    "stream_pi_messages",
]

PATH = "/messages"
# The stop reasons the backend may send, each as itself (any other is an error).
_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "toolUse",
    "error": "error",
    "aborted": "aborted",
}


class PiMessagesStreamError(Exception):
    """The answer broke the protocol: an unparsable event, or no ``done``/``error`` before the end."""


def _cache_retention(options: StreamOptions) -> str | None:
    """Sent only when asked for: the backend's default applies otherwise (pi maps only its
    ``PI_CACHE_RETENTION=long`` opt-in and an explicit choice)."""
    if options.cache_retention in ("none", "long"):
        return options.cache_retention
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else None


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The body pi 0.87.1 sends: the model id, pi's transcript, and the options that are set."""
    messages: list[JsonObject] = []
    if request.system_prompt or request.tools:
        system: JsonObject = {"role": "system", "content": request.system_prompt}
        if request.tools:
            system["toolsAdded"] = [tool.to_json_dict() for tool in request.tools]
        system["timestamp"] = 0
        messages.append(system)
    messages.extend(message.to_json_dict() for message in request.messages)
    level = clamp_thinking_level(model, options.thinking) if model.reasoning else "off"
    settings: JsonObject = {
        "temperature": options.temperature,
        "maxTokens": options.max_tokens,
        "reasoning": None if level == "off" else level,
        "cacheRetention": _cache_retention(options),
        "sessionId": options.session_id,
    }
    return {
        "model": model.id,
        "context": {"messages": messages},
        "options": {key: value for key, value in settings.items() if value is not None},
    }


async def _client(model: Model, options: StreamOptions) -> WireClient:
    from ..wire import WireClient

    api_key = options.api_key
    if not api_key:
        raise ValueError(f'No API key provided for provider "{model.provider}"')
    base_url = model.base_url.rstrip("/")
    headers = merged_headers(model, options)
    wire_headers = {
        "authorization": f"Bearer {api_key}",
        "accept": "text/event-stream",
        "content-type": "application/json",
        **headers,
    }
    return await cached_client(
        "pi-messages", base_url, api_key, headers, lambda: WireClient(base_url, wire_headers)
    )


def _decode(event: str | None, data: str, stream: SseStream) -> Any:
    text = data.strip()
    if not text or text == "[DONE]":
        return None
    try:
        value = json_safe.loads(text, limit=json_safe.MAX_RECORD_DEPTH)
    except ValueError:
        raise PiMessagesStreamError(f"invalid event in the answer: {text[:200]}") from None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise PiMessagesStreamError(f"invalid event in the answer: {text[:200]}")
    return value


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class _Reader:
    """pi's events → ours: the backend numbers the blocks; ours are appended in the order they start."""

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.blocks: dict[int, int] = {}  # the server's contentIndex -> ours
        self.end: tuple[StopReason, str | None] | None = None

    def _index(self, event: JsonObject) -> int | None:
        return self.blocks.get(_int(event.get("contentIndex")))

    def handle(self, event: JsonObject) -> list[StreamEvent]:
        kind = event["type"]
        out = self.out
        server_index = _int(event.get("contentIndex"))
        index = self._index(event)
        if kind == "text_start":
            self.blocks[server_index], start = out.begin_text()
            return [start]
        if kind == "thinking_start":
            self.blocks[server_index], begun = out.begin_thinking()
            return [begun]
        if kind == "toolcall_start":
            call_id, name = str(event.get("id") or ""), str(event.get("toolName") or "")
            self.blocks[server_index], opened = out.begin_tool_call(call_id, name)
            return [opened]
        if kind in ("done", "error"):
            self._finish(event)
            return []
        if index is None:  # a delta or end for a block that never started: nothing to attach it to
            return []
        delta = str(event.get("delta") or "")
        if kind == "text_delta":
            return [out.text_delta(index, delta)]
        if kind == "thinking_delta":
            return [out.thinking_delta(index, delta)]
        if kind == "toolcall_delta":
            return [out.tool_call_delta(index, delta)]
        if kind == "text_end":
            block = out.message.content[index]
            assert isinstance(block, TextContent)
            if isinstance(event.get("content"), str):
                block.text = event["content"]
            signature = event.get("contentSignature")
            return [out.end_text(index, signature if isinstance(signature, str) else None)]
        if kind == "thinking_end":
            thought = out.thinking(index)
            if isinstance(event.get("content"), str):
                thought.thinking = event["content"]
            if isinstance(event.get("contentSignature"), str):
                thought.thinking_signature = event["contentSignature"]
            if event.get("redacted") is True:
                thought.redacted = True
            return [out.end_thinking(index)]
        if kind == "toolcall_end":
            return [self._end_tool_call(index, event.get("toolCall"))]
        return []

    def _end_tool_call(self, index: int, final: Any) -> StreamEvent:
        call = self.out.tool_call(index)
        if not isinstance(final, dict):
            return self.out.end_tool_call(index)
        if isinstance(final.get("id"), str) and final["id"]:
            call.id = final["id"]
        if isinstance(final.get("name"), str) and final["name"]:
            call.name = final["name"]
        if isinstance(final.get("thoughtSignature"), str):
            call.thought_signature = final["thoughtSignature"]
        arguments = final.get("arguments")
        raw = json_stringify(arguments) if isinstance(arguments, dict) else None
        return self.out.end_tool_call(index, raw)

    def _finish(self, event: JsonObject) -> None:
        message = self.out.message
        if isinstance(event.get("responseId"), str):
            message.response_id = event["responseId"]
        usage = event.get("usage")
        if isinstance(usage, dict):
            # the backend's own count and price (it knows which upstream served the answer)
            self.out.set_server_usage(Usage.model_validate(usage))
        reason = event.get("reason")
        stop: StopReason = _STOP_REASONS.get(reason, "error") if isinstance(reason, str) else "error"
        if event["type"] == "error":
            stop = "aborted" if reason == "aborted" else "error"
            text = event.get("errorMessage")
            self.end = (stop, text if isinstance(text, str) and text else f"{self.out.model.provider} error")
        elif stop in ("error", "aborted"):
            self.end = (stop, f"{self.out.model.provider} ended the answer with reason {reason!r}")
        else:
            self.end = (stop, None)

    def result(self) -> tuple[StopReason, str | None]:
        if self.end is None:
            raise PiMessagesStreamError(f"{self.out.model.provider} stream ended without a terminal event")
        return self.end


def describe_pi_messages_error(model: Model) -> Callable[[BaseException], str]:
    """pi's wording of a refused request (``<status> <status text>: <message> (<code>)``) plus what to
    check, as the other APIs' errors say it."""

    def describe(exc: BaseException) -> str:
        if isinstance(exc, PiMessagesStreamError):
            return str(exc)
        failure = http_failure(exc)
        status = failure.status if failure is not None else None
        if failure is None or status is None or status == 200:
            return describe_error(exc)
        body = failure.body
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        detail = message if isinstance(message, str) else failure.text.strip()
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        text = f"{status} {phrase}: {detail}" if phrase else f"{status}: {detail}"
        if isinstance(code, str) and code:
            text += f" ({code})"
        hint = http_hint(model.provider, status, model.id)
        if hint is not None:
            text += f" ({hint})"
        wait = failure.retry_after_ms()
        if wait is not None:
            text += f" (retry after {wait} ms)"
        return text

    return describe


async def stream_pi_messages(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer over ``pi-messages``. Never raises: failures end with an `Error` event."""
    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=build_request,
        get_client=_client,
        path=PATH,
        decode=_decode,
        make_reader=_Reader,
        describe=describe_pi_messages_error(model),
    ):
        yield event
