"""OpenAI Codex (``openai-codex-responses``): the ChatGPT subscription backend, over pi-tui's own wire
client, as pi 0.87.1 speaks it over SSE.

The input items and the stream reading are OpenAI Responses' (`openai_responses`); the backend differs in:

- URL ``{baseUrl}/codex/responses`` (default base ``https://chatgpt.com/backend-api``; a base already
  ending in ``/codex`` or ``/codex/responses`` is not extended).
- Headers: the login's access token as bearer, ``chatgpt-account-id`` from the token's
  ``https://api.openai.com/auth`` claim, ``originator: pi``, ``OpenAI-Beta: responses=experimental``,
  ``accept: text/event-stream``, and the session id as ``session-id`` and ``x-client-request-id``.
- Body: the leading system prompt as ``instructions`` (not an input item), ``store: false``,
  ``text.verbosity: "low"``, reasoning's encrypted content always included, ``tool_choice: "auto"``,
  ``parallel_tool_calls: true``, tools with ``strict: null`` unless they ask for strict schemas, no output
  cap, ``reasoning.effort`` (the model's ``off`` value, else ``none``, when thinking is off).
- Events: ``response.done`` / ``response.incomplete`` count as the end; ``error`` and ``response.failed``
  raise ``Codex error: …``.
- Its own retry loop (pi's: none by default; 429 that is not a quota, 500/502/503/504, rate-limit,
  overloaded and connection texts; the server's ``retry-after`` or 1 s·2^n, refused past
  ``maxRetryDelayMs``), and pi's usage-limit line: "You have hit your ChatGPT usage limit (plus plan).
  Try again in ~N min."
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_tui.util.json_types import JsonObject

from ..oauth.openai_codex import account_id as claimed_account_id
from ..stream import AbortSignal, LlmRequest, ProviderError, StreamEvent, StreamOptions
from ..thinking import clamp_thinking_level, level_map
from ..types import Model
from ._common import (
    MessageBuilder,
    cached_client,
    describe_error,
    http_failure,
    merged_headers,
    stream_over_http,
)
from .openai_completions import decode_event
from .openai_responses import ResponsesReader, encode_request, responses_tools
from .openai_responses import build_request as build_responses_request

if TYPE_CHECKING:
    from ..wire import SseStream, WireClient
    from ._common import EventSource

__all__ = [
    "CodexAccountError",
    "account_id",
    "build_request",
    "codex_url",
    "stream_openai_codex_responses",
]

DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."
DEFAULT_MAX_RETRIES = 0  # pi's default: the agent's retry settings do the retrying
_BASE_DELAY_MS = 1000
_MAX_CACHE_KEY = 64
_TERMINAL_LIMIT = re.compile(
    r"GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance|insufficient_quota"
    r"|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)
_RETRYABLE_TEXT = re.compile(
    r"rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused", re.IGNORECASE
)
_USAGE_CODES = re.compile(r"usage_limit_reached|usage_not_included|rate_limit_exceeded", re.IGNORECASE)


class CodexAccountError(ValueError):
    """No Codex login, or an access token that does not name a ChatGPT account."""


def account_id(token: str) -> str:
    """The ``chatgpt_account_id`` claim of the access token (a JWT). Raises `CodexAccountError`."""
    account = claimed_account_id(token)  # the login reads the same claim when it stores a token
    if account is None:
        raise CodexAccountError(
            "Failed to extract accountId from token: log in to ChatGPT again with /login (openai-codex)"
        )
    return account


def codex_url(base_url: str) -> tuple[str, str]:
    """(client base URL, path) for ``POST …/codex/responses`` from a provider base URL, as pi builds it."""
    base = (base_url.strip() or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        base = base[: -len("/codex/responses")]
    elif base.endswith("/codex"):
        base = base[: -len("/codex")]
    return base, "/codex/responses"


def _session(options: StreamOptions) -> str | None:
    if options.cache_retention == "none" or not options.session_id:
        return None
    return options.session_id[:_MAX_CACHE_KEY]


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body for ``POST /codex/responses``, keys in the order pi sends them."""
    # (a history prefix in wire shape, `LlmRequest.wire_prefix`, goes along: the input items start with it)
    without_system = dataclasses.replace(request, system_prompt="")
    shared = build_responses_request(model, without_system, options)  # the input items (cached per message)
    body: JsonObject = {
        "model": model.id,
        "store": False,
        "stream": True,
        "instructions": request.system_prompt or DEFAULT_INSTRUCTIONS,
        "input": shared["input"],
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
    }
    session = _session(options)
    if session is not None:
        body["prompt_cache_key"] = session
    body["tool_choice"] = "auto"
    body["parallel_tool_calls"] = True
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if request.tools:
        body["tools"] = responses_tools(model, request, supports_by_default=True, loose=None)
    mapping = level_map(model) or {}
    level = clamp_thinking_level(model, options.thinking) if options.thinking != "off" else "off"
    if level != "off":
        effort = mapping[level] if level in mapping else level
        if effort is not None:
            body["reasoning"] = {"effort": effort, "summary": "auto"}
    elif model.reasoning and not ("off" in mapping and mapping["off"] is None):
        body["reasoning"] = {"effort": mapping.get("off") or "none"}
    return body


# --- transport: headers, retries ---------------------------------------------------------------------


class _RetryingClient:
    """A `WireClient` whose ``stream`` repeats a refused request as pi's Codex loop does."""

    def __init__(self, client: WireClient, options: StreamOptions, max_retries: int) -> None:
        self.client = client
        self.signal = options.signal or AbortSignal()
        self.max_delay_ms = options.max_retry_delay_ms
        self.max_retries = max_retries

    async def stream(
        self,
        path: str,
        body: bytes,
        timeout: float | None = None,
        *,
        after_write: Callable[[], None] | None = None,
    ) -> SseStream:
        attempt = 0
        while True:
            try:
                return await self.client.stream(path, body, timeout, after_write=after_write)
            except Exception as exc:
                failure = http_failure(exc)
                status = failure.status if failure is not None else None
                text = (failure.text if failure is not None else "") or str(exc)
                if attempt >= self.max_retries or (status is not None and not _retryable(status, text)):
                    raise
                wait = failure.retry_after_ms() if failure is not None and status is not None else None
                if wait is not None and self.max_delay_ms > 0 and wait > self.max_delay_ms:
                    raise ProviderError(
                        f"Server requested {-(-wait // 1000)}s retry delay (max: {-(-self.max_delay_ms // 1000)}s)"
                    ) from exc
                await self.signal.sleep((wait if wait is not None else _BASE_DELAY_MS * 2**attempt) / 1000)
                attempt += 1

    async def close(self) -> None:
        await self.client.close()


def _retryable(status: int, text: str) -> bool:
    if status == 429 and _TERMINAL_LIMIT.search(text):
        return False
    return status in (429, 500, 502, 503, 504) or bool(_RETRYABLE_TEXT.search(text))


def client_factory(max_retries: int) -> Callable[[Model, StreamOptions], Awaitable[EventSource]]:
    """``get_client`` for `stream_over_http`: the cached wire client for this login, with retries."""

    async def get_client(model: Model, options: StreamOptions) -> EventSource:
        from ..wire import WireClient

        token = options.api_key
        if not token:
            raise CodexAccountError(
                f"No API key for provider: {model.provider}: log in to ChatGPT with /login (openai-codex)"
            )
        account = account_id(token)
        base_url, _ = codex_url(model.base_url)
        codex: dict[str, str] = {
            "authorization": f"Bearer {token}",
            "chatgpt-account-id": account,
            "originator": "pi",
            "openai-beta": "responses=experimental",
            "accept": "text/event-stream",
        }
        session = _session(options)
        if session is not None:
            codex["session-id"] = session
            codex["x-client-request-id"] = session
        # the model's and the call's headers first, then the ones the backend needs (pi's order of wins)
        headers = {**merged_headers(model, options), **codex}
        client = await cached_client("codex", base_url, token, headers, lambda: WireClient(base_url, headers))
        return _RetryingClient(client, options, max_retries)

    return get_client


# --- events and errors -------------------------------------------------------------------------------


def _object(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def decode_codex_event(event: str | None, data: str, stream: SseStream) -> Any:
    """One SSE event, with the backend's variants mapped onto the Responses events the reader knows."""
    value = decode_event(event, data, stream)
    if not isinstance(value, dict):
        return value
    kind = value.get("type")
    if kind == "error":
        nested = _object(value.get("error"))
        message = value.get("message") or nested.get("message") or value.get("code") or nested.get("code")
        raise ProviderError(f"Codex error: {message or json.dumps(value)}")
    if kind == "response.failed":
        error = _object(_object(value.get("response")).get("error"))
        raise ProviderError(str(error.get("message") or "Codex response failed"))
    if kind in ("response.done", "response.incomplete"):
        return {**value, "type": "response.completed"}
    return value


def _usage_limit(status: int, body: Any) -> str | None:
    """pi's line for a plan's usage limit, from the error body (None when it is not one)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None
    code = str(error.get("code") or error.get("type") or "")
    if not _USAGE_CODES.search(code) and status != 429:
        return None
    plan = f" ({str(error['plan_type']).lower()} plan)" if error.get("plan_type") else ""
    resets = error.get("resets_at")
    when = ""
    if isinstance(resets, int | float) and not isinstance(resets, bool):
        when = f" Try again in ~{max(0, round((resets * 1000 - time.time() * 1000) / 60000))} min."
    return f"You have hit your ChatGPT usage limit{plan}.{when}".strip()


def describe_codex_error(exc: BaseException) -> str:
    """The backend's own message (pi's usage-limit line for a plan's limit), with the HTTP status in front
    and, for a refused login, what to do."""
    failure = http_failure(exc)
    status = failure.status if failure is not None else None
    if failure is None or status is None or status == 200:
        return str(exc) if isinstance(exc, ProviderError | CodexAccountError) else describe_error(exc)
    body = failure.body
    limit = _usage_limit(status, body)
    if limit is not None:
        return limit
    message = ""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            message = error["message"]
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
    if not message:
        message = str(body or exc).strip()
    text = f"{status} {message}"
    if status == 401:
        text += " (the ChatGPT login was refused: log in again with /login openai-codex)"
    elif status == 403:
        text += " (check that the ChatGPT plan may use this model, or log in again with /login openai-codex)"
    elif status == 404:
        text += " (check the model id: the ChatGPT plan may not offer it, and the provider's baseUrl in models.json)"
    wait = failure.retry_after_ms()
    if wait is not None:
        text += f" (retry after {wait} ms)"
    return text


def _reader(out: MessageBuilder) -> Any:
    return ResponsesReader(out)


async def stream_codex(
    model: Model, request: LlmRequest, options: StreamOptions, *, max_retries: int = DEFAULT_MAX_RETRIES
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from the Codex backend, repeating refused requests up to ``max_retries`` times."""
    _, path = codex_url(model.base_url)
    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=build_request,
        get_client=client_factory(max_retries),
        path=path,
        decode=decode_codex_event,
        make_reader=_reader,
        encode=encode_request,
        describe=describe_codex_error,
    ):
        yield event


async def stream_openai_codex_responses(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from the ChatGPT subscription's Codex backend. Never raises."""
    async for event in stream_codex(model, request, options):
        yield event
