from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest

from pi_tui.ai.errors import is_context_overflow, is_retryable_error
from pi_tui.ai.providers._common import IncompleteStreamError, describe_error
from pi_tui.ai.types import AssistantMessage

_REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/messages")


def _anthropic(
    cls: type[Any], status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> Any:
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}
    response = httpx2.Response(status, json=body, request=_REQUEST, headers=headers or {})
    return cls(f"Error code: {status} - {body}", response=response, body=body)


def _openai(
    cls: type[Any], status: int, message: str, code: str | None, kind: str = "invalid_request_error"
) -> Any:
    error = {"message": message, "type": kind, "param": None, "code": code}
    response = httpx2.Response(status, json={"error": error}, request=_REQUEST)
    return cls(f"Error code: {status} - {error}", response=response, body=error)


def _failed(exc: BaseException) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=describe_error(exc))


def _dropped() -> BaseException:
    wrapped = openai.APIConnectionError(request=_REQUEST)
    wrapped.__cause__ = httpx2.RemoteProtocolError(
        "peer closed connection without sending complete message body"
    )
    return wrapped


RETRYABLE = [
    _anthropic(
        anthropic.RateLimitError, 429, "rate_limit_error", "This request would exceed the rate limit."
    ),
    _anthropic(anthropic.APIStatusError, 529, "overloaded_error", "Overloaded"),
    _anthropic(anthropic.InternalServerError, 500, "api_error", "Internal server error"),
    # An SSE error event after a 200: the SDK raises APIStatusError with status 200.
    _anthropic(anthropic.APIStatusError, 200, "overloaded_error", "Overloaded"),
    _openai(
        openai.RateLimitError, 429, "Rate limit reached for requests.", "rate_limit_exceeded", "requests"
    ),
    _openai(openai.InternalServerError, 503, "The engine is currently overloaded.", None, "server_error"),
    _openai(openai.InternalServerError, 500, "The server had an error.", None, "server_error"),
    _dropped(),
    openai.APITimeoutError(request=_REQUEST),
    httpx2.ReadTimeout("The read operation timed out"),
    httpx2.RemoteProtocolError(
        "peer closed connection without sending complete message body (incomplete chunked read)"
    ),
    IncompleteStreamError(),
]

OVERFLOW = [
    _anthropic(
        anthropic.BadRequestError,
        400,
        "invalid_request_error",
        "prompt is too long: 213462 tokens > 200000 maximum",
    ),
    _anthropic(
        anthropic.BadRequestError,
        400,
        "invalid_request_error",
        "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again",
    ),
    _openai(
        openai.BadRequestError,
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. "
        "Please reduce the length of the messages.",
        "context_length_exceeded",
    ),
    _openai(
        openai.BadRequestError,
        400,
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
        "context_length_exceeded",
    ),
]


@pytest.mark.parametrize("exc", RETRYABLE, ids=lambda e: describe_error(e)[:60])
def test_transient_failures_are_described_so_the_retry_classifier_accepts_them(exc: BaseException) -> None:
    message = _failed(exc)
    assert is_retryable_error(message), message.error_message
    assert not is_context_overflow(message)


@pytest.mark.parametrize("exc", OVERFLOW, ids=lambda e: describe_error(e)[:60])
def test_overflow_failures_keep_the_status_and_are_recognised_as_overflow(exc: BaseException) -> None:
    message = _failed(exc)
    assert is_context_overflow(message), message.error_message
    assert not is_retryable_error(message)
    assert (message.error_message or "").startswith("400 ")


def test_status_code_and_provider_text_survive_in_the_message() -> None:
    text = describe_error(
        _anthropic(anthropic.APIStatusError, 529, "overloaded_error", "Overloaded", {"retry-after-ms": "250"})
    )
    assert text == "529 overloaded_error: Overloaded (retry after 250 ms)"
    assert describe_error(_anthropic(anthropic.APIStatusError, 200, "overloaded_error", "Overloaded")) == (
        "overloaded_error: Overloaded"
    )


def test_permanent_failures_are_not_retryable() -> None:
    auth = _anthropic(anthropic.AuthenticationError, 401, "authentication_error", "invalid x-api-key")
    quota = _openai(openai.RateLimitError, 429, "You exceeded your current quota.", "insufficient_quota")
    assert not is_retryable_error(_failed(auth))
    assert not is_retryable_error(_failed(quota))
