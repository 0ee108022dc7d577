"""Logging in to a remote MCP server with OAuth, as the MCP authorization spec describes.

The protocol is the SDK's (``mcp.client.auth.OAuthClientProvider``): a request to the server that is
answered 401 leads to the protected-resource metadata (the ``WWW-Authenticate`` header's
``resource_metadata`` or the well-known URL), the authorization server's metadata (RFC 8414 or OpenID
discovery), dynamic client registration (unless ``oauth.clientId`` names a registered client), PKCE with
S256, the ``resource`` indicator and the ``iss`` check. The browser step is pi-tui's own
(`pi_tui.extensions.api.BrowserLogin`: a loopback redirect, the URL shown, the browser opened in the TUI,
a pasted redirect URL accepted). The result goes to ``mcp-oauth.json`` (``oauth_store.py``), from where
`oauth.StoredTokenAuth` sends and renews it. Imported only by ``/mcp login``.
"""

from __future__ import annotations

import logging
import urllib.parse
from typing import TYPE_CHECKING

from pi_tui.extensions.api import BrowserLogin, BrowserLoginError, UIBridge

from .config import OAuthSettings, ServerConfig
from .oauth_store import Login, StoreError, TokenStore, expires_at

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

__all__ = ["LoginError", "log_in"]

_NULL_HANDLER = logging.NullHandler()


class LoginError(RuntimeError):
    """The login did not complete; the message names the server, says why and what to do."""


class _Memory:
    """The SDK's ``TokenStorage``, kept in memory until the whole login succeeded."""

    def __init__(self, client: OAuthClientInformationFull | None) -> None:
        self.client = client
        self.tokens: OAuthToken | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def log_in(config: ServerConfig, store: TokenStore, ui: UIBridge, mode: str, *,
                 timeout: float = 300.0) -> Login:  # fmt: skip
    """Run the whole login for remote server ``config`` and store the result.

    Args:
        config: The server (``url`` set).
        store: Where the login is saved.
        ui: ``ctx.ui``: shows the URL, asks for a pasted redirect URL.
        mode: ``ctx.mode``.
        timeout: Seconds to wait for the browser.

    Raises:
        LoginError: discovery, registration, the browser step or the token exchange failed.
    """
    from . import sdk

    await sdk.loaded([config.transport])  # never import the SDK while its preload thread is importing it
    import httpx2
    from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthRegistrationError, OAuthTokenError
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
    from mcp_types import LATEST_PROTOCOL_VERSION

    logging.getLogger("mcp").addHandler(_NULL_HANDLER)  # the SDK logs a failed flow with a traceback
    name, url = config.name, config.url or ""
    settings = config.oauth or OAuthSettings()
    where = f'MCP server "{name}"'
    try:
        browser = BrowserLogin(ui, mode, f"MCP server {name}", port=settings.port, path=settings.path)
    except BrowserLoginError as exc:
        raise LoginError(f"{where}: {exc}") from None
    async with browser:
        client = None
        if settings.client_id:  # registered beforehand: the SDK skips dynamic registration
            client = OAuthClientInformationFull(
                client_id=settings.client_id,
                client_secret=settings.client_secret or None,
                redirect_uris=[browser.redirect_uri],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_post" if settings.client_secret else "none",
            )
        memory = _Memory(client)
        pending: list[str] = []

        async def redirect(authorization_url: str) -> None:
            pending.append(authorization_url)

        async def callback() -> AuthorizationCodeResult:
            got = await browser.authorize(pending[-1], timeout=timeout)
            return AuthorizationCodeResult(code=got.code, state=got.state, iss=got.iss)

        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="pi-tui",
                redirect_uris=[browser.redirect_uri],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            ),
            storage=memory,
            redirect_handler=redirect,
            callback_handler=callback,
        )
        # Any request the server answers 401 starts the flow; an initialize is what a client sends first.
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                            "clientInfo": {"name": "pi-tui", "version": "login"}}}  # fmt: skip
        headers = {**config.headers, "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION}  # fmt: skip
        try:
            async with httpx2.AsyncClient(auth=provider, timeout=30.0) as http:
                response = await http.post(url, json=hello, headers=headers)
        except BrowserLoginError as exc:
            raise LoginError(f"{exc}; try again with /mcp login {name}") from None
        except OAuthRegistrationError as exc:
            raise LoginError(f"{where}: the server refused to register pi-tui as a client ({_short(exc)}). "
                             'If it needs a client registered beforehand, set "oauth": {"clientId": …} '
                             "in mcp.json") from None  # fmt: skip
        except OAuthTokenError as exc:
            raise LoginError(f"{where}: the server refused the authorization code ({_short(exc)})") from None
        except OAuthFlowError as exc:
            raise LoginError(f"{where}: login failed: {_short(exc)}") from None
        except httpx2.HTTPError as exc:
            raise LoginError(f"{where}: cannot reach {url}: {_short(exc)}") from None
        tokens = memory.tokens
        if tokens is None:
            if response.status_code < 400:
                raise LoginError(f"{where} did not ask for a login (it answered without one)")
            raise LoginError(f"{where}: login failed: the server answered {response.status_code}")
        if response.status_code in (401, 403):
            raise LoginError(f"{where}: the server refused the new login ({response.status_code})")
        registered = memory.client
        context = provider.context
        metadata = context.oauth_metadata
        include_resource = context.should_include_resource_param(context.protocol_version)
        login = Login(
            server=name,
            access=tokens.access_token,
            refresh=tokens.refresh_token or "",
            expires=expires_at(tokens.expires_in),
            scope=tokens.scope or "",
            client_id=registered.client_id or "" if registered else "",
            client_secret=(registered.client_secret or "") if registered else "",
            token_endpoint_auth_method=(registered.token_endpoint_auth_method or "") if registered else "",
            token_endpoint=str(metadata.token_endpoint)
            if metadata
            else _origin(url) + "/token",  # the spec's default
            resource=context.get_resource_url() if include_resource else "",
            issuer=str(metadata.issuer) if metadata else "",
        )
        try:
            store.put(url, login)
        except StoreError as exc:
            raise LoginError(f"{where}: logged in, but the login could not be saved: {exc}") from None
        return login


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "…"
