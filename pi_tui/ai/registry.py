"""Which provider streams a model: dispatch on ``model.api``.

Built-in APIs are resolved lazily (importing a provider module must not import its SDK, and start-up
must not import the providers at all). Extensions may register more with `register_api`.

Some providers need more on every request than their wire API sends, whatever that API is: GitHub
Copilot wants headers computed from the messages; the Cloudflare gateways and OpenCode want their own
headers (and Cloudflare its account ids filled into the base URL). Each has a `ProviderHook` in
`PROVIDER_HOOKS`; `stream` runs a model's hooks before the API's stream function. A hook returns the
model and options to use as new objects, so the caller's options are never changed; the modules behind
the hooks load on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

from .stream import Error, LlmRequest, StreamEvent, StreamFn, StreamOptions, StreamStart
from .types import AssistantMessage, Model

__all__ = [
    "BUILTIN_APIS",
    "PROVIDER_HOOKS",
    "ProviderHook",
    "RequestHook",
    "request_hooks",
    "preload_sdk",
    "register_api",
    "unregister_api",
    "resolve_stream_fn",
    "known_apis",
    "stream",
]


def _anthropic() -> StreamFn:
    from .providers.anthropic import stream_anthropic

    return stream_anthropic


def _openai_completions() -> StreamFn:
    from .providers.openai_completions import stream_openai_completions

    return stream_openai_completions


def _openai_responses() -> StreamFn:
    from .providers.openai_responses import stream_openai_responses

    return stream_openai_responses


def _google() -> StreamFn:
    from .providers.google import stream_google

    return stream_google


def _google_vertex() -> StreamFn:
    from .providers.google_vertex import stream_google_vertex

    return stream_google_vertex


def _mistral() -> StreamFn:
    from .providers.mistral import stream_mistral

    return stream_mistral


def _bedrock() -> StreamFn:
    from .providers.bedrock import stream_bedrock

    return stream_bedrock


def _azure_openai_responses() -> StreamFn:
    from .providers.azure_openai_responses import stream_azure_openai_responses

    return stream_azure_openai_responses


def _openai_codex_responses() -> StreamFn:
    from .providers.openai_codex_responses import stream_openai_codex_responses

    return stream_openai_codex_responses


def _pi_messages() -> StreamFn:
    from .providers.pi_messages import stream_pi_messages

    return stream_pi_messages


def _faux() -> StreamFn:
    from .providers.faux import stream_faux

    return stream_faux


# api -> its stream function's loader: the provider module is imported on first use.
BUILTIN_APIS: dict[str, Callable[[], StreamFn]] = {
    "anthropic-messages": _anthropic,
    "openai-completions": _openai_completions,
    "openai-responses": _openai_responses,
    "google-generative-ai": _google,
    "google-vertex": _google_vertex,
    "mistral-conversations": _mistral,
    "bedrock-converse-stream": _bedrock,
    "azure-openai-responses": _azure_openai_responses,
    "openai-codex-responses": _openai_codex_responses,
    "pi-messages": _pi_messages,
    "faux": _faux,
}

_registered: dict[str, StreamFn] = {}


class RequestHook(Protocol):
    """Turns one request's model and options into the ones sent (new objects, the inputs unchanged)."""

    def __call__(
        self, model: Model, request: LlmRequest, options: StreamOptions
    ) -> tuple[Model, StreamOptions]: ...


@dataclass(frozen=True)
class ProviderHook:
    """A request hook and the models it serves.

    Attributes:
        name: what the hook is for, in words (shown nowhere; for readers and tests).
        serves: whether a model's requests go through the hook.
        apply: the hook itself.
    """

    name: str
    serves: Callable[[Model], bool]
    apply: RequestHook


def _copilot(model: Model, request: LlmRequest, options: StreamOptions) -> tuple[Model, StreamOptions]:
    from .providers.copilot_headers import copilot_dynamic_headers

    headers = {**copilot_dynamic_headers(request.messages), **(options.headers or {})}
    return model, dataclasses.replace(options, headers=headers)


def _gateway(model: Model, request: LlmRequest, options: StreamOptions) -> tuple[Model, StreamOptions]:
    from .providers.gateway_headers import with_gateway_headers

    return with_gateway_headers(model, options)


def _is_gateway(model: Model) -> bool:
    return model.provider.startswith(("cloudflare-", "opencode")) or "opencode.ai" in (model.base_url or "")


PROVIDER_HOOKS: tuple[ProviderHook, ...] = (
    ProviderHook("GitHub Copilot's per-request headers", lambda m: m.provider == "github-copilot", _copilot),
    ProviderHook("Cloudflare and OpenCode gateway headers", _is_gateway, _gateway),
)


def request_hooks(model: Model) -> list[RequestHook]:
    """The hooks ``model``'s requests go through, in order (usually none or one)."""
    return [hook.apply for hook in PROVIDER_HOOKS if hook.serves(model)]


def register_api(api: str, stream_fn: StreamFn) -> None:
    """Serve ``api`` with ``stream_fn`` (overrides a built-in of the same name)."""
    _registered[api] = stream_fn


def unregister_api(api: str) -> None:
    _registered.pop(api, None)


# The built-in wire APIs are served over pi_tui.ai.wire (the providers do not use the vendor SDKs).
_WIRE_APIS = frozenset(
    {
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
        "google-vertex",
        "mistral-conversations",
        "bedrock-converse-stream",
        "azure-openai-responses",
        "openai-codex-responses",
        "pi-messages",
    }
)


def preload_sdk(api: str, base_url: str | None = None) -> None:
    """Import the provider and HTTP stack behind ``api`` now (~100 ms of CPU), e.g. from a worker thread
    while resources or the UI load, so the first request does not pay for it. With an ``https`` (or
    unknown) ``base_url`` the system CA store is loaded too. Unknown APIs are ignored."""
    if api not in _WIRE_APIS:
        return
    from . import wire

    BUILTIN_APIS[api]()  # imports the provider's module
    wire.preload(tls=base_url is None or base_url.startswith("https:"), base_url=base_url)


def known_apis() -> list[str]:
    return sorted(set(BUILTIN_APIS) | set(_registered))


def resolve_stream_fn(api: str) -> StreamFn:
    """The stream function for ``api``. Raises `KeyError` naming the known APIs when there is none."""
    if api in _registered:
        return _registered[api]
    if api not in BUILTIN_APIS:
        raise KeyError(f"pi-tui does not support the {api} API yet (supported: {', '.join(known_apis())})")
    return BUILTIN_APIS[api]()


def _dispatch_error(model: Model, exc: BaseException) -> str:
    """One line for a model whose API cannot be served (not implemented, or its module failed)."""
    if isinstance(exc, KeyError):
        return (
            f"{model.label} uses the {model.api} API, which pi-tui does not support yet; "
            f"pick a model on another API (supported: {', '.join(known_apis())})"
        )
    return str(exc).strip("'\"")


async def stream(model: Model, request: LlmRequest, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one answer from whichever provider serves ``model.api``.

    A provider that needs more than its API sends (GitHub Copilot, the Cloudflare and OpenCode gateways)
    has a hook in `PROVIDER_HOOKS`, applied to copies of ``model`` and ``options``.
    Keeps the provider contract even when dispatch fails: an unknown API (or a provider module that
    fails to import) yields ``start`` then an `Error` event instead of raising.
    """
    try:
        stream_fn = resolve_stream_fn(model.api)
    except (KeyError, ImportError, AttributeError) as exc:
        message = AssistantMessage(
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="error",
            error_message=_dispatch_error(model, exc),
        )
        yield StreamStart(partial=message)
        yield Error(reason="error", error=message)
        return
    try:
        for hook in request_hooks(
            model
        ):  # a provider's own headers (Copilot, the gateways); the caller's stay
            model, options = hook(model, request, options)
    except ValueError as exc:  # a setting the provider needs is missing (e.g. a Cloudflare account id)
        message = AssistantMessage(
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="error",
            error_message=str(exc),
        )
        yield StreamStart(partial=message)
        yield Error(reason="error", error=message)
        return
    async for event in stream_fn(model, request, options):
        yield event
