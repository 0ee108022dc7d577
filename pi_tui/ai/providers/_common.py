"""Helpers every HTTP provider shares.

- `MessageBuilder` grows the partial `AssistantMessage` and produces the normalised events for it.
- `read_sdk_stream` runs the HTTP stream in a reader task, so an `AbortSignal` (possibly fired from
  another thread) closes the response at once instead of waiting for the next server byte.
- `describe_error` turns any HTTP / transport failure (ours from `pi_tui.ai.wire`, or an SDK's) into one
  line that keeps the HTTP status and the provider's own text, which is what `pi_tui.ai.errors` classifies.
- `cached_client` keeps one `WireClient` per (loop, base URL, key, headers): their keep-alive connection
  pools are bound to the event loop that used them.
- `stream_over_http` posts a ready JSON body and normalises the provider's events.

Replaying a stored history safely (`prepare_messages`) lives in ``_history.py``.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from pi_tui.util import json_safe
from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused
from pi_tui.util.json_types import JsonObject, JsonValue

from ..cost import calculate_cost
from ..stream import (
    AbortedError,
    AbortSignal,
    Done,
    Error,
    LlmRequest,
    ProviderError,
    StreamEvent,
    StreamOptions,
    StreamStart,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from ..types import (
    AssistantMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from ._partial_json import PartialJson
from ._wire_cache import dumps

if TYPE_CHECKING:
    from ..wire import ErrorResponse, SseStream, WireClient

__all__ = [
    "ABORTED_MESSAGE",
    "HttpFailure",
    "IdleTimeoutError",
    "as_idle_timeout",
    "IncompleteStreamError",
    "MessageBuilder",
    "cached_client",
    "close_clients",
    "END_OF_STREAM",
    "EventSource",
    "stream_over_http",
    "describe_error",
    "http_failure",
    "json_stringify",
    "merged_headers",
    "read_sdk_stream",
    "retry_after_ms",
]

log = logging.getLogger(__name__)

ABORTED_MESSAGE = "Request was aborted"


class IdleTimeoutError(TimeoutError):
    """The provider sent nothing (no headers, or no next bytes of the answer) for the idle timeout.

    The message names the setting that sets the limit, so a user on a slow provider knows what to raise.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            f"No data from the provider for {seconds:g} s (httpIdleTimeoutMs = {round(seconds * 1000)}): "
            "request timed out"
        )


def as_idle_timeout(exc: Exception, timeout: float | None) -> Exception:
    """``exc``, or for the HTTP client's read timeout (``ReadTimeout``, named only: the clients differ)
    the `IdleTimeoutError` that names the limit: ``timeout``, or the wire's default without one."""
    if type(exc).__name__ != "ReadTimeout":
        return exc
    from ..wire import DEFAULT_TIMEOUT

    return IdleTimeoutError(timeout or DEFAULT_TIMEOUT)


class IncompleteStreamError(Exception):
    """The server closed the stream cleanly but never said why the message ended."""

    def __init__(self) -> None:
        super().__init__("stream ended without a stop reason (the response was cut off)")


# --- the partial message and its events -----------------------------------------------------------


class MessageBuilder:
    """Owns the growing `AssistantMessage` and emits events that point at it.

    Every event carries the same live message object as ``partial``, as pi does; blocks are appended in
    stream order, so a block's ``content_index`` is its position in ``message.content``.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self.message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        self.cache_write_1h = 0  # Anthropic's 1-hour writes, priced at 2x input
        self._json: dict[int, PartialJson] = {}
        self._server_usage: Usage | None = None

    def start(self) -> StreamStart:
        return StreamStart(partial=self.message)

    # text

    def begin_text(self) -> tuple[int, TextStart]:
        self.message.content.append(TextContent(text=""))
        index = len(self.message.content) - 1
        return index, TextStart(content_index=index, partial=self.message)

    def text_delta(self, index: int, delta: str) -> TextDelta:
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        block.text += delta
        return TextDelta(content_index=index, delta=delta, partial=self.message)

    def end_text(self, index: int, signature: str | None = None) -> TextEnd:
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        if signature:
            block.text_signature = signature
        return TextEnd(content_index=index, content=block.text, partial=self.message)

    # thinking

    def begin_thinking(
        self, *, signature: str | None = None, redacted: bool = False
    ) -> tuple[int, ThinkingStart]:
        block = ThinkingContent(
            thinking="", thinking_signature=signature, redacted=True if redacted else None
        )
        self.message.content.append(block)
        index = len(self.message.content) - 1
        return index, ThinkingStart(content_index=index, partial=self.message)

    def thinking_delta(self, index: int, delta: str) -> ThinkingDelta:
        block = self.thinking(index)
        block.thinking += delta
        return ThinkingDelta(content_index=index, delta=delta, partial=self.message)

    def thinking(self, index: int) -> ThinkingContent:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        return block

    def end_thinking(self, index: int) -> ThinkingEnd:
        block = self.thinking(index)
        return ThinkingEnd(content_index=index, content=block.thinking, partial=self.message)

    # tool calls

    def begin_tool_call(self, call_id: str, name: str) -> tuple[int, ToolCallStart]:
        self.message.content.append(ToolCall(id=call_id, name=name, arguments={}))
        index = len(self.message.content) - 1
        self._json[index] = PartialJson()
        return index, ToolCallStart(content_index=index, partial=self.message)

    def tool_call(self, index: int) -> ToolCall:
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        return block

    def tool_call_delta(self, index: int, fragment: str) -> ToolCallDelta:
        parser = self._json[index]
        parser.feed(fragment)
        partial = parser.value()
        if isinstance(partial, dict):
            self.tool_call(index).arguments = partial
        return ToolCallDelta(content_index=index, delta=fragment, partial=self.message)

    def end_tool_call(self, index: int, final_json: str | None = None) -> ToolCallEnd:
        """Parse the complete arguments. Invalid JSON gives ``{}`` and keeps the text as ``rawArguments``."""
        call = self.tool_call(index)
        raw = final_json if final_json is not None else self._json[index].text
        arguments, ok = parse_arguments(raw)
        call.arguments = arguments
        if not ok:
            # Kept on the block (an extra field of the record) so a UI or log can show what the model sent.
            setattr(call, "rawArguments", raw)  # noqa: B010 (an extra field, not a declared attribute)
        return ToolCallEnd(content_index=index, tool_call=call, partial=self.message)

    def tool_json(self, index: int) -> str:
        return self._json[index].text

    # usage and the end

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        reasoning: int | None = None,
    ) -> None:
        usage = self.message.usage
        if reasoning is not None:  # a part of ``output``: not added to the total
            usage.reasoning = reasoning
        if input is not None:
            usage.input = input
        if output is not None:
            usage.output = output
        if cache_read is not None:
            usage.cache_read = cache_read
        if cache_write is not None:
            usage.cache_write = cache_write
        # Total and cost as soon as counts arrive (Anthropic's message_start), as pi does: the partial
        # message a live display shows is then not zero until the end.
        self._settle_usage()

    def set_server_usage(self, usage: Usage) -> None:
        """Take the server's usage as final, its total and cost included (an API that prices the answer
        itself); nothing is recomputed from the model's prices."""
        self._server_usage = usage
        self.message.usage = usage

    def _settle_usage(self) -> None:
        if self._server_usage is not None:
            self.message.usage = self._server_usage
            return
        usage = self.message.usage
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        usage.cost = calculate_cost(self.model, usage, cache_write_1h=self.cache_write_1h)

    def finish(self, stop_reason: StopReason, error_message: str | None = None) -> Done | Error:
        """The final event for a stream the server ended on purpose."""
        self._settle_usage()
        self.message.stop_reason = stop_reason
        if stop_reason in ("error", "aborted"):
            self.message.error_message = error_message or "unknown error"
            return Error(reason=stop_reason, error=self.message)
        return Done(reason=stop_reason, message=self.message)  # type: ignore[arg-type]

    def fail(
        self,
        exc: BaseException,
        signal: AbortSignal | None,
        describe: Callable[[BaseException], str] | None = None,
    ) -> Error:
        """The final event for a stream that broke: aborted if the signal fired, else an error whose text
        is ``describe(exc)`` (default `describe_error`)."""
        if (signal is not None and signal.aborted) or isinstance(exc, AbortedError):
            event = self.finish("aborted", ABORTED_MESSAGE)
        else:
            log.debug("provider stream failed", exc_info=exc)
            event = self.finish("error", (describe or describe_error)(exc))
        assert isinstance(event, Error)
        return event


def json_stringify(value: JsonValue) -> str:
    """``value`` as JavaScript's ``JSON.stringify`` writes it: compact, non-ASCII kept as is.

    pi serialises tool-call arguments this way; writing them byte for byte as pi does keeps a session's
    cached prompt prefix when it moves between pi and pi-tui.
    """
    return dumps(value)


def parse_arguments(raw: str) -> tuple[JsonObject, bool]:
    """Final tool arguments: ``({}, True)`` for an empty string, ``({}, False)`` for anything not an object
    (or nested deeper than `json_safe.MAX_DEPTH`)."""
    if not raw.strip():
        return {}, True
    try:
        value = json_safe.loads(raw)
    except ValueError:  # not JSON, or nested deeper than json_safe.MAX_DEPTH
        return {}, False
    if isinstance(value, dict):
        return value, True
    return {}, False


# --- running an SDK stream with abort ------------------------------------------------------------

_ITEM, _END, _FAIL, _ABORT = range(4)


class EventSource(Protocol):
    """What `stream_over_http` posts through: a `pi_tui.ai.wire.WireClient`, or a wrapper of one."""

    async def stream(
        self,
        path: str,
        body: bytes,
        timeout: float | None = None,
        *,
        after_write: Callable[[], None] | None = None,
    ) -> SseStream: ...


_T_co = TypeVar("_T_co", covariant=True)


class ClosableStream(Protocol[_T_co]):
    """A provider's open answer: its items in order, and `close` to drop the connection."""

    def __aiter__(self) -> AsyncIterator[_T_co]: ...

    async def close(self) -> None: ...


async def read_sdk_stream(
    open_stream: Callable[[], Awaitable[ClosableStream[_T_co]]], signal: AbortSignal | None
) -> AsyncIterator[_T_co]:
    """Yield the items of a stream; raise its failure; raise `AbortedError` when ``signal`` fires.

    The stream is read in a reader task that is cancelled on abort (which closes the HTTP response), so
    an abort does not wait for the next byte from a slow or stalled server.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()

    async def reader() -> None:
        stream: ClosableStream[_T_co] | None = None
        try:
            stream = await open_stream()
            async for item in stream:
                queue.put_nowait((_ITEM, item))
            queue.put_nowait((_END, None))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            queue.put_nowait((_FAIL, exc))
        finally:
            if stream is not None:
                await _close_quietly(stream)

    task = loop.create_task(reader())

    def abort_now() -> None:
        task.cancel()
        queue.put_nowait((_ABORT, None))

    def on_abort() -> None:
        # AbortSignal listeners may run on any thread.
        try:
            loop.call_soon_threadsafe(abort_now)
        except RuntimeError:  # loop already closed: nothing left to stop
            pass

    unsubscribe = signal.add_listener(on_abort) if signal is not None else None
    try:
        while True:
            kind, payload = await queue.get()
            if signal is not None and signal.aborted:
                raise AbortedError(signal.reason or ABORTED_MESSAGE)
            if kind == _ITEM:
                yield payload
            elif kind == _END:
                return
            elif kind == _FAIL:
                raise payload
            else:
                raise AbortedError(ABORTED_MESSAGE)
    finally:
        if unsubscribe is not None:
            unsubscribe()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _close_quietly(stream: ClosableStream[object]) -> None:
    try:
        await stream.close()
    except Exception:  # closing a broken connection may fail; the stream is over either way
        log.debug("closing a provider stream failed", exc_info=True)


def written_once(options: StreamOptions) -> Callable[[], None]:
    """What runs once a request's body is written: the deferred history is kept (`keep_deferred`) and
    the caller's ``after_write`` runs, the first time only (a retried request was written before: its
    work is done)."""
    from ._wire_cache import keep_deferred

    wrote = False

    def written() -> None:
        nonlocal wrote
        if wrote:
            return
        wrote = True
        keep_deferred()
        if options.after_write is not None:
            options.after_write()

    return written


async def stream_over_http(
    model: Model,
    request: LlmRequest,
    options: StreamOptions,
    *,
    build_body: Callable[[Model, LlmRequest, StreamOptions], JsonObject],
    get_client: Callable[[Model, StreamOptions], Awaitable[EventSource]],
    path: str,
    decode: Callable[[str | None, str, SseStream], Any],
    make_reader: Callable[[MessageBuilder], Any],
    encode: Callable[[JsonObject], bytes] | None = None,
    describe: Callable[[BaseException], str] | None = None,
    close_blocks: Callable[[Any], list[StreamEvent]] | None = None,
    provider_retries: bool = False,
) -> AsyncIterator[StreamEvent]:
    """The shape every HTTP provider shares: build the body, post it, decode its events, normalise them.

    ``decode(event, data, stream)`` turns one server-sent event into the provider's JSON event (``None``
    to skip it, `END_OF_STREAM` to stop) or raises the provider's in-stream error. ``encode`` turns the
    body into bytes (default: plain JSON; providers splice cached message JSON); ``describe`` words a
    failure (default `describe_error`); ``close_blocks(reader)`` gives the events that end the blocks
    still open once the stream is over (for APIs whose blocks end with the stream). With
    ``provider_retries``, a refused request is sent again up to ``options.max_retries`` times
    (`pi_tui.ai.providers._provider_retry`). Never raises: any failure (including building the body or the
    client) ends with an `Error` event.
    """
    from ..wire import encode_body

    out = MessageBuilder(model)
    yield out.start()
    try:
        # Building and encoding a long history makes objects that outlive the request (the cached
        # wire parts): no collection walks them meanwhile, and a first big conversion is frozen.
        with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):
            body = apply_on_payload(build_body(model, request, options), options)
            payload = (encode or encode_body)(body)
            del body  # what the encoder keeps of it (for the next body) is the encoder's to keep
        if options.signal is not None:  # skip building a client for nothing
            options.signal.raise_if_aborted()
        client = await get_client(model, options)
        reader = make_reader(out)

        written = written_once(options)

        async def send() -> SseStream:
            return await client.stream(path, payload, options.timeout, after_write=written)

        async def open_stream() -> Any:
            # The conversions a long first request left to keep are kept while the server reads it.
            if provider_retries and options.max_retries > 0:
                from ._provider_retry import with_provider_retries

                return _Decoded(await with_provider_retries(send, options), decode)
            return _Decoded(await send(), decode)

        async for raw in read_sdk_stream(open_stream, options.signal):
            for event in reader.handle(raw):
                yield event
        if close_blocks is not None:
            for event in close_blocks(reader):
                yield event
        stop_reason, error_message = reader.result()
    except Exception as exc:
        yield out.fail(as_idle_timeout(exc, options.timeout), options.signal, describe)
        return
    yield out.finish(stop_reason, error_message)


END_OF_STREAM = object()  # returned by a decoder at the API's end marker (OpenAI's ``[DONE]``)


class _Decoded:
    """An `SseStream` seen through a provider's event decoder."""

    def __init__(self, stream: SseStream, decode: Callable[[str | None, str, SseStream], Any]) -> None:
        self.stream = stream
        self.decode = decode

    async def __aiter__(self) -> AsyncIterator[Any]:
        decode = self.decode
        stream = self.stream
        done = False
        async for event, data in stream:
            if done:
                continue  # drain what follows the end marker, so the connection can be reused
            item = decode(event, data, stream)
            if item is END_OF_STREAM:
                done = True
            elif item is not None:
                yield item

    async def close(self) -> None:
        await self.stream.close()


def apply_on_payload(body: JsonObject, options: StreamOptions) -> JsonObject:
    if options.on_payload is None:
        return body
    replaced = options.on_payload(body)
    return body if replaced is None else replaced


# --- clients -------------------------------------------------------------------------------------


class _LoopClients:
    """The cached clients of one event loop, closed when that loop shuts down."""

    def __init__(self) -> None:
        self.clients: dict[tuple[Any, ...], WireClient] = {}
        self.closer: AsyncIterator[None] | None = None


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = weakref.WeakKeyDictionary()
_MAX_CLIENTS_PER_LOOP = 8
_closing: set[asyncio.Task[Any]] = set()


async def cached_client(
    kind: str,
    base_url: str,
    api_key: str,
    headers: Mapping[str, str | None],
    factory: Callable[[], WireClient],
) -> WireClient:
    """One client per (running loop, kind, base URL, key, headers), built on first use.

    Clients keep connections alive between requests, and those connections belong to the loop. So the
    clients of a loop are closed when it shuts down: `asyncio.run` (and pytest-asyncio, and Textual)
    call ``loop.shutdown_asyncgens()``, which finalises the sentinel generator started here.
    """
    loop = asyncio.get_running_loop()
    holder = _CLIENTS.get(loop)
    if holder is None:
        holder = _LoopClients()
        _CLIENTS[loop] = holder
        holder.closer = _close_at_shutdown(loop, holder)
        await holder.closer.__anext__()  # first iteration registers it with the loop's asyncgen hooks
    key = (kind, base_url, api_key, tuple(sorted(headers.items(), key=lambda item: item[0])))
    client = holder.clients.get(key)
    if client is None:
        if len(holder.clients) >= _MAX_CLIENTS_PER_LOOP:
            oldest = next(iter(holder.clients))
            _close_later(holder.clients.pop(oldest))
        client = factory()
        holder.clients[key] = client
    return client


async def _close_at_shutdown(loop: asyncio.AbstractEventLoop, holder: _LoopClients) -> AsyncIterator[None]:
    try:
        yield  # never resumed: this generator only waits to be closed
    finally:
        if _CLIENTS.get(loop) is holder:
            del _CLIENTS[loop]
        clients = list(holder.clients.values())
        holder.clients.clear()
        for client in clients:
            await _close_client(client)


async def _close_client(client: WireClient) -> None:
    try:
        await client.close()
    except Exception:  # a broken pool must not stop the others from closing
        log.debug("closing a provider client failed", exc_info=True)


def _close_later(client: WireClient) -> None:
    task = asyncio.get_running_loop().create_task(_close_client(client))
    _closing.add(task)
    task.add_done_callback(_closing.discard)


async def close_clients() -> None:
    """Close every cached client of the running loop now (they are rebuilt on next use)."""
    holder = _CLIENTS.get(asyncio.get_running_loop())
    if holder is None:
        return
    clients = list(holder.clients.values())
    holder.clients.clear()
    for client in clients:
        await _close_client(client)


def merged_headers(
    model: Model, options: StreamOptions, base: dict[str, str] | None = None
) -> dict[str, str | None]:
    """Provider defaults, then the model's headers, then the per-call ones (later wins).

    Configured ``!command`` values run now, once per request (a rotated token reaches the next one). A
    per-call ``None`` stays in the result: it deletes that header, whatever its case, when the client is
    built (`pi_tui.ai.wire.without_deleted`).
    """
    merged: dict[str, str | None] = dict(base or {})
    if model.headers:
        from ..auth import resolve_request_headers

        merged.update(resolve_request_headers(model.headers))
    merged.update(options.headers or {})
    return merged


# --- errors ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpFailure:
    """What the server said when it refused a request: the part of an error every describer reads.

    Attributes:
        status: the HTTP status (``200`` for an error event inside a streamed answer, ``None`` when the
            server gave none).
        body: the parsed JSON error, or its text.
        response: the answer itself (headers for ``retry-after``, its text), when the error kept it.
    """

    status: int | None
    body: JsonValue
    response: ErrorResponse | None = None

    def header(self, name: str) -> str | None:
        """One response header (``None`` when absent or when there is no response)."""
        return self.response.headers.get(name) if self.response is not None else None

    @property
    def text(self) -> str:
        """The answer's text ("" without a response)."""
        return self.response.text if self.response is not None else ""

    def retry_after_ms(self) -> int | None:
        """The wait the server asked for (``retry-after-ms``, or ``retry-after`` in seconds), if any."""
        try:
            if (value := self.header("retry-after-ms")) is not None:
                return max(0, int(float(value)))
            if (value := self.header("retry-after")) is not None:
                return max(0, int(float(value) * 1000))
        except (TypeError, ValueError):  # an HTTP date: leave the wait to the caller's backoff
            return None
        return None


@runtime_checkable
class _SdkError(Protocol):
    """The official SDKs' ``APIError`` (``anthropic``, ``openai``; an error event in a stream, with the
    parsed ``body`` and no status). The providers never raise it; a provider an extension writes with an
    SDK, and the tests that hold the SDKs up as oracles, do."""

    body: Any


@runtime_checkable
class _SdkStatusError(_SdkError, Protocol):
    """The official SDKs' ``APIStatusError``: the same three fields as our `HttpStatusError`."""

    status_code: int
    response: ErrorResponse


def http_failure(exc: BaseException) -> HttpFailure | None:
    """The server's answer behind ``exc``, or ``None`` when ``exc`` is no HTTP error (a transport
    failure, an abort, a provider's own error)."""
    from ..wire import HttpStatusError

    if isinstance(exc, HttpStatusError):
        return HttpFailure(exc.status_code, exc.body, exc.response)
    if isinstance(exc, _SdkStatusError):
        return HttpFailure(exc.status_code, exc.body, exc.response)
    if isinstance(exc, _SdkError):
        return HttpFailure(None, exc.body)
    return None


def http_status(exc: BaseException) -> int | None:
    """The HTTP status behind ``exc`` (see `http_failure`), or ``None``."""
    failure = http_failure(exc)
    return failure.status if failure is not None else None


_CONNECT_CHECK = (
    "check the network or proxy settings, and the provider's baseUrl in models.json if you set one"
)


def describe_error(exc: BaseException) -> str:
    """One line that keeps the HTTP status, the provider's error type/code and its message."""
    if isinstance(exc, IncompleteStreamError | AbortedError | IdleTimeoutError):
        return str(exc)
    if isinstance(exc, ProviderError):
        return f"{exc.status} {exc}" if exc.status else str(exc)
    failure = http_failure(exc)
    status = failure.status if failure is not None else None
    kind, message = _error_parts(exc, failure.body if failure is not None else None)
    parts: list[str] = []
    if isinstance(status, int) and status != 200:  # 200 = an error event inside a streamed answer
        parts.append(str(status))
    if kind:
        parts.append(f"{kind}:")
    parts.append(message)
    text = " ".join(p for p in parts if p)
    retry_ms = failure.retry_after_ms() if failure is not None else None
    if retry_ms is not None:
        text += f" (retry after {retry_ms} ms)"
    return text


def _error_parts(exc: BaseException, body: JsonValue) -> tuple[str, str]:
    """The (type or code, message) of an HTTP/SDK error, from its parsed body when there is one."""
    error = body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type") or ""
        code = error.get("code")
        if isinstance(code, str) and code and code != kind:
            kind = f"{kind} ({code})" if kind else code
        return str(kind), error["message"]
    from ..wire import HttpStatusError

    name = type(exc).__name__
    text = str(exc).strip()
    if isinstance(exc, HttpStatusError):  # the body was not a JSON error: keep its text
        return "", text
    cause = exc.__cause__ or exc.__context__
    if name in ("APIConnectionError", "APITimeoutError") and cause is not None:
        # openai/anthropic wrap transport failures; the cause says what actually happened.
        detail = str(cause).strip() or type(cause).__name__
        return "", f"{text} ({type(cause).__name__}: {detail})"
    module = type(exc).__module__.split(".")[0]
    if module.startswith("httpx") or isinstance(exc, OSError | asyncio.TimeoutError):
        label = (
            "Request timed out" if "Timeout" in name or isinstance(exc, TimeoutError) else "Connection error"
        )
        described = f"{label} ({name}: {text or 'no detail'})"
        if name in ("ConnectError", "ConnectTimeout"):  # no connection at all: nothing was sent
            described += f"; {_CONNECT_CHECK}"
        return "", described
    return "", f"{name}: {text}" if text else name


def retry_after_ms(exc: BaseException) -> int | None:
    """The wait the server asked for (``retry-after-ms`` or ``retry-after`` seconds), if any."""
    failure = http_failure(exc)
    return failure.retry_after_ms() if failure is not None else None
