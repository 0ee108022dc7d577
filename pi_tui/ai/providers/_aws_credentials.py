"""Where a Bedrock request's credentials, region and endpoint come from, as pi 0.87.1 resolves them.

Authentication, first match wins:

1. a bearer token: the key pi-tui resolved for the provider (``--api-key``, a stored key, or
   ``AWS_BEARER_TOKEN_BEDROCK``), sent as ``Authorization: Bearer``;
2. ``AWS_BEDROCK_SKIP_AUTH=1``: dummy keys (for proxies that do not check signatures);
3. ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``);
4. the profile ``AWS_PROFILE`` (else ``default``; a profile chosen at ``/login``, stored in auth.json,
   comes before 3) of ``~/.aws/credentials`` and ``~/.aws/config``
   (``AWS_SHARED_CREDENTIALS_FILE`` / ``AWS_CONFIG_FILE`` move them): static keys and a session token;
5. container credentials (``AWS_CONTAINER_CREDENTIALS_FULL_URI``, or ``…_RELATIVE_URI`` under
   ``169.254.170.2``, with ``AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]``), kept until shortly before
   they expire.

Not supported (each named in the error a user gets): profiles that assume a role (``role_arn`` with
``source_profile`` or ``credential_source``), SSO profiles, ``credential_process``, web identity
(``AWS_WEB_IDENTITY_TOKEN_FILE``) and the EC2 instance metadata service. Use ``aws configure export-
credentials --format env`` to turn any of them into the environment variables of 3.
"""

from __future__ import annotations

import asyncio
import configparser
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ._sigv4 import AwsCredentials

__all__ = [
    "AMBIENT",
    "AwsSetupError",
    "BedrockAuth",
    "endpoint_for",
    "resolve_auth",
    "resolve_region",
]

AMBIENT = "<authenticated>"  # the registry's placeholder: "the provider finds its own credentials"
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_STANDARD_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_CONTAINER_HOST = "http://169.254.170.2"
_EXPORT_HINT = "aws configure export-credentials --format env"


class AwsSetupError(Exception):
    """Bedrock cannot be reached with what is configured; the message says what to set."""


@dataclass(frozen=True, slots=True)
class BedrockAuth:
    """How to authenticate: a bearer token, or keys to sign with (exactly one is set)."""

    bearer: str | None = None
    credentials: AwsCredentials | None = None
    source: str = ""


Env = Mapping[str, str]


def environment(stored: Env | None = None) -> dict[str, str]:
    """The variables a request sees: the process environment, overridden by the ones stored with the
    provider's login in auth.json (pi's scoped ``env``, e.g. the ``AWS_PROFILE`` chosen at ``/login``)."""
    return {**os.environ, **(stored or {})}


def _env(env: Env, name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _profile_name(env: Env) -> str:
    return _env(env, "AWS_PROFILE") or "default"


def _read_ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise AwsSetupError(f"Cannot read the AWS file {path}: {exc}") from exc
    return parser


def _credentials_file(env: Env) -> Path:
    return Path(_env(env, "AWS_SHARED_CREDENTIALS_FILE") or Path.home() / ".aws" / "credentials").expanduser()


def _config_file(env: Env) -> Path:
    return Path(_env(env, "AWS_CONFIG_FILE") or Path.home() / ".aws" / "config").expanduser()


def _profile_sections(env: Env, name: str) -> list[dict[str, str]]:
    """The profile's settings: the credentials file's ``[name]``, then the config file's
    ``[profile name]`` (``[default]`` there for the default profile)."""
    sections = []
    credentials = _read_ini(_credentials_file(env))
    if credentials.has_section(name):
        sections.append(dict(credentials.items(name)))
    config = _read_ini(_config_file(env))
    for section in (f"profile {name}", name) if name == "default" else (f"profile {name}",):
        if config.has_section(section):
            sections.append(dict(config.items(section)))
            break
    return sections


def profile_region(env: Env) -> str | None:
    """The ``region`` of the active profile in ``~/.aws/config``, if any."""
    try:
        for section in _profile_sections(env, _profile_name(env)):
            if section.get("region", "").strip():
                return section["region"].strip()
    except AwsSetupError:
        return None
    return None


def _profile_credentials(env: Env) -> AwsCredentials | None:
    name = _profile_name(env)
    sections = _profile_sections(env, name)
    if not sections:
        if _env(env, "AWS_PROFILE"):
            raise AwsSetupError(
                f"AWS profile '{name}' is not in {_credentials_file(env)} or {_config_file(env)}: "
                "check AWS_PROFILE or the files"
            )
        return None
    merged: dict[str, str] = {}
    for section in reversed(sections):  # the credentials file wins over the config file
        merged.update(section)
    key, secret = merged.get("aws_access_key_id", "").strip(), merged.get("aws_secret_access_key", "").strip()
    if key and secret:
        token = merged.get("aws_session_token", "").strip() or None
        return AwsCredentials(key, secret, token)
    for setting, what in (
        ("role_arn", "assumes a role"),
        ("sso_session", "uses AWS SSO"),
        ("sso_start_url", "uses AWS SSO"),
        ("credential_process", "runs a credential_process"),
        ("web_identity_token_file", "uses a web identity"),
    ):
        if merged.get(setting):
            raise AwsSetupError(
                f"AWS profile '{name}' {what}, which pi-tui does not support yet: run `{_EXPORT_HINT}` "
                f"and use the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN it prints"
            )
    if _env(env, "AWS_PROFILE"):
        raise AwsSetupError(
            f"AWS profile '{name}' has no aws_access_key_id/aws_secret_access_key: check {_credentials_file(env)}"
        )
    return None


@dataclass
class _Cached:
    credentials: AwsCredentials
    expires: float


_container_cache: dict[str, _Cached] = {}


def _container_uri(env: Env) -> str | None:
    full = _env(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI")
    if full:
        return full
    relative = _env(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
    return f"{_CONTAINER_HOST}{relative}" if relative else None


def _fetch_container(env: Env, uri: str) -> tuple[AwsCredentials, float]:
    import urllib.error
    import urllib.request
    from datetime import datetime

    request = urllib.request.Request(uri, headers={"Accept": "application/json"})
    token = _env(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN")
    token_file = _env(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise AwsSetupError(
                f"Cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {token_file}: {exc}"
            ) from exc
    if token:
        request.add_header("Authorization", token)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 (the configured URI)
            data = json.loads(response.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise AwsSetupError(f"Cannot get container credentials from {uri}: {exc}") from exc
    try:
        credentials = AwsCredentials(data["AccessKeyId"], data["SecretAccessKey"], data.get("Token") or None)
    except (KeyError, TypeError) as exc:
        raise AwsSetupError(f"The container credentials from {uri} lack AccessKeyId/SecretAccessKey") from exc
    expires = time.time() + 3600
    expiration = data.get("Expiration")
    if isinstance(expiration, str):
        try:
            expires = datetime.fromisoformat(expiration.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return credentials, expires


async def _container_credentials(env: Env) -> AwsCredentials | None:
    uri = _container_uri(env)
    if uri is None:
        return None
    cached = _container_cache.get(uri)
    if cached is not None and cached.expires - time.time() > 300:
        return cached.credentials
    credentials, expires = await asyncio.to_thread(_fetch_container, env, uri)
    _container_cache[uri] = _Cached(credentials, expires)
    return credentials


async def resolve_auth(
    api_key: str | None, env: Env | None = None, *, stored_profile: bool = False
) -> BedrockAuth:
    """The credentials for one request (see the module docstring for the order).

    Raises:
        AwsSetupError: nothing usable is configured, or the configured source is not supported.
    """
    env = env if env is not None else os.environ
    bearer = api_key if api_key and api_key != AMBIENT else _env(env, "AWS_BEARER_TOKEN_BEDROCK")
    skip = _env(env, "AWS_BEDROCK_SKIP_AUTH") == "1"
    if bearer and not skip:
        return BedrockAuth(bearer=bearer, source="bearer token")
    if skip:
        return BedrockAuth(credentials=AwsCredentials("dummy-access-key", "dummy-secret-key"), source="none")
    key, secret = _env(env, "AWS_ACCESS_KEY_ID"), _env(env, "AWS_SECRET_ACCESS_KEY")
    # A profile chosen through pi's login wins over ambient keys, as in pi.
    if key and secret and not stored_profile:
        return BedrockAuth(
            credentials=AwsCredentials(key, secret, _env(env, "AWS_SESSION_TOKEN")), source="environment keys"
        )
    profile = _profile_credentials(env)
    if profile is not None:
        return BedrockAuth(credentials=profile, source=f"AWS profile '{_profile_name(env)}'")
    if _env(env, "AWS_WEB_IDENTITY_TOKEN_FILE") and _container_uri(env) is None:
        raise AwsSetupError(
            "AWS web identity credentials (AWS_WEB_IDENTITY_TOKEN_FILE) are not supported by pi-tui yet: "
            f"run `{_EXPORT_HINT}` and use the keys it prints"
        )
    container = await _container_credentials(env)
    if container is not None:
        return BedrockAuth(credentials=container, source="container credentials")
    raise AwsSetupError(
        "No AWS credentials for Amazon Bedrock: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a profile in ~/.aws/credentials)"
    )


def _standard_region(base_url: str | None) -> str | None:
    if not base_url:
        return None
    host = (urlsplit(base_url).hostname or "").lower()
    match = _STANDARD_HOST.match(host)
    return match.group(1) if match else None


def _configured_region(env: Env) -> str | None:
    return _env(env, "AWS_REGION") or _env(env, "AWS_DEFAULT_REGION")


def _explicit_endpoint(env: Env, base_url: str | None) -> bool:
    """pi pins the catalog's base URL when it is not a standard Bedrock host, or when neither a region
    nor an ``AWS_PROFILE`` is configured."""
    if _standard_region(base_url) is None:
        return True
    return _configured_region(env) is None and _env(env, "AWS_PROFILE") is None


def resolve_region(model_id: str, base_url: str | None, env: Env | None = None) -> str:
    """The signing region: an ARN's region, ``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile's
    ``region``, a pinned standard endpoint's region, else ``us-east-1``."""
    env = env if env is not None else os.environ
    match = _ARN_REGION.match(model_id)
    if match:
        return match.group(1)
    configured = _configured_region(env)
    if configured:
        return configured
    if _env(env, "AWS_PROFILE"):
        region = profile_region(env)
        if region:
            return region
    endpoint_region = _standard_region(base_url)
    if endpoint_region and _explicit_endpoint(env, base_url):
        return endpoint_region
    return profile_region(env) or "us-east-1"


def endpoint_for(base_url: str | None, region: str, env: Env | None = None) -> str:
    """The URL requests go to: the model's base URL when pi would pin it, else the region's endpoint."""
    env = env if env is not None else os.environ
    if base_url and _explicit_endpoint(env, base_url):
        return base_url.rstrip("/")
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return f"https://bedrock-runtime.{region}{suffix}"
