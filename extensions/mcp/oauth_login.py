"""Logging in to a remote MCP server with OAuth, as the MCP authorization spec describes.

The protocol is the SDK's (``mcp.client.auth.OAuthClientProvider``): a request to the server that is
answered 401 leads to the protected-resource metadata (the ``WWW-Authenticate`` header's
``resource_metadata`` or the well-known URL), the authorization server's metadata (RFC 8414 or OpenID
discovery), dynamic client registration (unless ``oauth.clientId`` names a registered client, or an
earlier login's registration is stored: that client is used again, on the loopback address it was
registered with), PKCE with S256, the ``resource`` indicator and the ``iss`` check. ``oauth.scopes``, when
configured, are asked for instead of the scopes the server names. The browser step is pi-tui's own
(`pi_tui.extensions.api.BrowserLogin`: a loopback redirect, the URL shown, the browser opened in the TUI,
a pasted redirect URL accepted). The result goes to ``mcp-oauth.json`` (``oauth_store.py``), from where
`oauth.StoredTokenAuth` sends and renews it. Imported only by ``/mcp login``.
"""

from __future__ import annotations

import logging
import urllib.parse
from dataclasses import dataclass
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


_FORGOTTEN = " (pi-tui registers with the server anew then: the client it had registered is forgotten)"


@dataclass
class _Redirect:
    """The loopback redirect of this login, and the stored registration made for that address (if any)."""

    browser: BrowserLogin
    reused: Login | None


def _open_redirect(ui: UIBridge, mode: str, title: str, settings: OAuthSettings, stored: Login | None
                   ) -> _Redirect:  # fmt: skip
    """The loopback redirect: the stored registration's own address when it can be had again (a
    registered client is only sent to the addresses it was registered with), else the configured one.

    Raises:
        BrowserLoginError: the configured port cannot be bound.
    """
    if stored is not None:
        parts = urllib.parse.urlsplit(stored.redirect_uri)
        port = settings.port or parts.port or 0
        path = settings.path if settings.port else parts.path or settings.path
        try:
            browser = BrowserLogin(ui, mode, title, port=port, path=path)
        except BrowserLoginError:
            browser = None  # the port is taken now: register again on a free one
        if browser is not None and browser.redirect_uri == stored.redirect_uri:
            return _Redirect(browser, stored)
        if browser is not None:
            browser.close()
    return _Redirect(BrowserLogin(ui, mode, title, port=settings.port, path=settings.path), None)


def _stored_registration(store: TokenStore, url: str) -> Login | None:
    """The client registration an earlier login to ``url`` stored, when it has what reuse needs."""
    stored = store.get(url)
    return stored if stored is not None and stored.client_id and stored.redirect_uri else None


def _forget_registration(store: TokenStore, url: str, reused: Login | None) -> str:
    """After a failed login with a reused registration: forget it, unless tokens still depend on it
    (the server may no longer know that client); the words that say so, or ""."""
    if reused is None:
        return ""
    current = store.get(url)
    if current is None or current.logged_in or current.client_id != reused.client_id:
        return ""
    try:
        store.remove(url)
    except StoreError:
        return ""
    return _FORGOTTEN


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
    stored = None if settings.client_id else _stored_registration(store, url)
    try:
        loopback = _open_redirect(ui, mode, f"MCP server {name}", settings, stored)
    except BrowserLoginError as exc:
        raise LoginError(f"{where}: {exc}") from None
    browser, reused = loopback.browser, loopback.reused
    pinned_scope = settings.scope

    class ClientMetadata(OAuthClientMetadata):
        """pi-tui's client metadata; configured scopes stay what is asked for (the SDK puts the scopes
        the server names here on every 401)."""

        def __setattr__(self, key: str, value: object) -> None:
            if key == "scope" and pinned_scope:
                value = pinned_scope
            super().__setattr__(key, value)

    async with browser:
        client = None
        if settings.client_id:  # registered beforehand: the SDK skips dynamic registration
            client = OAuthClientInformationFull(
                client_id=settings.client_id,
                client_secret=settings.client_secret or None,
                redirect_uris=[browser.redirect_uri],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_post" if settings.client_secret else "none",
            )
        elif reused is not None:  # an earlier login's registration: no new client for every login
            try:
                client = OAuthClientInformationFull.model_validate({
                    "client_id": reused.client_id,
                    "client_secret": reused.client_secret or None,
                    "redirect_uris": [browser.redirect_uri],
                    "token_endpoint_auth_method": reused.token_endpoint_auth_method or None,
                    "issuer": reused.issuer or None,  # another authorization server now: the SDK registers
                })  # fmt: skip
            except ValueError:  # a hand-edited entry the SDK cannot take: register anew
                reused = None
        memory = _Memory(client)
        pending: list[str] = []

        async def redirect(authorization_url: str) -> None:
            pending.append(authorization_url)

        async def callback() -> AuthorizationCodeResult:
            got = await browser.authorize(pending[-1], timeout=timeout)
            return AuthorizationCodeResult(code=got.code, state=got.state, iss=got.iss)

        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=ClientMetadata(
                client_name="pi-tui",
                redirect_uris=[browser.redirect_uri],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                scope=pinned_scope or None,
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
        failure = ""
        try:
            async with httpx2.AsyncClient(auth=provider, timeout=30.0) as http:
                response = await http.post(url, json=hello, headers=headers)
        except BrowserLoginError as exc:
            failure = f"{exc}; try again with /mcp login {name}"
        except OAuthRegistrationError as exc:
            raise LoginError(f"{where}: the server refused to register pi-tui as a client ({_short(exc)}). "
                             'If it needs a client registered beforehand, set "oauth": {"clientId": …} '
                             "in mcp.json") from None  # fmt: skip
        except OAuthTokenError as exc:
            failure = f"{where}: the server refused the authorization code ({_short(exc)})"
        except OAuthFlowError as exc:
            failure = f"{where}: login failed: {_short(exc)}"
        except httpx2.HTTPError as exc:
            raise LoginError(f"{where}: cannot reach {url}: {_short(exc)}") from None
        tokens = memory.tokens
        if not failure and tokens is None:
            if response.status_code < 400:
                raise LoginError(f"{where} did not ask for a login (it answered without one)")
            failure = f"{where}: login failed: the server answered {response.status_code}"
        elif not failure and response.status_code in (401, 403):
            failure = f"{where}: the server refused the new login ({response.status_code})"
        if failure or tokens is None:
            # The server may have forgotten a reused client (it then shows an error page, and the
            # user gives up): the next login registers again rather than fail the same way.
            raise LoginError(failure + _forget_registration(store, url, reused))
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
            redirect_uri=browser.redirect_uri,
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
