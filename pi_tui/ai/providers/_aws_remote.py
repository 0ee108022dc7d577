"""Credentials from a metadata service: a container's credential agent, or the EC2 instance metadata
service (IMDS), with the AWS SDK's rules.

Container: ``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`` under ``http://169.254.170.2``, else
``AWS_CONTAINER_CREDENTIALS_FULL_URI``, with ``AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]`` as
``Authorization``. As in the SDK, a full URI must be https or name a loopback address (127.0.0.0/8,
``localhost``, ``[::1]``) or the ECS (169.254.170.2) or EKS (169.254.170.23, ``[fd00:ec2::23]``) agent:
the credentials and the token are sent nowhere else.

IMDS (version 2 first): ``PUT /latest/api/token`` (``x-aws-ec2-metadata-token-ttl-seconds: 21600``),
then ``GET /latest/meta-data/iam/security-credentials/`` for the instance's role name and
``GET …/<role>`` for the keys, each with the token in ``x-aws-ec2-metadata-token``. Every call waits at
most one second and is not retried (the SDK's defaults), so a laptop without IMDS gives up within two
seconds (``AWS_METADATA_SERVICE_TIMEOUT``, the AWS CLI's setting, changes the wait). When the token call fails other than with HTTP 400, the calls go without a token (IMDSv1)
unless ``AWS_EC2_METADATA_V1_DISABLED`` (or ``ec2_metadata_v1_disabled`` in the profile) forbids it.
The address is ``AWS_EC2_METADATA_SERVICE_ENDPOINT`` (or the profile's
``ec2_metadata_service_endpoint``), else ``http://169.254.169.254`` (``http://[fd00:ec2::254]`` with
``AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6``). ``AWS_EC2_METADATA_DISABLED`` (any value but
``false``) turns it off. Credentials are kept until five minutes before they expire; when the service
is briefly away, or hands back expired keys, the old ones are used for five to ten more minutes (the
SDK's "static stability").
"""

from __future__ import annotations

import ipaddress
import json
import random
from collections.abc import Mapping
from pathlib import Path

from ._aws_cache import Temporary, cached, parse_expiry
from ._aws_http import Unreachable, call
from ._sigv4 import AwsCredentials

__all__ = [
    "ImdsUnavailable",
    "check_container_uri",
    "RemoteError",
    "container_credentials",
    "container_uri",
    "imds_credentials",
    "imds_disabled",
    "imds_endpoint",
]

_CONTAINER_HOST = "http://169.254.170.2"
_CONTAINER_TIMEOUT = 5.0
_IMDS_TIMEOUT = 1.0
_IMDS_TOKEN_TTL = "21600"
_CREDENTIALS_PATH = "/latest/meta-data/iam/security-credentials/"


class RemoteError(Exception):
    """A metadata service answered, but not with usable credentials; the message says what it did."""


class ImdsUnavailable(Exception):
    """No instance metadata service answered (not on EC2, or it is disabled)."""


def _flag(value: str | None) -> bool:
    return value is not None and bool(value.strip()) and value.strip().lower() != "false"


def container_uri(env: Mapping[str, str]) -> str | None:
    """The container credential agent's URL, when the environment names one (the relative URI wins over
    the full one, as in the SDK)."""
    relative = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "").strip()
    if relative:
        return f"{_CONTAINER_HOST}{relative}"
    full = env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI", "").strip()
    return full or None


# the container agents' own addresses, which the SDK accepts over plain http
_AGENT_HOSTS = {
    ipaddress.ip_address("169.254.170.2"),  # ECS
    ipaddress.ip_address("169.254.170.23"),  # EKS Pod Identity
    ipaddress.ip_address("fd00:ec2::23"),
}


def check_container_uri(uri: str) -> None:
    """Refuse a container credentials URL the AWS SDK refuses: plain http to anything but a loopback
    address (127.0.0.0/8, ``localhost``, ``::1``) or the ECS / EKS agent.

    Raises:
        RemoteError: the URL is refused (what it must be instead is in the message).
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is not None and parts.scheme.lower() == "https" and host:
        return
    if parts is not None and parts.scheme.lower() == "http" and host:
        if host == "localhost":
            return
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            address = None
        # is_loopback: 127.0.0.0/8, and ::1 alone for IPv6 (not ::ffff:127.0.0.1, which the SDK refuses)
        if address is not None and (address.is_loopback or address in _AGENT_HOSTS):
            return
    raise RemoteError(
        f"AWS_CONTAINER_CREDENTIALS_FULL_URI {uri} is not accepted (as in the AWS SDK): it must be an https "
        "URL, or an http one to a loopback address (127.0.0.0/8, localhost or [::1]), the ECS container "
        "host 169.254.170.2 or the EKS container host 169.254.170.23 or [fd00:ec2::23]"
    )


def _fetch_container(env: Mapping[str, str], uri: str) -> Temporary:
    headers = {"Accept": "application/json"}
    token = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN", "").strip()
    token_file = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "").strip()
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise RemoteError(
                f"Cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {token_file}: {exc}"
            ) from exc
    if token:
        headers["Authorization"] = token
    try:
        answer = call("GET", uri, headers=headers, timeout=_CONTAINER_TIMEOUT, direct=True)
    except Unreachable as exc:
        raise RemoteError(f"Cannot get container credentials from {uri}: {exc}") from exc
    if answer.status != 200:
        raise RemoteError(
            f"Cannot get container credentials from {uri}: HTTP {answer.status} {answer.text()[:200]}"
        )
    return _parse(answer.body, f"The container credentials from {uri}", token_field="Token")


def _parse(body: bytes, what: str, *, token_field: str) -> Temporary:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise RemoteError(f"{what} are not JSON") from exc
    if not isinstance(data, dict):
        raise RemoteError(f"{what} are not a JSON object")
    key, secret, token = data.get("AccessKeyId"), data.get("SecretAccessKey"), data.get(token_field)
    if not isinstance(key, str) or not isinstance(secret, str) or not key or not secret:
        raise RemoteError(f"{what} lack AccessKeyId/SecretAccessKey")
    expires = parse_expiry(data.get("Expiration"))
    return Temporary(
        AwsCredentials(key, secret, token if isinstance(token, str) and token else None), expires
    )


def container_credentials(env: Mapping[str, str]) -> Temporary | None:
    """The container's credentials (kept until shortly before they expire), or None without a URI.

    Raises:
        RemoteError: the agent did not answer with credentials.
    """
    uri = container_uri(env)
    if uri is None:
        return None
    if not env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "").strip():
        check_container_uri(uri)  # the credentials go only where the SDK sends them
    return cached(f"container|{uri}", lambda: _fetch_container(env, uri))


def imds_disabled(env: Mapping[str, str]) -> bool:
    """Whether ``AWS_EC2_METADATA_DISABLED`` turns the instance metadata service off."""
    return _flag(env.get("AWS_EC2_METADATA_DISABLED"))


def imds_endpoint(env: Mapping[str, str], profile: Mapping[str, str]) -> str:
    """The instance metadata service's base URL."""
    configured = (
        env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT", "").strip()
        or profile.get("ec2_metadata_service_endpoint", "").strip()
    )
    if configured:
        return configured.rstrip("/")
    mode = (
        env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "").strip()
        or profile.get("ec2_metadata_service_endpoint_mode", "").strip()
        or "IPv4"
    )
    if mode == "IPv6":
        return "http://[fd00:ec2::254]"
    if mode != "IPv4":
        raise RemoteError(f"Unsupported AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE {mode!r}: use IPv4 or IPv6")
    return "http://169.254.169.254"


def imds_timeout(env: Mapping[str, str], profile: Mapping[str, str]) -> float:
    """Seconds each IMDS call may wait: ``AWS_METADATA_SERVICE_TIMEOUT`` (or the profile's
    ``metadata_service_timeout``, as the AWS CLI reads them), else the SDK's one second."""
    text = (
        env.get("AWS_METADATA_SERVICE_TIMEOUT", "").strip()
        or profile.get("metadata_service_timeout", "").strip()
    )
    try:
        value = float(text) if text else _IMDS_TIMEOUT
    except ValueError as exc:
        raise RemoteError(f"AWS_METADATA_SERVICE_TIMEOUT must be a number of seconds, not {text!r}") from exc
    return value if value > 0 else _IMDS_TIMEOUT


def _fetch_imds(env: Mapping[str, str], profile: Mapping[str, str], base: str) -> Temporary:
    headers: dict[str, str] = {}
    timeout = imds_timeout(env, profile)
    try:
        answer = call(
            "PUT",
            base + "/latest/api/token",
            headers={"x-aws-ec2-metadata-token-ttl-seconds": _IMDS_TOKEN_TTL},
            timeout=timeout,
            direct=True,
        )
    except Unreachable:
        answer = None
    if answer is not None and answer.status == 200:
        headers["x-aws-ec2-metadata-token"] = answer.text().strip()
    elif answer is not None and answer.status == 400:
        raise RemoteError(f"The EC2 instance metadata service at {base} refused the token request (HTTP 400)")
    elif _flag(env.get("AWS_EC2_METADATA_V1_DISABLED")) or _flag(profile.get("ec2_metadata_v1_disabled")):
        if answer is None:
            raise ImdsUnavailable(f"no EC2 instance metadata service answered at {base}")
        raise RemoteError(
            f"The EC2 instance metadata service at {base} gave no IMDSv2 token (HTTP {answer.status}) and the "
            "IMDSv1 fallback is disabled (AWS_EC2_METADATA_V1_DISABLED / ec2_metadata_v1_disabled)"
        )
    try:
        listing = call("GET", base + _CREDENTIALS_PATH, headers=headers, timeout=timeout, direct=True)
    except Unreachable as exc:
        raise ImdsUnavailable(f"no EC2 instance metadata service answered at {base}") from exc
    if listing.status == 404:
        raise RemoteError(f"The EC2 instance at {base} has no IAM role (instance profile) attached")
    if listing.status != 200:
        raise RemoteError(f"The EC2 instance metadata service at {base} answered HTTP {listing.status}")
    role = listing.text().strip().splitlines()[0].strip() if listing.text().strip() else ""
    if not role:
        raise RemoteError(f"The EC2 instance at {base} has no IAM role (instance profile) attached")
    try:
        answer = call("GET", base + _CREDENTIALS_PATH + role, headers=headers, timeout=timeout, direct=True)
    except Unreachable as exc:
        raise ImdsUnavailable(f"the EC2 instance metadata service at {base} stopped answering") from exc
    if answer.status != 200:
        raise RemoteError(
            f"The EC2 instance metadata service at {base} answered HTTP {answer.status} for role {role}"
        )
    return _parse(answer.body, f"The EC2 instance credentials of role {role}", token_field="Token")


def imds_credentials(env: Mapping[str, str], profile: Mapping[str, str]) -> Temporary:
    """The instance role's credentials from IMDS.

    Raises:
        ImdsUnavailable: disabled, or nothing answered (not on EC2).
        RemoteError: the service answered without usable credentials.
    """
    if imds_disabled(env):
        raise ImdsUnavailable("the EC2 instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)")
    base = imds_endpoint(env, profile)
    grace = 300.0 + random.uniform(0.0, 300.0)  # noqa: S311 (jitter, not a secret)
    return cached(f"imds|{base}", lambda: _fetch_imds(env, profile, base), stale_grace=grace)
