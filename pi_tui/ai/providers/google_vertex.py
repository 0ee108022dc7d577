"""Gemini on Vertex AI (``google-vertex``) over pi-tui's own wire client (`pi_tui.ai.wire`).

The body and the stream are the Gemini API's (`_google_request`, `_google_stream`); what differs is the
endpoint and the credential, resolved as pi 0.87.1 (through ``@google/genai``) resolves them:

- **API key** (``GOOGLE_CLOUD_API_KEY``, or a stored key; pi's placeholder ``gcp-vertex-credentials`` and
  ``<…>`` values do not count): Vertex's express endpoint
  ``https://aiplatform.googleapis.com/v1/publishers/google/models/{model}:streamGenerateContent?alt=sse``
  with ``x-goog-api-key``.
- **Application-default credentials** otherwise: ``GOOGLE_CLOUD_PROJECT`` (or ``GCLOUD_PROJECT``) and
  ``GOOGLE_CLOUD_LOCATION`` are required; the host is ``{location}-aiplatform.googleapis.com``
  (``global``: ``aiplatform.googleapis.com``; ``us``/``eu``: ``aiplatform.{location}.rep.googleapis.com``),
  the path ``/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:…``, and the
  bearer token comes from `_google_adc`.
- A base URL from ``models.json`` without a ``{location}`` placeholder replaces the host; the path is
  then ``[/v1]/publishers/google/models/{model}:…`` (no ``/v1`` when the URL already has a version).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..stream import LlmRequest, StreamEvent, StreamOptions
from ..types import Model
from ._common import cached_client, merged_headers
from ._google_adc import SetupError
from ._google_request import model_path
from ._google_stream import stream_gemini

if TYPE_CHECKING:
    from ..wire import WireClient

__all__ = ["EXPRESS_BASE_URL", "stream_google_vertex", "vertex_endpoint"]

EXPRESS_BASE_URL = "https://aiplatform.googleapis.com"
API_VERSION = "v1"
_CREDENTIALS_MARKER = "gcp-vertex-credentials"
_PLACEHOLDER = re.compile(r"^<[^>]+>$")
_VERSION_SEGMENT = re.compile(r"^v\d+(?:beta\d*)?$")
_MULTI_REGION = frozenset({"us", "eu"})


def _api_key(options: StreamOptions) -> str | None:
    key = (options.api_key or "").strip()
    if not key or key == _CREDENTIALS_MARKER or _PLACEHOLDER.match(key):
        return None
    return key


def _custom_base_url(base_url: str) -> str | None:
    trimmed = base_url.strip().rstrip("/")
    return None if not trimmed or "{location}" in trimmed else trimmed


def _has_version(base_url: str) -> bool:
    return any(_VERSION_SEGMENT.match(part) for part in urlsplit(base_url).path.split("/"))


def _scoped_env(provider: str) -> dict[str, str]:
    """The variables stored with the provider's login in auth.json (pi's ``env``), which win over the
    process environment, as in pi."""
    from ..auth import AuthStorage

    return AuthStorage().stored_env(provider)


def _env(name: str, scoped: dict[str, str]) -> str | None:
    return scoped.get(name) or os.environ.get(name) or None


def _project(scoped: dict[str, str]) -> str:
    project = _env("GOOGLE_CLOUD_PROJECT", scoped) or _env("GCLOUD_PROJECT", scoped)
    if not project:
        raise SetupError(
            "Vertex AI requires a project ID: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), "
            "or use an API key in GOOGLE_CLOUD_API_KEY"
        )
    return project


def _location(scoped: dict[str, str]) -> str:
    location = _env("GOOGLE_CLOUD_LOCATION", scoped)
    if not location:
        raise SetupError(
            "Vertex AI requires a location: set GOOGLE_CLOUD_LOCATION (e.g. us-central1 or global), "
            "or use an API key in GOOGLE_CLOUD_API_KEY"
        )
    return location


def _regional_host(location: str) -> str:
    if location == "global":
        return EXPRESS_BASE_URL
    if location in _MULTI_REGION:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def vertex_endpoint(
    model: Model, api_key: str | None, project: str = "", location: str = ""
) -> tuple[str, str]:
    """(base URL, request path) for a model, by pi's rules (see the module docstring)."""
    resource = model_path(model.id, vertex=True)
    method = f"{resource}:streamGenerateContent?alt=sse"
    custom = _custom_base_url(model.base_url or "")
    if custom is not None:
        version = "" if _has_version(custom) else f"/{API_VERSION}"
        return custom, f"{version}/{method}"
    if api_key is not None:
        return EXPRESS_BASE_URL, f"/{API_VERSION}/{method}"
    if resource.startswith("projects/"):
        return _regional_host(location), f"/{API_VERSION}/{method}"
    return _regional_host(location), f"/{API_VERSION}/projects/{project}/locations/{location}/{method}"


async def _endpoint(model: Model, options: StreamOptions) -> tuple[WireClient, str]:
    from ..wire import WireClient

    headers = merged_headers(model, options)
    api_key = _api_key(options)
    if api_key is not None:
        base_url, path = vertex_endpoint(model, api_key)
        wire_headers = {"x-goog-api-key": api_key, **headers}
        credential = api_key
    else:
        from ._google_adc import access_token

        scoped = _scoped_env(model.provider)
        project, location = _project(scoped), _location(scoped)
        stored_file = scoped.get("GOOGLE_APPLICATION_CREDENTIALS")
        token = await access_token(Path(stored_file).expanduser() if stored_file else None)
        base_url, path = vertex_endpoint(model, None, project, location)
        wire_headers = {"authorization": f"Bearer {token.token}"}
        if token.quota_project:
            wire_headers["x-goog-user-project"] = token.quota_project
        wire_headers.update(headers)
        credential = token.token
    client = await cached_client(
        "google-vertex", base_url, credential, headers, lambda: WireClient(base_url, wire_headers)
    )
    return client, path


def _hint(status: int, message: str) -> str | None:
    if status == 400 and "API key" in message:  # Google answers a bad key with 400 INVALID_ARGUMENT
        return "check GOOGLE_CLOUD_API_KEY (or the key stored for google-vertex): it must be a valid Google Cloud API key"
    if status == 401:
        return "check the credentials: GOOGLE_CLOUD_API_KEY, or the application-default credentials file"
    if status == 403:
        return "check that the Vertex AI API is enabled for GOOGLE_CLOUD_PROJECT and the account may use it"
    if status == 404:
        return "check the model id and that GOOGLE_CLOUD_LOCATION serves this model"
    return None


async def stream_google_vertex(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """Stream one answer from Gemini on Vertex AI. Never raises: failures end with an `Error` event."""
    async for event in stream_gemini(model, request, options, endpoint=_endpoint, vertex=True, hint=_hint):
        yield event
