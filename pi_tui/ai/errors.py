"""Classifying provider failures: retryable or not, context overflow or not.

Both checks work on the final `AssistantMessage` of a failed stream (``stop_reason == "error"``), because
providers never raise: the error text is all that survives. The patterns are pi's, plus the Anthropic
"input length and `max_tokens` exceed context limit" wording pi misses.
"""

from __future__ import annotations

import re

from .types import AssistantMessage

__all__ = [
    "CredentialError",
    "is_retryable_error",
    "is_context_overflow",
    "OVERFLOW_PATTERNS",
    "RETRYABLE_PATTERN",
]


class CredentialError(Exception):
    """A request cannot be authenticated (say, a login expired). The message is one complete line a user
    can act on (it names ``/login``), shown as it is; it never holds a token."""


RETRYABLE_PATTERN = re.compile(
    r"overloaded|rate.?limit|too many requests|\b429\b|\b500\b|\b502\b|\b503\b|\b504\b|\b529\b"
    r"|service.?unavailable|server.?error|internal.?error|connection.?error|connection.?refused"
    r"|other side closed|fetch failed|upstream.?connect|reset before headers|terminated|retry delay"
    r"|stream ended without|incomplete chunked read|peer closed connection|remote ?protocol|timed? ?out",
    re.IGNORECASE,
)

# Permanent failures that merely look like rate limits, or like timeouts (an extension handler that overran
# its extensionHookTimeout budget hangs locally: retrying only repeats the hang).
_NOT_RETRYABLE = re.compile(
    r"insufficient_quota|exceeded your current quota|billing|setting extensionHookTimeout", re.IGNORECASE
)

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"prompt is too long",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"model_context_window_exceeded",
        r"input length and `?max_tokens`? exceed context limit",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^4(00|13)\s*(status code)?\s*\(no body\)",
    )
)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """True when the message reports that the prompt did not fit the model's window.

    Also catches the silent form: a successful answer whose reported prompt exceeds the window.
    """
    if message.stop_reason == "error":
        text = message.error_message or ""
        return any(p.search(text) for p in OVERFLOW_PATTERNS)
    if message.stop_reason == "stop" and context_window:
        return message.usage.input + message.usage.cache_read > context_window
    return False


def is_retryable_error(message: AssistantMessage, context_window: int | None = None) -> bool:
    """True for transient failures worth retrying: overload, rate limit, 5xx, dropped connections."""
    if message.stop_reason != "error":
        return False
    text = message.error_message or ""
    if is_context_overflow(message, context_window) or _NOT_RETRYABLE.search(text):
        return False
    return bool(RETRYABLE_PATTERN.search(text))
