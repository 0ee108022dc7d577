"""OAuth for remote MCP servers while connected: the stored token sent, renewed on expiry or on a 401.

`StoredTokenAuth` is the ``httpx2.Auth`` of a remote server's connection. It never opens a browser: a
server that answers 401 with no login stored, or whose login can no longer be renewed, fails the
connection with `NeedsLogin`, whose message tells the user to run ``/mcp login NAME``. The login itself
(discovery, registration, PKCE, the browser) is ``oauth_login.py``; the tokens live in ``oauth_store.py``.

Loaded only when a remote server connects (``httpx2`` is loaded by then anyway).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator
from dataclasses import replace
from urllib.parse import quote

import httpx2

from .oauth_store import Login, StoreError, TokenStore, expires_at

__all__ = ["NeedsLogin", "StoredTokenAuth", "login_hint"]


def login_hint(server: str) -> str:
    """The words that tell a user how to log in to ``server``."""
    return f"/mcp login {server}"


class NeedsLogin(RuntimeError):
    """The server wants a login that is missing, expired beyond renewal or refused; says what to run."""


class StoredTokenAuth(httpx2.Auth):
    """Bearer tokens from the store for one server URL, renewed with the refresh token when needed.

    Args:
        store: Where the login is kept (re-read on every request, so a login made elsewhere is seen).
        url: The server URL the login is stored under.
        server: The server's name, for messages.
    """

    requires_response_body = True  # a failed refresh's error text is part of the message

    def __init__(self, store: TokenStore, url: str, server: str) -> None:
        self.store = store
        self.url = url
        self.server = server
        self.problem: NeedsLogin | None = None  # the last reason a request could not be authorised

    def _fail(self, reason: str) -> NeedsLogin:
        self.problem = NeedsLogin(
            f'MCP server "{self.server}" {reason}: log in with {login_hint(self.server)}'
        )
        return self.problem

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        login = self.store.get(self.url)
        if login is not None and login.logged_in and login.expired():
            login = await self._refreshed(login, (yield self._refresh_request(login)))
        if login is not None and login.logged_in:
            request.headers["Authorization"] = f"Bearer {login.access}"
        response = yield request
        if response.status_code != 401:
            if response.status_code < 400:
                self.problem = None
            return
        if login is None or not login.logged_in:
            raise self._fail("needs a login")
        latest = self.store.get(self.url)
        if latest is not None and latest.logged_in and latest.access != login.access:
            login = latest  # renewed meanwhile by another pi-tui
        elif login.refresh:
            login = await self._refreshed(login, (yield self._refresh_request(login)))
        else:
            self._drop_tokens(login)
            raise self._fail("refused the stored login, which cannot be renewed")
        request.headers["Authorization"] = f"Bearer {login.access}"
        response = yield request
        if response.status_code == 401:
            self._drop_tokens(login)
            raise self._fail("refused its login even after renewing it")

    def _refresh_request(self, login: Login) -> httpx2.Request:
        if not login.refresh or not login.token_endpoint:
            raise self._fail("has a login that expired and cannot be renewed")
        data = {"grant_type": "refresh_token", "refresh_token": login.refresh, "client_id": login.client_id}
        if login.resource:
            data["resource"] = login.resource  # RFC 8707: the token is for this server
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        if login.client_secret and login.token_endpoint_auth_method == "client_secret_basic":
            pair = (
                f"{quote(login.client_id, safe='')}:{quote(login.client_secret, safe='')}"  # RFC 6749 2.3.1
            )
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        elif login.client_secret:
            data["client_secret"] = login.client_secret
        return httpx2.Request("POST", login.token_endpoint, data=data, headers=headers)

    async def _refreshed(self, login: Login, response: httpx2.Response) -> Login:
        """The login renewed from the token endpoint's ``response``, stored; `NeedsLogin` when refused."""
        await response.aread()
        body: object = None
        try:
            body = response.json()
        except ValueError:
            body = None
        if (
            response.status_code != 200
            or not isinstance(body, dict)
            or not isinstance(body.get("access_token"), str)
        ):
            said = ""
            if isinstance(body, dict) and isinstance(body.get("error"), str):
                said = f" ({body['error']}" + (f": {body['error_description']}" if isinstance(
                    body.get("error_description"), str) else "") + ")"  # fmt: skip
            self._drop_tokens(login)
            raise self._fail(f"could not renew its login: the server answered {response.status_code}{said}")
        expires_in = body.get("expires_in")
        refresh, scope = body.get("refresh_token"), body.get("scope")
        renewed = replace(
            login,
            access=body["access_token"],
            refresh=refresh if isinstance(refresh, str) else login.refresh,  # not rotated: the old one stays
            expires=expires_at(expires_in),
            scope=scope if isinstance(scope, str) else login.scope,
        )
        try:
            self.store.put(self.url, renewed)
        except StoreError as exc:
            raise self._fail(f"renewed its login but could not save it ({exc})") from None
        return renewed

    def _drop_tokens(self, login: Login) -> None:
        try:
            self.store.put(self.url, login.without_tokens())
        except StoreError:
            pass  # the next request fails the same way, and the login replaces the entry
