"""Reading a Gemini ``streamGenerateContent`` answer, and what its errors tell a user.

The stream is SSE: each event's data is one ``GenerateContentResponse`` chunk (or an ``{"error": …}``
object). `Reader` turns chunks into normalised events as pi reads them; `stream_gemini` runs one request
for either Gemini API, given the endpoint that API uses.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..types import Model, StopReason, TextContent, ToolCall
from ._common import (
    EventSource,
    HttpFailure,
    IncompleteStreamError,
    MessageBuilder,
    http_failure,
    json_stringify,
)
from ._google_request import build_request, encode_request

if TYPE_CHECKING:
    from ..wire import SseStream

__all__ = ["Endpoint", "Reader", "decode_event", "describe_google_error", "stream_gemini"]

# --- response ---------------------------------------------------------------------------------------


def decode_event(event: str | None, data: str, stream: SseStream) -> JsonObject | None:
    """One chunk of the stream; an ``{"error": ...}`` chunk raises `HttpStatusError` with its code."""
    if not data.strip():
        return None
    value = json_safe.loads(data, limit=json_safe.MAX_RECORD_DEPTH)
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        from ..wire import HttpStatusError

        error = value["error"]
        code = error.get("code")
        raise HttpStatusError(
            str(error.get("message") or "error in the stream"),
            status_code=code if isinstance(code, int) else 200,
            body=value,
            response=stream.response,
        )
    return value if isinstance(value, dict) else None


_tool_call_counter = 0


def _generated_call_id(name: str) -> str:
    global _tool_call_counter
    _tool_call_counter += 1
    return f"{name}_{int(time.time() * 1000)}_{_tool_call_counter}"


class Reader:
    """Turns ``GenerateContentResponse`` chunks into normalised events, as pi reads them: consecutive
    text (or thought) parts grow one block; a function call closes the open block and arrives whole."""

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.open: tuple[str, int] | None = None  # ("text" | "thinking", content index)
        self.finish_reason: str | None = None
        self.blocked: str | None = None  # promptFeedback.blockReason

    def _close(self) -> list[StreamEvent]:
        if self.open is None:
            return []
        kind, index = self.open
        self.open = None
        return [self.out.end_text(index) if kind == "text" else self.out.end_thinking(index)]

    def handle(self, chunk: JsonObject) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        message = self.out.message
        if not message.response_id and isinstance(chunk.get("responseId"), str):
            message.response_id = chunk["responseId"] or None
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self.blocked = feedback["blockReason"]
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(candidate, dict):
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if isinstance(part, dict):
                    events.extend(self._part(part))
            reason = candidate.get("finishReason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
                message.raw_stop_reason = reason
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            prompt = int(usage.get("promptTokenCount") or 0)
            cached = int(usage.get("cachedContentTokenCount") or 0)
            thoughts = int(usage.get("thoughtsTokenCount") or 0)
            output = int(usage.get("candidatesTokenCount") or 0) + thoughts
            self.out.set_usage(
                input=prompt - cached, output=output, cache_read=cached, cache_write=0, reasoning=thoughts
            )
        return events

    def _part(self, part: JsonObject) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        text = part.get("text")
        if isinstance(text, str):
            kind = "thinking" if part.get("thought") is True else "text"
            if self.open is None or self.open[0] != kind:
                events.extend(self._close())
                if kind == "thinking":
                    index, thinking_start = self.out.begin_thinking()
                    events.append(thinking_start)
                else:
                    index, text_start = self.out.begin_text()
                    events.append(text_start)
                self.open = (kind, index)
            index = self.open[1]
            if kind == "thinking":
                events.append(self.out.thinking_delta(index, text))
                if signature:
                    self.out.thinking(index).thinking_signature = signature
            else:
                events.append(self.out.text_delta(index, text))
                if signature:
                    block = self.out.message.content[index]
                    assert isinstance(block, TextContent)
                    block.text_signature = signature
        call = part.get("functionCall")
        if isinstance(call, dict):
            events.extend(self._close())
            name = str(call.get("name") or "")
            given = call.get("id")
            taken = {b.id for b in self.out.message.content if isinstance(b, ToolCall)}
            call_id = (
                given if isinstance(given, str) and given and given not in taken else _generated_call_id(name)
            )
            arguments = call.get("args") if isinstance(call.get("args"), dict) else {}
            index, call_start = self.out.begin_tool_call(call_id, name)
            if signature:
                self.out.tool_call(index).thought_signature = signature
            events.append(call_start)
            events.append(self.out.tool_call_delta(index, json_stringify(arguments)))
            events.append(self.out.end_tool_call(index, json_stringify(arguments)))
        return events

    def result(self) -> tuple[StopReason, str | None]:
        """The stop reason once the stream has ended (after `finish_events`)."""
        reason = self.finish_reason
        if reason is None and self.blocked is not None:
            # A refused prompt comes back without candidates; retrying the same prompt cannot help.
            return "error", f"The provider blocked the prompt: {self.blocked}"
        if reason is None:
            raise IncompleteStreamError()
        if reason == "STOP":
            has_calls = any(isinstance(b, ToolCall) for b in self.out.message.content)
            return ("toolUse" if has_calls else "stop"), None
        if reason == "MAX_TOKENS":
            return "length", None
        return "error", f"Provider stopped with: {reason}"

    def finish_events(self) -> list[StreamEvent]:
        """The end event of a block still open when the stream ended."""
        return self._close()


# --- errors -----------------------------------------------------------------------------------------

_STATUS_HINTS: dict[int, str] = {
    400: "check the request and the model id",
    401: "check the credentials: the API key or the application-default credentials",
    403: "check that the key or account may use this API and model (API enabled, project, billing)",
    404: "check the model id and, for Vertex AI, that GOOGLE_CLOUD_LOCATION serves this model",
    429: "rate limit or quota reached; wait and retry, or check the project's quota",
}


def describe_google_error(
    exc: BaseException, hint: Callable[[int, str], str | None] | None = None
) -> str | None:
    """One line for a Google API error: ``<status> <STATUS>: <message> (<what to check>)``, with the
    server's requested retry delay; None when ``exc`` is not an HTTP error of the API."""
    failure = http_failure(exc)
    if failure is None or not failure.status:
        return None
    return _describe_failure(exc, failure, failure.status, hint)


def _describe_failure(
    exc: BaseException, failure: HttpFailure, status: int, hint: Callable[[int, str], str | None] | None
) -> str:
    body = failure.body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code_name = str(error.get("status") or "")
        message = str(error.get("message") or "").strip() or "no message"
        delay = _retry_info_ms(error)
    elif (
        isinstance(body, list)
        and body
        and isinstance(body[0], dict)
        and isinstance(body[0].get("error"), dict)
    ):
        # The API sometimes wraps the error object in a list.
        return _describe_failure(exc, HttpFailure(status, body[0], failure.response), status, hint)
    else:
        code_name = ""
        message = (str(body).strip() if body else str(exc).strip()) or "no message"
        delay = None
    parts = [str(status)] if status != 200 else []
    if code_name:
        parts.append(f"{code_name}:")
    parts.append(message)
    text = " ".join(parts)
    advice = (hint(status, message) if hint is not None else None) or _STATUS_HINTS.get(status)
    if advice is None and status >= 500:
        advice = "the service failed; retrying may help"
    if advice:
        text += f" ({advice})"
    wait = failure.retry_after_ms()
    if wait is None:
        wait = delay
    if wait is not None:
        text += f" (retry after {wait} ms)"
    return text


def _retry_info_ms(error: JsonObject) -> int | None:
    """``google.rpc.RetryInfo.retryDelay`` (e.g. ``"31s"`` or ``"1.5s"``) in milliseconds."""
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = detail.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return max(0, int(float(delay[:-1]) * 1000))
                except ValueError:
                    return None
    return None


# --- the stream -------------------------------------------------------------------------------------

Endpoint = Callable[[Model, StreamOptions], Awaitable[tuple[EventSource, str]]]
"""Builds (or reuses) the client for a request: returns it and the request path."""


class _Chunks:
    """The decoded chunks of one response; `close` drops its connection."""

    def __init__(self, stream: SseStream) -> None:
        self.stream = stream

    async def __aiter__(self) -> AsyncIterator[JsonObject]:
        async for event, data in self.stream:
            chunk = decode_event(event, data, self.stream)
            if chunk is not None:
                yield chunk

    async def close(self) -> None:
        await self.stream.close()


async def stream_gemini(
    model: Model,
    request: LlmRequest,
    options: StreamOptions,
    *,
    endpoint: Endpoint,
    vertex: bool,
    hint: Callable[[int, str], str | None] | None = None,
) -> AsyncIterator[StreamEvent]:
    """Post the body, read the chunks, normalise them. Never raises: failures end with an `Error` event
    whose text keeps the API's status and message and says what to check (``hint`` adds per-API advice)."""
    from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused

    from ._common import apply_on_payload, as_idle_timeout, read_sdk_stream, written_once

    out = MessageBuilder(model)
    yield out.start()
    reader = Reader(out)
    try:
        # As `stream_over_http` does: building and encoding a long history makes objects that outlive
        # the request (the cached contents), so no collection walks them meanwhile, and a first big
        # conversion is frozen.
        with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):
            body = apply_on_payload(build_request(model, request, options, vertex=vertex), options)
            payload = encode_request(body)
            del body
        if options.signal is not None:
            options.signal.raise_if_aborted()
        client, path = await endpoint(model, options)
        written = written_once(options)

        async def send() -> SseStream:
            return await client.stream(path, payload, options.timeout, after_write=written)

        async def open_stream() -> _Chunks:
            if options.max_retries > 0:  # pi retries a refused Gemini request as the others
                from ._provider_retry import with_provider_retries

                return _Chunks(await with_provider_retries(send, options))
            return _Chunks(await send())

        async for chunk in read_sdk_stream(open_stream, options.signal):
            for event in reader.handle(chunk):
                yield event
        for event in reader.finish_events():
            yield event
        stop_reason, error_message = reader.result()
    except Exception as exc:
        exc = as_idle_timeout(exc, options.timeout)
        from ._google_adc import SetupError

        aborted = options.signal is not None and options.signal.aborted
        text = (
            None if aborted else str(exc) if isinstance(exc, SetupError) else describe_google_error(exc, hint)
        )
        if text is None:
            yield out.fail(exc, options.signal)
        else:
            yield out.finish("error", text)
        return
    yield out.finish(stop_reason, error_message)
