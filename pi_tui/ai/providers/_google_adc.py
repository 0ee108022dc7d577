"""Google application-default credentials (ADC) for Vertex AI: a file → an OAuth access token.

The file is ``GOOGLE_APPLICATION_CREDENTIALS`` or gcloud's
``~/.config/gcloud/application_default_credentials.json`` (what ``gcloud auth application-default
login`` writes). Two kinds are understood, as google-auth-library reads them:

- ``service_account`` (a key file): a JWT naming the account, the ``cloud-platform`` scope and the token
  URI, signed RS256 with the file's private key, exchanged with the ``jwt-bearer`` grant;
- ``authorized_user`` (gcloud's login): its refresh token exchanged with the ``refresh_token`` grant;
  its ``quota_project_id`` goes with each request as ``x-goog-user-project``.

Both post to the file's ``token_uri`` (default ``https://oauth2.googleapis.com/token``). A token is kept
until a minute before it expires, per file (re-read when the file changes). Every failure is one
`AdcError` line that names the file and what to do.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

__all__ = ["AccessToken", "AdcError", "SetupError", "access_token", "clear_token_cache", "credentials_path"]

DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_EARLY_REFRESH = 60.0  # seconds before expiry a token is replaced
_TIMEOUT = 30.0
_LOGIN_HINT = (
    "run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS to a key file"
)


class SetupError(ValueError):
    """A Google provider is not set up (a key, project, location or credentials file is missing or bad);
    the message is one line saying what to set."""


class AdcError(SetupError):
    """Application-default credentials are missing, unreadable or refused."""


@dataclass(frozen=True)
class AccessToken:
    """A bearer token and where it came from."""

    token: str
    expires_at: float  # epoch seconds
    quota_project: str | None = None


_cache: dict[tuple[str, int, int], AccessToken] = {}


def clear_token_cache() -> None:
    """Forget cached tokens (the next request exchanges its credentials again)."""
    _cache.clear()


def credentials_path() -> Path:
    """The ADC file to use: ``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's default location."""
    explicit = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        return Path(explicit).expanduser()
    if os.name == "nt" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "gcloud" / "application_default_credentials.json"
    return Path.home() / ".config" / "gcloud" / "application_default_credentials.json"


async def access_token(path: Path | None = None) -> AccessToken:
    """A valid access token for the ADC file (cached until a minute before it expires).

    Raises:
        AdcError: no file, an unreadable or unsupported one, or the token endpoint refused it.
    """
    path = path or credentials_path()
    try:
        stat = path.stat()
    except OSError:
        source = (
            "GOOGLE_APPLICATION_CREDENTIALS"
            if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
            else "gcloud's default"
        )
        raise AdcError(
            f"Vertex AI needs credentials: no application-default credentials file at {path} ({source}); "
            f"set GOOGLE_CLOUD_API_KEY, or {_LOGIN_HINT}"
        ) from None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(key)
    if cached is not None and cached.expires_at - _EARLY_REFRESH > time.time():
        return cached
    info = _read(path)
    token = await _exchange(path, info)
    _cache.clear()  # one file in use at a time; a changed file replaces the old token
    _cache[key] = token
    return token


def _read(path: Path) -> JsonObject:
    try:
        info = json_safe.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AdcError(f"Cannot read the Google credentials file {path}: {exc}") from None
    if not isinstance(info, dict):
        raise AdcError(f"The Google credentials file {path} is not a JSON object")
    return info


def _require(info: JsonObject, path: Path, *names: str) -> list[str]:
    missing = [name for name in names if not isinstance(info.get(name), str) or not info[name]]
    if missing:
        raise AdcError(f"The Google credentials file {path} lacks {', '.join(missing)}; {_LOGIN_HINT}")
    return [str(info[name]) for name in names]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def service_account_assertion(info: JsonObject, token_uri: str, now: int, path: Path) -> str:
    """The signed JWT a service account exchanges for an access token."""
    from ._rs256 import load_private_key, sign_rs256

    email, pem = _require(info, path, "client_email", "private_key")
    header: JsonObject = {"alg": "RS256", "typ": "JWT"}
    if isinstance(info.get("private_key_id"), str):
        header["kid"] = info["private_key_id"]
    claims = {"iss": email, "scope": SCOPE, "aud": token_uri, "iat": now, "exp": now + 3600}
    signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
    try:
        key = load_private_key(pem)
    except ValueError as exc:
        raise AdcError(f"The private key in {path} cannot be used: {exc}") from None
    return f"{signing_input}.{_b64url(sign_rs256(key, signing_input.encode()))}"


async def _exchange(path: Path, info: JsonObject) -> AccessToken:
    kind = info.get("type")
    token_uri = info.get("token_uri") if isinstance(info.get("token_uri"), str) else None
    token_uri = token_uri or DEFAULT_TOKEN_URI
    quota_project: str | None = None
    if kind == "service_account":
        assertion = service_account_assertion(info, token_uri, int(time.time()), path)
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
    elif kind == "authorized_user":
        client_id, client_secret, refresh_token = _require(
            info, path, "client_id", "client_secret", "refresh_token"
        )
        form = {
            "grant_type": "refresh_token",
            "client_id": client_id,
            "client_secret": client_secret,
            "refresh_token": refresh_token,
        }
        quota = info.get("quota_project_id")
        quota_project = quota if isinstance(quota, str) and quota else None
    else:
        raise AdcError(
            f"Unsupported credential type {kind!r} in {path}: Vertex AI here takes a service-account key file "
            "or gcloud's authorized_user login"
        )
    started = time.time()
    status, payload = await asyncio.to_thread(_post_form, token_uri, form)
    if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get("access_token"), str):
        detail = _token_error(payload)
        hint = (
            _LOGIN_HINT
            if kind == "authorized_user"
            else "check the key file (is the key deleted or the account disabled?)"
        )
        raise AdcError(f"Google token request to {token_uri} failed ({status}): {detail}; {hint}")
    lifetime = payload.get("expires_in")
    seconds = float(lifetime) if isinstance(lifetime, int | float) else 3600.0
    return AccessToken(payload["access_token"], started + seconds, quota_project)


def _token_error(payload: Any) -> str:
    if isinstance(payload, dict):
        error = payload.get("error")
        description = payload.get("error_description")
        if isinstance(error, str):
            return f"{error}: {description}" if isinstance(description, str) else error
    text = json.dumps(payload) if not isinstance(payload, str) else payload
    return text[:300] or "no details"


def _post_form(url: str, form: dict[str, str]) -> tuple[int, Any]:
    """POST a form and return (status, parsed JSON or text); transport failures become `AdcError`."""
    import urllib.error
    import urllib.parse
    import urllib.request

    data = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(
        url, data=data, headers={"content-type": "application/x-www-form-urlencoded"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: S310 (the file's token URI)
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (OSError, ValueError) as exc:
        raise AdcError(f"Cannot reach the Google token endpoint {url}: {exc}") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        return status, json_safe.loads(text)
    except ValueError:
        return status, text
