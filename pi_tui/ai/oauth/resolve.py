"""Using a stored login for a request: refresh it shortly before it expires, once across processes.

A token with less than five minutes left is refreshed under pi's ``auth.json`` lock: the file is
re-read under the lock, and when another process (pi or pi-tui) refreshed meanwhile its token is used
as it is. The refresh token of most providers changes on every refresh, so refreshing twice would
log the user out; the lock is what prevents it.
"""

from __future__ import annotations

import threading
import time

from ..auth import AuthFileError, AuthStorage
from ..errors import CredentialError
from . import get_oauth_provider
from .types import Credential, LoginCancelled, OAuthError, RequestAuth

__all__ = ["LoginExpiredError", "expires_soon", "resolve_oauth", "MIN_VALIDITY_MS"]

MIN_VALIDITY_MS = 5 * 60 * 1000


class LoginExpiredError(OAuthError, CredentialError):
    """A stored login can no longer be used (refresh refused or impossible); one line naming /login."""


def expires_soon(credential: Credential, min_validity_ms: int = MIN_VALIDITY_MS) -> bool:
    """Whether ``credential`` has less than ``min_validity_ms`` left."""
    expires = credential.get("expires")
    if not isinstance(expires, int | float):
        return True
    return time.time() * 1000 + min_validity_ms >= expires


def _refused(exc: OAuthError) -> bool:
    text = str(exc)
    return any(f"(HTTP {status})" in text for status in (400, 401, 403))


def resolve_oauth(
    storage: AuthStorage,
    provider_id: str,
    *,
    cancel: threading.Event | None = None,
    min_validity_ms: int = MIN_VALIDITY_MS,
) -> RequestAuth | None:
    """What ``provider_id``'s stored login adds to a request, refreshed first when it is about to expire.

    Blocking (it may make one HTTP request); run it on a worker thread from async code.

    Returns:
        None when no login is stored (another credential type, or logged out meanwhile).

    Raises:
        LoginExpiredError: the refresh was refused (expired or revoked) or failed; the message names
            ``/login <provider>`` and never a token.
    """
    storage.reload_if_changed()
    credential = storage.oauth(provider_id)
    if credential is None:
        return None
    provider = get_oauth_provider(provider_id)
    if provider is None:  # a login pi made for a provider we have no flow for: use it as it is
        access = credential.get("access")
        return RequestAuth(api_key=access if isinstance(access, str) else None)
    if expires_soon(credential, min_validity_ms):
        stop = cancel if cancel is not None else threading.Event()

        def change(current: Credential | None) -> Credential | None:
            if current is None or current.get("type") != "oauth":
                return None  # logged out meanwhile
            if not expires_soon(current, min_validity_ms):
                return None  # another process refreshed while we waited for the lock
            return provider.refresh(current, stop)

        try:
            refreshed = storage.modify(provider_id, change, cancel=cancel)
        except LoginCancelled:
            raise
        except OAuthError as exc:
            if _refused(exc):
                raise LoginExpiredError(
                    f"The {provider.name} login has expired or was revoked ({exc}). "
                    f"Run /login {provider_id} (in a shell: pi-tui login {provider_id}) to sign in again."
                ) from None
            raise LoginExpiredError(
                f"Could not refresh the {provider.name} login ({exc}). Check the network, or run "
                f"/login {provider_id} (in a shell: pi-tui login {provider_id}) to sign in again."
            ) from None
        except AuthFileError as exc:
            raise LoginExpiredError(f"Could not refresh the {provider.name} login: {exc}") from None
        if refreshed is None or refreshed.get("type") != "oauth":
            return None
        credential = refreshed
    return provider.to_auth(credential)
