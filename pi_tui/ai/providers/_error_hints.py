"""What to check, added to an HTTP error from a provider whose API does not word it itself.

The Messages, Chat Completions and Responses APIs serve many providers (Anthropic, OpenRouter, Groq,
xAI, …), so the hint names the provider's own key variables (and ``/login`` where it has a login) rather
than one vendor's. It goes in parentheses after the provider's own message and before the wait the server
asked for, as the Google, Bedrock, Mistral and Azure errors read.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..types import Model
from ._common import describe_error, http_status

__all__ = ["describe_with_hint", "http_hint"]

_RETRY = re.compile(r" \(retry after \d+ ms\)$")


def _key_check(provider: str) -> str:
    from ..auth import env_key_variables
    from ..catalog import provider_info

    info = provider_info(provider)
    if info is None:  # not a built-in provider: its key comes from models.json
        return f"check the apiKey of {provider} in models.json, or the key stored for it in auth.json"
    names = " or ".join(env_key_variables(provider))
    where = f"{names} or the key stored for {provider} in auth.json" if names else f"the key for {provider}"
    if info is not None and info.login is not None:
        where += f"; with a login, sign in again with /login {provider}"
    return f"check {where}"


def http_hint(provider: str, status: int | None, model_id: str | None = None) -> str | None:
    """The hint for an HTTP ``status`` from ``provider`` (naming ``model_id`` where the model is what to
    check); None when there is nothing to add."""
    model = f"{provider}/{model_id}" if model_id else "this model"
    if status == 401:
        return _key_check(provider)
    if status == 403:
        return f"check that the key or account may use {model} (plan, organisation, region)"
    if status == 404:
        return f"check the model id ({model}) and the provider's baseUrl in models.json"
    if status == 429:
        return f"{provider}'s rate limit or quota reached; wait and retry, or check the plan's limits"
    if status in (503, 529):  # Service Unavailable; Anthropic's "overloaded": busy, not broken
        return f"{provider} is overloaded or unavailable; retrying may help"
    if status is not None and status >= 500:
        return f"{provider}'s server failed; retrying may help"
    return None


def describe_with_hint(model: Model) -> Callable[[BaseException], str]:
    """`describe_error` for ``model``'s provider, with `http_hint` added for HTTP statuses."""

    def describe(exc: BaseException) -> str:
        text = describe_error(exc)
        status = http_status(exc)
        hint = http_hint(model.provider, status, model.id) if status is not None and status >= 400 else None
        if hint is None:
            return text
        match = _RETRY.search(text)
        if match is None:
            return f"{text} ({hint})"
        return f"{text[: match.start()]} ({hint}){match.group(0)}"

    return describe
