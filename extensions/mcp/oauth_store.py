"""Where MCP logins are kept: ``<agent dir>/mcp-oauth.json``, next to pi's ``auth.json``, mode 0600.

One entry per server URL (a login belongs to the server's address, not to the name it has in
``mcp.json``, so renaming a server keeps its login and two configs naming the same URL share it)::

    {"https://example.com/mcp": {"server": "example", "access": "…", "refresh": "…", "expires": <ms>,
      "scope": "…", "clientId": "…", "clientSecret": "…", "tokenEndpointAuthMethod": "…",
      "tokenEndpoint": "…", "resource": "…", "issuer": "…", "redirectUri": "…"}}

``expires`` is milliseconds since 1970, as in ``auth.json``. The client registration (``clientId`` …)
outlives the tokens: when a refresh fails the tokens are dropped, and every later login reuses the
registration (with the loopback redirect address it was registered with) instead of registering again.
Tokens never go to ``mcp.json``, logs or messages.

Stdlib and the extension API only: reading the store never imports the MCP SDK.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pi_tui.extensions.api import decode_json

from .config import agent_dir

__all__ = ["EXPIRY_MARGIN_S", "Login", "StoreError", "TokenStore", "expires_at", "store_path"]

EXPIRY_MARGIN_S = 60.0
"""A token this close to its expiry is renewed before it is sent, rather than refused by the server."""


def expires_at(expires_in: object) -> float:
    """A token response's ``expires_in`` (seconds) as milliseconds since 1970; 0 when not given."""
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
        return (time.time() + float(expires_in)) * 1000
    return 0.0


class StoreError(RuntimeError):
    """``mcp-oauth.json`` cannot be read or written; the message names the file and the reason."""


@dataclass(frozen=True)
class Login:
    """What is stored for one server: its tokens (empty once dropped) and its client registration."""

    server: str = ""
    access: str = ""
    refresh: str = ""
    expires: float = 0.0  # milliseconds since 1970; 0 = unknown (the server said nothing)
    scope: str = ""
    client_id: str = ""
    client_secret: str = ""
    token_endpoint_auth_method: str = ""
    token_endpoint: str = ""
    resource: str = ""
    issuer: str = ""
    redirect_uri: str = ""  # the loopback address the client was registered with (reused with it)

    @property
    def logged_in(self) -> bool:
        """Whether there is an access token to send."""
        return bool(self.access)

    def expired(self, now: float | None = None) -> bool:
        """Whether the access token is past (or within `EXPIRY_MARGIN_S` of) its expiry."""
        if not self.expires:
            return False
        current = time.time() if now is None else now
        return current * 1000 >= self.expires - EXPIRY_MARGIN_S * 1000

    def without_tokens(self) -> Login:
        """The registration only: what is left after a refresh failed."""
        return replace(self, access="", refresh="", expires=0.0, scope="")

    def to_json(self) -> dict[str, str | float]:
        """The entry as written to the file (camelCase keys, empty values left out)."""
        return {_camel(k): v for k, v in asdict(self).items() if v}

    @classmethod
    def from_json(cls, data: object) -> Login | None:
        """An entry read from the file, or None when it is not an object."""
        if not isinstance(data, dict):
            return None

        def text(name: str) -> str:
            value = data.get(_camel(name))
            return value if isinstance(value, str) else ""

        expires = data.get("expires")
        return cls(
            server=text("server"),
            access=text("access"),
            refresh=text("refresh"),
            expires=float(expires)
            if isinstance(expires, int | float) and not isinstance(expires, bool)
            else 0.0,
            scope=text("scope"),
            client_id=text("client_id"),
            client_secret=text("client_secret"),
            token_endpoint_auth_method=text("token_endpoint_auth_method"),
            token_endpoint=text("token_endpoint"),
            resource=text("resource"),
            issuer=text("issuer"),
            redirect_uri=text("redirect_uri"),
        )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def store_path() -> Path:
    """``<agent dir>/mcp-oauth.json``."""
    return agent_dir() / "mcp-oauth.json"


class TokenStore:
    """Reads and writes ``mcp-oauth.json``; every write replaces the file atomically, created 0600.

    Args:
        path: The file; defaults to `store_path`.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else store_path()

    def _read(self) -> dict[str, object]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot be read: {exc.strerror or exc}") from None
        try:
            data = decode_json(text or "{}")  # the one decoder: a [[[[…]]]] file is an error, not a crash
        except ValueError as exc:
            raise StoreError(f"{self.path}: not valid JSON ({exc}); move it away and log in again") from None
        if not isinstance(data, dict):
            raise StoreError(f"{self.path}: expected an object of logins by server URL")
        return data

    def get(self, url: str) -> Login | None:
        """The login stored for ``url`` (None when there is none or the file cannot be read)."""
        try:
            return Login.from_json(self._read().get(url))
        except StoreError:
            return None

    def put(self, url: str, login: Login) -> None:
        """Store ``login`` for ``url``.

        Raises:
            StoreError: the file is malformed (it is left as it was) or cannot be written.
        """
        self._modify(lambda data: data.__setitem__(url, login.to_json()))

    def remove(self, url: str) -> bool:
        """Forget ``url``'s login and registration; whether there was one.

        Raises:
            StoreError: the file is malformed or cannot be written.
        """
        removed: list[bool] = []
        self._modify(lambda data: removed.append(data.pop(url, None) is not None))
        return removed[0]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = os.open(self.path.with_name(f".{self.path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot be written: {exc.strerror or exc}") from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    def _modify(self, change: Callable[[dict[str, object]], object]) -> None:
        with self._locked():
            data = self._read()  # a malformed file raises here and is never overwritten
            change(data)
            from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

            try:
                # Atomic; a new file is 0600 (it holds tokens), an existing one keeps its mode.
                replace_file_bytes(self.path, json.dumps(data, indent=2).encode("utf-8"), new_file_mode=0o600)
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot be written: {exc.strerror or exc}") from None
