"""Azure OpenAI's Responses API (``azure-openai-responses``) over pi-tui's own wire client, as pi 0.87.1
sends it.

The input items, the stream and its reading are OpenAI Responses' (`openai_responses`); what Azure
changes is where the request goes and what it is called:

- Base URL: ``AZURE_OPENAI_BASE_URL``, else ``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1``,
  else the model's ``baseUrl`` (models.json); an Azure host whose path is empty, ``/openai`` or
  ``/openai/v1/responses`` is normalised to ``/openai/v1``.
- ``POST {base}/responses?api-version=<AZURE_OPENAI_API_VERSION or v1>`` with the key in ``api-key``.
- The body's ``model`` is the deployment: ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,…``),
  else the model id.
- ``prompt_cache_key`` is always the session id, strict tools are on unless the model's compat says
  otherwise, the output cap is always sent, and reasoning models get ``reasoning.effort`` even when
  thinking is off (the model's ``off`` value, else ``none``).

A wrong deployment, api-version, key or resource reads as Azure's own message plus what to check.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..thinking import clamp_thinking_level, level_map
from ..types import Model
from ._common import (
    cached_client,
    describe_error,
    http_failure,
    json_stringify,
    merged_headers,
    stream_over_http,
)
from ._openai_compat import default_max_tokens
from .openai_completions import decode_event
from .openai_responses import ResponsesReader, encode_request, responses_tools
from .openai_responses import build_request as build_responses_request

if TYPE_CHECKING:
    from ..wire import WireClient

__all__ = [
    "AzureConfig",
    "AzureConfigError",
    "build_request",
    "deployment_name",
    "normalize_base_url",
    "resolve_config",
    "stream_azure_openai_responses",
]

DEFAULT_API_VERSION = "v1"
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")
_MIN_OUTPUT_TOKENS = 16  # the Responses API refuses less
_MAX_CACHE_KEY = 64
_MAX_ERROR_BODY = 4000
PREFIX = "Azure OpenAI API error"


class AzureConfigError(ValueError):
    """Azure cannot be reached as configured (no base URL, or one that is not a URL)."""


class AzureConfig:
    """Where one Azure request goes: the normalised base URL, the api-version and the deployment."""

    __slots__ = ("base_url", "api_version", "deployment", "source")

    def __init__(self, base_url: str, api_version: str, deployment: str, source: str) -> None:
        self.base_url = base_url
        self.api_version = api_version
        self.deployment = deployment
        self.source = source  # which setting gave the base URL, named in error messages


def normalize_base_url(base_url: str) -> str:
    """pi's normalisation: an Azure host with no path, ``/openai`` or ``/openai/v1/responses`` gets
    ``/openai/v1`` (and loses its query); anything else is kept without trailing slashes."""
    trimmed = base_url.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AzureConfigError(f"Invalid Azure OpenAI base URL: {base_url}")
    path = parts.path.rstrip("/")
    if parts.hostname.endswith(_AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        parts = parts._replace(path="/openai/v1", query="")
    return urlunsplit(parts).rstrip("/")


def deployment_name(model: Model) -> str:
    """The deployment for ``model``: its entry in ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``, else its id."""
    for entry in os.environ.get("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "").split(","):
        model_id, _, deployment = entry.strip().partition("=")
        if model_id.strip() == model.id and deployment.strip():
            return deployment.split("=", 1)[0].strip()
    return model.id


def resolve_config(model: Model) -> AzureConfig:
    """Base URL, api-version and deployment from the environment and the model, in pi's order."""
    api_version = os.environ.get("AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION
    base_url = (os.environ.get("AZURE_OPENAI_BASE_URL") or "").strip()
    source = "AZURE_OPENAI_BASE_URL"
    resource = os.environ.get("AZURE_OPENAI_RESOURCE_NAME")
    if not base_url and resource:
        base_url, source = f"https://{resource}.openai.azure.com/openai/v1", "AZURE_OPENAI_RESOURCE_NAME"
    if not base_url and model.base_url:
        base_url, source = model.base_url, "the provider's baseUrl in models.json"
    if not base_url:
        raise AzureConfigError(
            "Azure OpenAI base URL is required: set AZURE_OPENAI_BASE_URL (https://<resource>.openai.azure.com"
            "/openai/v1) or AZURE_OPENAI_RESOURCE_NAME, or a baseUrl for azure-openai-responses in models.json"
        )
    return AzureConfig(normalize_base_url(base_url), api_version, deployment_name(model), source)


def build_request(model: Model, request: LlmRequest, options: StreamOptions) -> JsonObject:
    """The JSON body for ``POST /responses`` on Azure, keys in the order pi sends them."""
    config = resolve_config(model)
    shared = build_responses_request(model, request, options)  # the input items (cached per message)
    body: JsonObject = {"model": config.deployment, "input": shared["input"], "stream": True}
    if options.session_id:
        body["prompt_cache_key"] = options.session_id[:_MAX_CACHE_KEY]
    body["store"] = False
    cap = options.max_tokens or default_max_tokens(model, request.messages, None)
    body["max_output_tokens"] = max(cap, _MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if request.tools:
        body["tools"] = responses_tools(model, request, supports_by_default=True)
    if model.reasoning:
        level = clamp_thinking_level(model, options.thinking) if options.thinking != "off" else "off"
        mapping = level_map(model) or {}
        if level != "off":
            effort = mapping.get(level) or level
            body["reasoning"] = {"effort": effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        elif not ("off" in mapping and mapping["off"] is None):
            body["reasoning"] = {"effort": mapping.get("off") or "none"}
    if model.sampling_params:
        body.update(model.sampling_params)
    return body


async def azure_client(model: Model, options: StreamOptions) -> WireClient:
    """The cached `WireClient` for the resolved Azure base URL, key and headers."""
    from ..wire import WireClient

    api_key = options.api_key
    if not api_key:
        raise ValueError(
            f"No API key for provider: {model.provider} (set AZURE_OPENAI_API_KEY, or use --api-key)"
        )
    base_url = resolve_config(model).base_url
    headers = merged_headers(model, options)
    wire_headers = {"accept": "application/json", "api-key": api_key, **headers}
    return await cached_client(
        "azure", base_url, api_key, headers, lambda: WireClient(base_url, wire_headers)
    )


def describer(model: Model) -> Callable[[BaseException], str]:
    """pi's wording (``Azure OpenAI API error (<status>): <Azure's error object>``) plus what to check
    for a refused key, a missing deployment, an unknown api-version or an unreachable resource."""

    def describe(exc: BaseException) -> str:
        if isinstance(exc, AzureConfigError):
            return str(exc)
        try:
            config: AzureConfig | None = resolve_config(model)
        except AzureConfigError:
            config = None
        failure = http_failure(exc)
        status = failure.status if failure is not None else None
        if failure is None or status is None or status == 200:
            text = describe_error(exc)
            unreachable = "Connect" in type(exc).__name__ or text.startswith("Connection error")
            if config is not None and unreachable:
                text += f" (check {config.source}: {config.base_url} could not be reached)"
            return text
        body = failure.body
        error = body.get("error") if isinstance(body, dict) else None
        detail = json_stringify(error) if isinstance(error, dict) and error else str(body or exc).strip()
        if len(detail) > _MAX_ERROR_BODY:
            detail = f"{detail[:_MAX_ERROR_BODY]}... [truncated {len(detail) - _MAX_ERROR_BODY} chars]"
        text = f"{PREFIX} ({status}): {detail}"
        code = error.get("code") if isinstance(error, dict) else None
        if config is not None:
            text += _hint(status, code, detail, config)
        wait = failure.retry_after_ms()
        if wait is not None:
            text += f" (retry after {wait} ms)"
        return text

    return describe


def _hint(status: int, code: object, detail: str, config: AzureConfig) -> str:
    if status in (401, 403):
        return (
            f" (check AZURE_OPENAI_API_KEY: it must be a key of the resource at {config.base_url}, "
            f"from {config.source})"
        )
    if code == "DeploymentNotFound" or (status == 404 and "deployment" in detail.lower()):
        return (
            f" (check the deployment: '{config.deployment}' was sent; map model ids to your deployment names "
            "with AZURE_OPENAI_DEPLOYMENT_NAME_MAP=model=deployment,…)"
        )
    if status == 404:
        return f" (check {config.source}: {config.base_url} should end in /openai/v1)"
    if status == 400 and ("api version" in detail.lower() or "api-version" in detail.lower()):
        return (
            f" (check AZURE_OPENAI_API_VERSION: '{config.api_version}' was sent; the /openai/v1 endpoint "
            "takes v1 or preview)"
        )
    return ""


async def stream_azure_openai_responses(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from Azure OpenAI. Never raises: failures end with an `Error` event."""
    try:
        path = f"/responses?api-version={quote(resolve_config(model).api_version, safe='')}"
    except AzureConfigError:
        path = "/responses"  # building the body reports the missing setting
    async for event in stream_over_http(
        model,
        request,
        options,
        build_body=build_request,
        get_client=azure_client,
        path=path,
        decode=decode_event,
        make_reader=ResponsesReader,
        encode=encode_request,
        describe=describer(model),
        provider_retries=True,
    ):
        yield event
