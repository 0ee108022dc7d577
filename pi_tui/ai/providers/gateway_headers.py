"""Headers two gateway families want on every request, whatever the wire API (as pi 0.87.1 sends them).

Cloudflare AI Gateway takes the Cloudflare API token in ``cf-aig-authorization: Bearer <token>``. A
request that also carries ``Authorization`` or ``x-api-key`` would have that header treated by the gateway
as the upstream provider's own key (bring-your-own-key), so both are removed: a ``None`` value deletes the
header the wire API would otherwise add, as pi's header merge treats ``null``. Workers AI takes the same
token as a plain ``Authorization: Bearer``, which every OpenAI-compatible request sends already.

OpenCode (Zen and Go) routes a conversation by ``x-opencode-session: <session id>`` and names the client
in ``x-opencode-client``. pi sends ``pi``; pi-tui names itself ``pi-tui``, as its ``User-Agent`` does, so
OpenCode can tell the two agents apart.
"""

from __future__ import annotations

import dataclasses
import os
from urllib.parse import urlsplit

from ..stream import StreamOptions
from ..types import Model

__all__ = [
    "OPENCODE_CLIENT",
    "MissingCloudflareId",
    "cloudflare_gateway_headers",
    "fill_cloudflare_ids",
    "opencode_headers",
    "with_gateway_headers",
]

OPENCODE_CLIENT = "pi-tui"
_OPENCODE_HOST = "opencode.ai"
_CLOUDFLARE_IDS = ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID")


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _has(headers: dict[str, str | None] | None, name: str) -> bool:
    return any(key.lower() == name for key in headers or {})


def cloudflare_gateway_headers(api_key: str) -> dict[str, str | None]:
    """The gateway's own authorisation, with the upstream auth headers deleted."""
    return {"cf-aig-authorization": f"Bearer {api_key}", "Authorization": None, "x-api-key": None}


def opencode_headers(session_id: str) -> dict[str, str | None]:
    """OpenCode's per-conversation routing header and the client's name."""
    return {"x-opencode-session": session_id, "x-opencode-client": OPENCODE_CLIENT}


class MissingCloudflareId(ValueError):
    """A Cloudflare base URL names an account or gateway id that neither auth.json nor the environment has."""


def fill_cloudflare_ids(model: Model, stored: dict[str, str] | None = None) -> Model:
    """``model`` with ``{CLOUDFLARE_ACCOUNT_ID}`` / ``{CLOUDFLARE_GATEWAY_ID}`` in its base URL filled, each
    from ``stored`` (the ``env`` of the provider's auth.json entry, which pi's ``/login`` writes) and else
    from the environment, as pi resolves them field by field (a ``models.json`` base URL may name them too);
    unchanged when there is nothing to fill.

    Raises:
        MissingCloudflareId: an id the URL needs is in neither place.
    """
    url = model.base_url or ""
    if "{" not in url:
        return model
    for name in _CLOUDFLARE_IDS:
        placeholder = "{" + name + "}"
        if placeholder not in url:
            continue
        value = (stored or {}).get(name, "").strip() or os.environ.get(name, "").strip()
        if not value:
            raise MissingCloudflareId(
                f"{model.provider} needs {name}: set it in the environment, or run /login {model.provider} "
                "(it asks for the Cloudflare ids and stores them in auth.json)"
            )
        url = url.replace(placeholder, value)
    return model if url == model.base_url else model.model_copy(update={"base_url": url})


def with_gateway_headers(model: Model, options: StreamOptions) -> tuple[Model, StreamOptions]:
    """The model with its Cloudflare ids filled in, and options whose headers add the ones the gateway
    needs (headers already set in ``options`` win); ``options`` itself is not changed."""
    added: dict[str, str | None] = {}
    if model.provider == "cloudflare-ai-gateway" and options.api_key:
        if not _has(options.headers, "cf-aig-authorization"):
            added = cloudflare_gateway_headers(options.api_key)
    is_opencode = (
        model.provider in ("opencode", "opencode-go") or _host(model.base_url or "") == _OPENCODE_HOST
    )
    if is_opencode and options.session_id:
        added = {
            k: v for k, v in opencode_headers(options.session_id).items() if not _has(options.headers, k)
        }
    if added:
        options = dataclasses.replace(options, headers={**added, **(options.headers or {})})
    if model.provider.startswith("cloudflare-"):
        from ..auth import AuthStorage

        return fill_cloudflare_ids(model, AuthStorage().stored_env(model.provider)), options
    return model, options
