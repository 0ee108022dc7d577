"""AWS IAM Identity Center (SSO) profiles: the token ``aws sso login`` cached, traded for role
credentials at the SSO portal.

A profile names ``sso_account_id`` and ``sso_role_name``, and either an ``sso_session`` (a
``[sso-session NAME]`` section of the config file with ``sso_start_url`` and ``sso_region``) or, in
the older form, ``sso_start_url`` and ``sso_region`` itself. ``aws sso login`` caches the access token
in ``~/.aws/sso/cache/<sha1 of the session name, or of the start URL>.json`` (``accessToken``,
``expiresAt``; for a session also ``clientId``, ``clientSecret``, ``refreshToken``). As the AWS SDK
does: a session's token with less than five minutes left is refreshed at the SSO OIDC service
(``POST /token``, grant ``refresh_token``; at most one attempt per 30 s) and written back; a token that
has expired and cannot be refreshed means signing in again. The token buys credentials with
``GET /federation/credentials?account_id=…&role_name=…`` (header ``x-amz-sso_bearer_token``) at
``https://portal.sso.<region>.amazonaws.com``. ``AWS_ENDPOINT_URL_SSO`` and ``AWS_ENDPOINT_URL_SSO_OIDC``
replace the two endpoints.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

from ._aws_cache import REFRESH_WINDOW, Temporary, parse_expiry
from ._aws_http import Unreachable, call
from ._sigv4 import AwsCredentials

__all__ = ["SsoError", "SsoProfile", "sso_credentials", "token_cache_path"]

_TIMEOUT = 30.0
_REFRESH_SPACING = 30.0
_last_refresh: dict[str, float] = {}
_refresh_lock = threading.Lock()


class SsoError(Exception):
    """The SSO profile cannot give credentials; the message says what to run or fix."""


@dataclass(frozen=True, slots=True)
class SsoProfile:
    """What an SSO profile resolves to (its session's settings filled in)."""

    profile: str
    start_url: str
    region: str
    account_id: str
    role_name: str
    session: str | None = None

    @property
    def cache_id(self) -> str:
        """What names the token's cache file: the session's name, else the start URL."""
        return self.session or self.start_url

    def login_hint(self) -> str:
        """The command that signs in again."""
        return f"run `aws sso login --profile {self.profile}`"


def token_cache_path(cache_id: str) -> Path:
    """Where ``aws sso login`` caches the token for a session name or start URL."""
    name = hashlib.sha1(cache_id.encode("utf-8"), usedforsecurity=False).hexdigest()
    return Path.home() / ".aws" / "sso" / "cache" / f"{name}.json"


def _endpoint(env: Mapping[str, str], variable: str, host: str, region: str) -> str:
    override = env.get(variable, "").strip()
    if override:
        return override.rstrip("/")
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return f"https://{host}.{region}{suffix}"


def _read_token(sso: SsoProfile) -> tuple[Path, dict[str, object]]:
    path = token_cache_path(sso.cache_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SsoError(
            f"AWS profile '{sso.profile}' uses AWS SSO, but there is no SSO sign-in cached for it "
            f"({path}): {sso.login_hint()}"
        ) from exc
    except (OSError, ValueError) as exc:
        raise SsoError(
            f"AWS profile '{sso.profile}': the cached SSO sign-in {path} cannot be read ({exc}): {sso.login_hint()}"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("accessToken"), str):
        raise SsoError(
            f"AWS profile '{sso.profile}': the cached SSO sign-in {path} has no accessToken: {sso.login_hint()}"
        )
    return path, data


def _refreshed(
    sso: SsoProfile, path: Path, data: dict[str, object], env: Mapping[str, str]
) -> dict[str, object] | None:
    """The token renewed with its refresh token, written back to the cache; None when it cannot be."""
    client_id, secret, refresh = data.get("clientId"), data.get("clientSecret"), data.get("refreshToken")
    if not (
        sso.session and isinstance(client_id, str) and isinstance(secret, str) and isinstance(refresh, str)
    ):
        return None
    with _refresh_lock:
        now = time.time()
        if now - _last_refresh.get(str(path), 0.0) < _REFRESH_SPACING:
            return None
        _last_refresh[str(path)] = now
    url = _endpoint(env, "AWS_ENDPOINT_URL_SSO_OIDC", "oidc", sso.region) + "/token"
    body = json.dumps(
        {"clientId": client_id, "clientSecret": secret, "grantType": "refresh_token", "refreshToken": refresh}
    ).encode("utf-8")
    try:
        answer = call("POST", url, headers={"content-type": "application/json"}, body=body, timeout=_TIMEOUT)
        fresh = json.loads(answer.body) if answer.status == 200 else None
    except (Unreachable, ValueError):
        return None
    if not isinstance(fresh, dict) or not isinstance(fresh.get("accessToken"), str):
        return None
    expires_in = fresh.get("expiresIn")
    if not isinstance(expires_in, int | float):
        return None
    updated = dict(data)
    updated["accessToken"] = fresh["accessToken"]
    updated["expiresAt"] = datetime.fromtimestamp(time.time() + expires_in, UTC).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z"
    )
    if isinstance(fresh.get("refreshToken"), str):
        updated["refreshToken"] = fresh["refreshToken"]
    try:
        path.write_text(json.dumps(updated, indent=2), encoding="utf-8")
    except OSError:
        pass  # the renewed token still serves this run; the next one refreshes again
    return updated


def _access_token(sso: SsoProfile, env: Mapping[str, str]) -> str:
    path, data = _read_token(sso)
    expires = parse_expiry(data.get("expiresAt"))
    if expires is None:
        raise SsoError(
            f"AWS profile '{sso.profile}': the cached SSO sign-in {path} has no valid expiresAt: {sso.login_hint()}"
        )
    if expires - time.time() <= REFRESH_WINDOW:
        renewed = _refreshed(sso, path, data, env)
        if renewed is not None:
            data = renewed
            expires = parse_expiry(renewed.get("expiresAt")) or expires
    if expires <= time.time():
        when = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise SsoError(
            f"The AWS SSO session of profile '{sso.profile}' expired at {when}: {sso.login_hint()}"
        )
    token = data.get("accessToken")
    assert isinstance(token, str)
    return token


def sso_credentials(sso: SsoProfile, env: Mapping[str, str]) -> Temporary:
    """Role credentials for the profile from the SSO portal.

    Raises:
        SsoError: no valid sign-in (the message says ``aws sso login --profile …``), or the portal
            refused the account/role (its message).
    """
    token = _access_token(sso, env)
    base = _endpoint(env, "AWS_ENDPOINT_URL_SSO", "portal.sso", sso.region)
    query = urlencode({"account_id": sso.account_id, "role_name": sso.role_name})
    try:
        answer = call(
            "GET",
            f"{base}/federation/credentials?{query}",
            headers={"x-amz-sso_bearer_token": token},
            timeout=_TIMEOUT,
        )
    except Unreachable as exc:
        raise SsoError(f"AWS SSO at {base} did not answer (profile '{sso.profile}'): {exc}") from exc
    try:
        data = json.loads(answer.body) if answer.body.strip() else {}
    except ValueError:
        data = {}
    if answer.status != 200:
        message = data.get("message") or data.get("Message") if isinstance(data, dict) else None
        kind = answer.headers.get("x-amzn-errortype", "").partition(":")[0]
        words = f"{kind}: {message}" if kind and message else (message or kind or answer.text()[:300].strip())
        if answer.status == 401:
            raise SsoError(
                f"AWS SSO no longer accepts the sign-in of profile '{sso.profile}' ({words}): {sso.login_hint()}"
            )
        raise SsoError(
            f"AWS SSO refused role '{sso.role_name}' in account {sso.account_id} for profile '{sso.profile}': "
            f"{words} (HTTP {answer.status})"
        )
    role = data.get("roleCredentials") if isinstance(data, dict) else None
    if not isinstance(role, dict):
        raise SsoError(f"AWS SSO answered without roleCredentials (profile '{sso.profile}')")
    key, secret, session = role.get("accessKeyId"), role.get("secretAccessKey"), role.get("sessionToken")
    expires = parse_expiry(role.get("expiration"))
    if not (isinstance(key, str) and isinstance(secret, str) and isinstance(session, str) and expires):
        raise SsoError(f"AWS SSO returned incomplete credentials (profile '{sso.profile}')")
    return Temporary(AwsCredentials(key, secret, session), expires)
