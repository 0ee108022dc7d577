"""The browser half of a PKCE login: a loopback server for the redirect, raced with a pasted code.

`authorize_in_browser` is the whole step every browser login shares: it starts a small HTTP server on
the redirect port (`CallbackServer`), shows the authorization URL, and at the same time asks the user for
the code (`wait_for_authorization`; for a browser on another machine, whose redirect to ``localhost``
never reaches us). Whichever answers first wins; the other is withdrawn. Each provider describes its
step with a `BrowserStep`.
"""

from __future__ import annotations

import html
import os
import queue
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ._http import test_mode
from .types import AuthEvent, AuthPrompt, Interaction, LoginCancelled, OAuthError

__all__ = [
    "Authorization",
    "BrowserStep",
    "CallbackServer",
    "authorize_in_browser",
    "parse_authorization_input",
    "wait_for_authorization",
]

CALLBACK_HOST_ENV = "PI_OAUTH_CALLBACK_HOST"
"""pi's variable for the address the callback server binds (default 127.0.0.1)."""


@dataclass(frozen=True)
class Authorization:
    """The code (and state, and RFC 9207 issuer, when known) the authorization server handed back."""

    code: str
    state: str | None
    iss: str | None = None


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None


def parse_authorization_input(text: str) -> Authorization | None:
    """Read what a user pasted: the redirect URL, a query string, ``code#state`` or the bare code."""
    value = text.strip()
    if not value:
        return None
    parts = urllib.parse.urlsplit(value)
    if parts.scheme in ("http", "https") and parts.netloc:
        query = urllib.parse.parse_qs(parts.query)
        code = (query.get("code") or [""])[0]
        return Authorization(code, _first(query.get("state")), _first(query.get("iss"))) if code else None
    if "#" in value:
        code, state = value.split("#", 1)
        return Authorization(code, state or None) if code else None
    if "code=" in value:
        query = urllib.parse.parse_qs(value.lstrip("?"))
        code = (query.get("code") or [""])[0]
        return Authorization(code, _first(query.get("state"))) if code else None
    return Authorization(value, None)


def _page(title: str, detail: str = "") -> bytes:
    body = f"<h1>{html.escape(title)}</h1>" + (f"<p>{html.escape(detail)}</p>" if detail else "")
    return f"<!doctype html><html><head><meta charset='utf-8'><title>pi-tui</title></head><body>{body}</body></html>".encode()


class CallbackServer:
    """A one-shot loopback HTTP server that receives the authorization redirect.

    Args:
        port: The redirect URI's port (in test mode a free port is taken instead).
        path: The redirect URI's path.
        expected_state: The ``state`` the redirect must carry (None: not checked here).
        provider_name: Named on the browser page.

    Raises:
        OAuthError: the port cannot be bound (another login running, or another program on it).
    """

    def __init__(self, port: int, path: str, expected_state: str | None, provider_name: str) -> None:
        self.path = path
        self.expected_state = expected_state
        self.provider_name = provider_name
        self.results: queue.Queue[Authorization | OAuthError | None] = queue.Queue()
        host = os.environ.get(CALLBACK_HOST_ENV, "").strip() or "127.0.0.1"
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                owner._handle(self)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
                return  # the query holds the code: keep it out of stderr

        try:
            self.server = ThreadingHTTPServer((host, 0 if test_mode() else port), Handler)
        except OSError as exc:
            raise OAuthError(
                f"cannot listen for the login callback on {host}:{port} ({exc.strerror or exc}); "
                "is another login running?"
            ) from None
        self.host = host
        self.port = int(self.server.server_address[1])
        # a short poll interval: close() (shutdown) waits until the serving loop next looks, 0.5 s by default
        self.thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="oauth-callback",
            daemon=True,
        )
        self.thread.start()

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        url = urllib.parse.urlsplit(request.path)
        query = urllib.parse.parse_qs(url.query)
        code = (query.get("code") or [""])[0]
        state = _first(query.get("state"))
        error = (query.get("error") or [""])[0]
        if url.path != self.path:
            self._reply(request, 404, "Callback route not found.")
        elif error:
            self._reply(request, 400, f"{self.provider_name} login did not complete.", f"Error: {error}")
            self.results.put(OAuthError(f"{self.provider_name} login did not complete: {error}"))
        elif not code:
            self._reply(request, 400, "Missing code parameter.")
        elif self.expected_state is not None and state != self.expected_state:
            self._reply(request, 400, "State mismatch.")
        else:
            self._reply(request, 200, f"{self.provider_name} login completed. You can close this window.")
            self.results.put(Authorization(code, state, _first(query.get("iss"))))

    @staticmethod
    def _reply(request: BaseHTTPRequestHandler, status: int, title: str, detail: str = "") -> None:
        page = _page(title, detail)
        request.send_response(status)
        request.send_header("Content-Type", "text/html; charset=utf-8")
        request.send_header("Content-Length", str(len(page)))
        request.end_headers()
        request.wfile.write(page)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def wait_for_authorization(
    io: Interaction,
    server: CallbackServer | None,
    *,
    url: str,
    instructions: str,
    manual_message: str,
    placeholder: str,
) -> Authorization:
    """Show ``url`` and wait for the callback (when ``server`` runs) or a pasted code, whichever comes first.

    Raises:
        LoginCancelled: the user cancelled.
        OAuthError: the callback reported an error, or nothing usable was pasted.
    """
    # The callback server and the pasted code feed one queue; None means the prompt was cancelled.
    results: queue.Queue[Authorization | OAuthError | None] = (
        server.results if server is not None else queue.Queue()
    )
    io.notify(AuthEvent("auth_url", message=instructions, url=url))
    manual = AuthPrompt("manual_code", manual_message, placeholder=placeholder)

    def ask() -> None:
        try:
            answer = io.prompt(manual)
        except LoginCancelled:
            results.put(None)
            return
        except OAuthError as exc:
            results.put(exc)
            return
        if manual.withdrawn.is_set():
            return
        parsed = parse_authorization_input(answer)
        results.put(parsed if parsed is not None else OAuthError("No authorization code was entered"))

    threading.Thread(target=ask, name="oauth-manual-code", daemon=True).start()
    try:
        while True:
            try:
                got = results.get(timeout=0.1)
            except queue.Empty:
                if io.cancel.is_set():
                    raise LoginCancelled() from None
                continue
            if got is None:
                raise LoginCancelled()
            if isinstance(got, OAuthError):
                raise got
            return got
    finally:
        manual.withdrawn.set()


@dataclass(frozen=True)
class BrowserStep:
    """How one provider's browser step goes.

    Attributes:
        provider_name: Named on the browser page the callback answers with.
        port: The redirect URI's port (0: any free port).
        path: The redirect URI's path.
        redirect_host: How the redirect URI names this machine (``localhost``, ``127.0.0.1``); None: the
            address the callback server binds (``PI_OAUTH_CALLBACK_HOST``).
        instructions: Shown with the URL to open.
        manual_message: The question asking for a pasted code or redirect URL.
        expected_state: The ``state`` the redirect (or a pasted URL that carries one) must hold; None:
            not checked.
        state_mismatch: The error when a pasted answer carries another ``state``.
        paste_only_if_port_taken: When the port cannot be bound, go on with a pasted answer alone
            instead of failing.
        listening_message: A progress line once the server listens; ``{uri}`` is the redirect URI.
    """

    provider_name: str
    port: int
    path: str
    redirect_host: str | None
    instructions: str
    manual_message: str
    expected_state: str | None = None
    state_mismatch: str = "OAuth state mismatch: the pasted code belongs to another login; start again"
    paste_only_if_port_taken: bool = False
    listening_message: str | None = None


def authorize_in_browser(
    io: Interaction, step: BrowserStep, authorize_url: Callable[[str], str]
) -> tuple[Authorization, str]:
    """Run a browser login's authorization: listen for the redirect, show the URL, race it with a paste.

    Args:
        io: Where the URL is shown and the code asked for.
        step: The provider's `BrowserStep`.
        authorize_url: The URL to open, given the redirect URI (its query names that URI).

    Returns:
        The authorization and the redirect URI it was issued for (the token exchange repeats it).

    Raises:
        LoginCancelled: the user cancelled.
        OAuthError: the port is taken (unless ``step.paste_only_if_port_taken``), the callback reported
            an error, nothing usable was pasted, or the pasted answer belongs to another login.
    """
    try:
        server: CallbackServer | None = CallbackServer(
            step.port, step.path, step.expected_state, step.provider_name
        )
    except OAuthError:
        if not step.paste_only_if_port_taken:
            raise
        server = None  # the port is taken: the pasted redirect URL or code still works
    host = step.redirect_host or (server.host if server is not None else "127.0.0.1")
    redirect_uri = f"http://{host}:{server.port if server is not None else step.port}{step.path}"
    try:
        if server is not None and step.listening_message:
            io.notify(AuthEvent("progress", message=step.listening_message.format(uri=redirect_uri)))
        got = wait_for_authorization(
            io,
            server,
            url=authorize_url(redirect_uri),
            instructions=step.instructions,
            manual_message=step.manual_message,
            placeholder=redirect_uri,
        )
    finally:
        if server is not None:
            server.close()
    if step.expected_state is not None and got.state is not None and got.state != step.expected_state:
        raise OAuthError(step.state_mismatch)
    return got, redirect_uri
