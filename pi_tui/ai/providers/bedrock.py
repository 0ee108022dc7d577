"""Amazon Bedrock (``bedrock-converse-stream``) over pi-tui's own wire client (`pi_tui.ai.wire`).

``POST {endpoint}/model/{modelId}/converse-stream`` with a JSON body (`_bedrock_request`), signed with
SigV4 (service ``bedrock``) or sent with a Bedrock API key as ``Authorization: Bearer``
(`_aws_credentials` finds which, the region and the endpoint). The answer is an AWS binary event
stream (`_aws_eventstream`) of JSON events: ``messageStart``, ``contentBlockStart/Delta/Stop`` (text,
``toolUse`` with streamed JSON input, ``reasoningContent`` with text, signature or encrypted
``redactedContent``), ``messageStop`` (the stop reason), ``metadata`` (usage with cache reads and
writes); a modelled failure arrives as an ``exception`` message and ends the answer with pi's prefix
("Throttling error: …").
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..types import Model, StopReason
from ._common import (
    HttpFailure,
    IncompleteStreamError,
    MessageBuilder,
    http_failure,
    merged_headers,
    retry_after_ms,
)

if TYPE_CHECKING:
    from ..wire import WireResponse

__all__ = ["BedrockStreamError", "Reader", "describe_bedrock_error", "stream_bedrock"]

REDACTED_PLACEHOLDER = "[Reasoning redacted]"
_PREFIXES = {
    "InternalServerException": "Internal server error",
    "ModelStreamErrorException": "Model stream error",
    "ValidationException": "Validation error",
    "ThrottlingException": "Throttling error",
    "ServiceUnavailableException": "Service unavailable",
}
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}
_RESERVED = ("authorization", "host")
_DATA_RETENTION_DOCS = "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html"


class BedrockStreamError(Exception):
    """An exception message inside the event stream (``throttlingException``, …)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.message = message


# --- reading the events -----------------------------------------------------------------------------


class Reader:
    """Turns ConverseStream events into normalised events, as pi reads them."""

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.blocks: dict[int, int] = {}  # Bedrock's contentBlockIndex -> our content index
        self.kinds: dict[int, str] = {}
        self.redacted: dict[int, list[bytes]] = {}
        self.stop: StopReason | None = None
        self.error_message: str | None = None

    def handle(self, event_type: str, event: JsonObject) -> list[StreamEvent]:
        out = self.out
        if event_type == "contentBlockStart":
            start = event.get("start")
            tool = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(tool, dict):
                index, started = out.begin_tool_call(
                    str(tool.get("toolUseId") or ""), str(tool.get("name") or "")
                )
                self.blocks[int(event.get("contentBlockIndex") or 0)] = index
                self.kinds[index] = "toolCall"
                return [started]
            return []
        if event_type == "contentBlockDelta":
            return self._delta(int(event.get("contentBlockIndex") or 0), event.get("delta"))
        if event_type == "contentBlockStop":
            return self._stop_block(int(event.get("contentBlockIndex") or 0))
        if event_type == "messageStop":
            reason = event.get("stopReason")
            out.message.raw_stop_reason = reason if isinstance(reason, str) else None
            mapped = _STOP_REASONS.get(reason) if isinstance(reason, str) else None
            self.stop = mapped or "error"
            self.error_message = None if mapped else (f"Provider stopped with: {reason}" if reason else None)
            return []
        if event_type == "metadata":
            usage = event.get("usage")
            if isinstance(usage, dict):
                details = usage.get("cacheDetails")
                one_hour = 0
                for detail in details if isinstance(details, list) else []:
                    if isinstance(detail, dict) and detail.get("ttl") == "1h":
                        one_hour += int(detail.get("inputTokens") or 0)
                out.cache_write_1h = one_hour
                if isinstance(details, list):  # recorded as pi records it: only when AWS splits the writes
                    out.message.usage.cache_write_1h = one_hour
                out.set_usage(
                    input=int(usage.get("inputTokens") or 0),
                    output=int(usage.get("outputTokens") or 0),
                    cache_read=int(usage.get("cacheReadInputTokens") or 0),
                    cache_write=int(usage.get("cacheWriteInputTokens") or 0),
                )
            return []
        return []  # messageStart and events added later carry nothing to show

    def _delta(self, block_index: int, delta: Any) -> list[StreamEvent]:
        if not isinstance(delta, dict):
            return []
        out = self.out
        index = self.blocks.get(block_index)
        events: list[StreamEvent] = []
        if isinstance(delta.get("text"), str):
            if index is None:
                index, started = out.begin_text()
                self.blocks[block_index], self.kinds[index] = index, "text"
                events.append(started)
            if self.kinds[index] == "text":
                events.append(out.text_delta(index, delta["text"]))
            return events
        tool = delta.get("toolUse")
        if isinstance(tool, dict):
            if index is not None and self.kinds[index] == "toolCall":
                events.append(out.tool_call_delta(index, str(tool.get("input") or "")))
            return events
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            if index is None:
                index, thinking_start = out.begin_thinking(signature="")
                self.blocks[block_index], self.kinds[index] = index, "thinking"
                events.append(thinking_start)
            if self.kinds[index] != "thinking":
                return events
            block = out.thinking(index)
            if isinstance(reasoning.get("text"), str) and reasoning["text"]:
                events.append(out.thinking_delta(index, reasoning["text"]))
            signature = reasoning.get("signature")
            if isinstance(signature, str) and signature and not block.redacted:
                block.thinking_signature = (block.thinking_signature or "") + signature
            redacted = reasoning.get("redactedContent")
            if isinstance(redacted, str) and redacted:
                if not block.redacted:
                    block.redacted = True
                    block.thinking_signature = ""
                    events.append(out.thinking_delta(index, REDACTED_PLACEHOLDER))
                self.redacted.setdefault(index, []).append(base64.b64decode(redacted))
        return events

    def _flush_redacted(self, index: int) -> None:
        chunks = self.redacted.pop(index, None)
        if chunks:
            self.out.thinking(index).thinking_signature = base64.b64encode(b"".join(chunks)).decode()

    def _stop_block(self, block_index: int) -> list[StreamEvent]:
        index = self.blocks.pop(block_index, None)
        if index is None:
            return []
        kind = self.kinds[index]
        if kind == "text":
            return [self.out.end_text(index)]
        if kind == "thinking":
            self._flush_redacted(index)
            return [self.out.end_thinking(index)]
        return [self.out.end_tool_call(index)]

    def finish(self) -> list[StreamEvent]:
        """Blocks the stream left open are closed (pi finalises them too)."""
        events: list[StreamEvent] = []
        for block_index in list(self.blocks):
            events.extend(self._stop_block(block_index))
        return events

    def result(self) -> tuple[StopReason, str | None]:
        if self.stop is None:
            raise IncompleteStreamError()
        return self.stop, self.error_message


# --- errors -----------------------------------------------------------------------------------------


def _error_name(failure: HttpFailure) -> str:
    kind: object = failure.header("x-amzn-errortype")
    body = failure.body
    if not kind and isinstance(body, dict):
        kind = body.get("__type") or body.get("code")
    text = str(kind or "")
    return text.split(":", 1)[0].rsplit("#", 1)[-1]


def _body_message(body: Any) -> str | None:
    if isinstance(body, dict):
        for key in ("message", "Message"):
            if isinstance(body.get(key), str) and body[key].strip():
                return str(body[key]).strip()
    return None


def _hint(name: str, status: int | None, message: str, region: str) -> str | None:
    lower = message.lower()
    if name in ("UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException") or (
        "signature" in lower or "security token" in lower
    ):
        return (
            "check the AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for "
            "temporary keys), AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK, and that the system clock is right"
        )
    if name == "AccessDeniedException" or status == 403:
        return (
            f"check that the account has access to this model in {region} (Bedrock console, Model access) and "
            "that the credentials may call bedrock:InvokeModelWithResponseStream"
        )
    if name == "ResourceNotFoundException" or status == 404:
        return f"check the model id and that region {region} serves it (AWS_REGION)"
    if name == "ValidationException" and ("model identifier" in lower or "inference profile" in lower):
        return (
            f"check the model id and the region ({region}): some models need an inference profile id "
            "such as us.anthropic.… or eu.anthropic.…"
        )
    if name == "ThrottlingException" or status == 429:
        return "rate limit or quota reached; wait and retry, or ask AWS for a higher quota"
    if name in ("ServiceUnavailableException", "InternalServerException") or (status or 0) >= 500:
        return "the service failed; retrying may help"
    return None


def describe_bedrock_error(exc: BaseException, region: str) -> str | None:
    """One line for a Bedrock failure: pi's prefix and the provider's message, the HTTP status and what to
    check; None when ``exc`` is not from Bedrock (transport errors keep the shared wording)."""
    if isinstance(exc, BedrockStreamError):
        name, message, status = exc.name, exc.message, None
    else:
        failure = http_failure(exc)
        status = failure.status if failure is not None else None
        if failure is None or status is None:
            return None
        name = _error_name(failure)
        body = failure.body
        message = _body_message(body) or (str(body).strip() if body else "") or f"HTTP {status}"
    prefix = _PREFIXES.get(name, name)
    text = f"{prefix}: {message}" if prefix else f"{status}: {message}"
    if "data retention mode" in message.lower():
        text += f" See {_DATA_RETENTION_DOCS} for supported data retention modes."
    notes = [f"HTTP {status}"] if status else []
    advice = _hint(name, status, message, region)
    if advice:
        notes.append(advice)
    if notes:
        text += f" ({'; '.join(notes)})"
    wait = retry_after_ms(exc)
    if wait is not None:
        text += f" (retry after {wait} ms)"
    return text


# --- the stream -------------------------------------------------------------------------------------


class _Events:
    """The decoded ``(event type, payload)`` pairs of one response; exceptions raise."""

    def __init__(self, response: WireResponse) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[tuple[str, JsonObject]]:
        from ._aws_eventstream import decode_stream

        async for message in decode_stream(self.response.aiter_bytes()):
            kind = message.header(":message-type")
            try:
                payload = json_safe.loads(message.payload or b"{}", limit=json_safe.MAX_RECORD_DEPTH)
            except ValueError:
                payload = {}
            data = payload if isinstance(payload, dict) else {}
            if kind == "exception":
                name = message.header(":exception-type") or "UnknownException"
                text = _body_message(data) or message.payload.decode("utf-8", "replace")
                raise BedrockStreamError(name[:1].upper() + name[1:], text)
            if kind == "error":
                raise BedrockStreamError(
                    message.header(":error-code") or "UnknownError", message.header(":error-message") or ""
                )
            yield message.header(":event-type") or "", data

    async def close(self) -> None:
        await self.response.aclose()


def model_path(model_id: str) -> str:
    """The request path: the model id (or ARN) percent-encoded as one segment, as the SDK sends it."""
    return f"/model/{quote(model_id, safe='-_.~')}/converse-stream"


async def stream_bedrock(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from Amazon Bedrock. Never raises: failures end with an `Error` event."""
    from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused

    from ..auth import AuthStorage
    from ..wire import WireClient, without_deleted
    from ._aws_credentials import AwsSetupError, endpoint_for, environment, resolve_auth, resolve_region
    from ._bedrock_request import BedrockRequestError, build_request, encode_request
    from ._common import apply_on_payload, as_idle_timeout, cached_client, read_sdk_stream, written_once

    out = MessageBuilder(model)
    yield out.start()
    reader = Reader(out)
    region = "us-east-1"
    try:
        stored = AuthStorage().stored_env(model.provider)
        env = environment(stored)
        region = resolve_region(model.id, model.base_url, env)
        # As `stream_over_http` does: building and encoding a long history makes objects that outlive
        # the request (the cached messages), so no collection walks them meanwhile, and a first big
        # conversion is frozen.
        with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):
            body = apply_on_payload(build_request(model, request, options), options)
            payload = encode_request(body)
            del body
        if options.signal is not None:
            options.signal.raise_if_aborted()
        auth = await resolve_auth(
            options.api_key, env, stored_profile=bool(stored.get("AWS_PROFILE")), region=region
        )
        endpoint = endpoint_for(model.base_url, region, env)
        parts = urlsplit(endpoint)
        prefix = parts.path.rstrip("/")
        path = model_path(model.id)
        custom = {
            k: v
            for k, v in without_deleted(merged_headers(model, options)).items()
            if not k.lower().startswith("x-amz-") and k.lower() not in _RESERVED
        }
        headers = {"content-type": "application/json", **custom}
        if auth.bearer is not None:
            headers["authorization"] = f"Bearer {auth.bearer}"
        else:
            from ._sigv4 import sign_request

            assert auth.credentials is not None
            host = parts.hostname or ""
            host = f"[{host}]" if ":" in host else host
            if parts.port is not None:
                host = f"{host}:{parts.port}"
            headers.update(
                sign_request(
                    method="POST",
                    host=host,
                    path=prefix + path,
                    headers=headers,
                    body=payload,
                    credentials=auth.credentials,
                    region=region,
                    service="bedrock",
                )
            )
        client = await cached_client("bedrock", endpoint, "", {}, lambda: WireClient(endpoint, {}))

        # The conversions a long first request left to keep are kept while the server reads it.
        written = written_once(options)

        async def open_stream() -> _Events:
            return _Events(await client.post(path, payload, headers, options.timeout, after_write=written))

        async for event_type, event in read_sdk_stream(open_stream, options.signal):
            for item in reader.handle(event_type, event):
                yield item
        for item in reader.finish():
            yield item
        stop_reason, error_message = reader.result()
    except Exception as exc:
        exc = as_idle_timeout(exc, options.timeout)
        aborted = options.signal is not None and options.signal.aborted
        if aborted:
            yield out.fail(exc, options.signal)
            return
        if isinstance(exc, AwsSetupError | BedrockRequestError):
            yield out.finish("error", str(exc))
            return
        text = describe_bedrock_error(exc, region)
        yield out.fail(exc, options.signal) if text is None else out.finish("error", text)
        return
    yield out.finish(stop_reason, error_message)
