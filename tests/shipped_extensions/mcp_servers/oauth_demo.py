"""An MCP server behind OAuth, on the SDK's own classes: it is its own authorization server.

Run: ``python oauth_demo.py PORT`` serves streamable HTTP on ``http://127.0.0.1:PORT/mcp`` with the
MCP authorization spec's endpoints (protected-resource and authorization-server metadata, dynamic client
registration, ``/authorize``, ``/token``). ``/authorize`` approves at once and redirects to the client's
loopback callback, so a test plays the browser by fetching the authorization URL itself.

Test controls (plain HTTP, no token needed), so tests drive the server's clock instead of sleeping:

- ``POST /test/expire``: every access token issued so far expires now (refresh tokens stay valid);
- ``POST /test/revoke``: every access and refresh token is forgotten (a refresh fails);
- ``POST /test/close-registration``: dynamic client registration is refused from now on;
- ``POST /test/deny``: ``/authorize`` answers ``access_denied`` (the user said no);
- ``GET /test/log``: what happened, in order (``register``, ``authorize``, ``code``, ``refresh``, ``call``).
"""

from __future__ import annotations

import secrets
import sys
import time

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

ACCESS_TTL = 3600


class Provider:
    """An in-memory authorization server that says yes to everyone (unless told otherwise)."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.log: list[str] = []
        self.registration_open = True
        self.deny = False

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if not self.registration_open:
            raise RegistrationError("invalid_client_metadata", "registration is closed on this server")
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.log.append("register")

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.log.append("authorize")
        if self.deny:
            raise AuthorizeError("access_denied", "the user declined")
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + ACCESS_TTL, resource=resource)  # fmt: skip
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=ACCESS_TTL,
                          refresh_token=refresh, scope=" ".join(scopes))  # fmt: skip

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.log.append("code")
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.log.append("refresh")
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at <= time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(port: int) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    app = MCPServer(
        "oauthdemo",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp", "read"], default_scopes=["mcp"]
            ),  # fmt: skip
            required_scopes=["mcp"],
            validate_token_resource=False,
        ),
    )

    @app.tool()
    def whoami() -> str:
        """Say which OAuth client the call came from."""
        provider.log.append("call")
        token = get_access_token()
        return f"client {token.client_id if token else '?'}"

    @app.custom_route("/test/expire", methods=["POST"])
    async def expire(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"ok": True})

    @app.custom_route("/test/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"ok": True})

    @app.custom_route("/test/close-registration", methods=["POST"])
    async def close_registration(request: Request) -> Response:
        provider.registration_open = False
        return JSONResponse({"ok": True})

    @app.custom_route("/test/deny", methods=["POST"])
    async def deny(request: Request) -> Response:
        provider.deny = True
        return JSONResponse({"ok": True})

    @app.custom_route("/test/log", methods=["GET"])
    async def log(request: Request) -> Response:
        return JSONResponse(provider.log)

    return app


if __name__ == "__main__":
    port = int(sys.argv[1])
    build(port).run("streamable-http", host="127.0.0.1", port=port)
