"""Gemini API (``google-generative-ai``) over pi-tui's own wire client (`pi_tui.ai.wire`).

``POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse`` with the key in ``x-goog-api-key``; the
base URL carries the API version (``…/v1beta``), as pi's catalog and ``models.json`` give it. The body
and the stream are `_google_common`'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..types import Model
from ._common import cached_client, merged_headers
from ._google_request import build_request, model_path
from ._google_stream import stream_gemini

if TYPE_CHECKING:
    from ..wire import WireClient

__all__ = ["DEFAULT_BASE_URL", "build_request", "stream_google"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


async def _endpoint(model: Model, options: StreamOptions) -> tuple[WireClient, str]:
    from ..wire import WireClient

    base_url = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    api_key = options.api_key
    if not api_key:
        from ._google_adc import SetupError

        raise SetupError(
            f"No API key for provider '{model.provider}': set GEMINI_API_KEY, store one with /login, "
            "or pass --api-key"
        )
    headers = merged_headers(model, options)
    wire_headers = {"x-goog-api-key": api_key, **headers}
    client = await cached_client(
        "google", base_url, api_key, headers, lambda: WireClient(base_url, wire_headers)
    )
    return client, f"/{model_path(model.id, vertex=False)}:streamGenerateContent?alt=sse"


def _hint(status: int, message: str) -> str | None:
    if status in (400, 401, 403) and "api key" in message.lower():
        return "check GEMINI_API_KEY (or the key stored for this provider): it must be a valid Gemini API key"
    if status == 404:
        return "check the model id: this key's API version does not serve it"
    return None


async def stream_google(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from the Gemini API. Never raises: failures end with an `Error` event."""
    async for event in stream_gemini(model, request, options, endpoint=_endpoint, vertex=False, hint=_hint):
        yield event
