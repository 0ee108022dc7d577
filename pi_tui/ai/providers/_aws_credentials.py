"""Where a Bedrock request's credentials, region and endpoint come from, as pi 0.87.1 resolves them.

Authentication, first match wins:

1. a bearer token: the key pi-tui resolved for the provider (``--api-key``, a stored key, or
   ``AWS_BEARER_TOKEN_BEDROCK``), sent as ``Authorization: Bearer``;
2. ``AWS_BEDROCK_SKIP_AUTH=1``: dummy keys (for proxies that do not check signatures);
3. ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``); a profile chosen at
   ``/login`` (stored in auth.json) comes before these, as in pi;
4. the rest of the AWS SDK's default chain (`_aws_chain`): the profile ``AWS_PROFILE`` (else
   ``default``) of ``~/.aws/credentials`` / ``~/.aws/config`` with static keys, an assumed role, web
   identity, ``credential_process`` or SSO; web identity from the environment; container credentials;
   the EC2 instance metadata service.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ._aws_files import AwsFiles, AwsSetupError
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


def profile_region(env: Env) -> str | None:
    """The ``region`` of the active profile in ``~/.aws/config``, if any."""
    try:
        profile = AwsFiles(env).profile(_profile_name(env))
    except AwsSetupError:
        return None
    return (profile or {}).get("region") or None


async def resolve_auth(
    api_key: str | None, env: Env | None = None, *, stored_profile: bool = False, region: str | None = None
) -> BedrockAuth:
    """The credentials for one request (see the module docstring for the order). ``region`` is the
    Bedrock region, where STS is asked when a role's profile names no region of its own.

    Raises:
        AwsSetupError: nothing usable is configured, or a configured source failed (the message says
            what to run or fix).
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
    from ._aws_chain import resolve_chain

    credentials, source = await asyncio.to_thread(
        resolve_chain, env, region or resolve_region("", None, env), named=bool(_env(env, "AWS_PROFILE"))
    )
    return BedrockAuth(credentials=credentials, source=source)


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
