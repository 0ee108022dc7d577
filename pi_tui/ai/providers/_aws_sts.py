"""AWS STS: ``AssumeRole`` (signed with the source credentials) and ``AssumeRoleWithWebIdentity``
(unsigned: the web identity token is the proof).

Both are the Query protocol: a form-encoded ``POST /`` with ``Action`` and ``Version=2011-06-15``,
answered in XML (``<Credentials>`` with ``AccessKeyId``, ``SecretAccessKey``, ``SessionToken`` and an
ISO ``Expiration``; errors as ``<Error><Code>…</Code><Message>…</Message></Error>``). The endpoint is
the regional one, ``https://sts.<region>.amazonaws.com`` (``.amazonaws.com.cn`` in China), as the AWS
SDK for JavaScript v3 chooses it; ``AWS_ENDPOINT_URL_STS`` replaces it (the SDKs' service-specific
endpoint variable), for a VPC endpoint or a test's server.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit
from xml.etree import ElementTree

from ._aws_cache import Temporary, parse_expiry
from ._aws_http import Answer, Unreachable, call
from ._sigv4 import AwsCredentials, sign_request

__all__ = [
    "RoleRequest",
    "StsError",
    "assume_role",
    "assume_role_with_web_identity",
    "default_session_name",
    "host_header",
    "sts_endpoint",
]

_VERSION = "2011-06-15"
_FORM = "application/x-www-form-urlencoded; charset=utf-8"
_TIMEOUT = 30.0


class StsError(Exception):
    """STS refused or could not be reached; the message is AWS's own words where it gave some."""


@dataclass(frozen=True, slots=True)
class RoleRequest:
    """What to ask STS for: the role, the session's name and the optional settings of the profile."""

    role_arn: str
    session_name: str
    duration_seconds: int = 3600
    external_id: str | None = None


def sts_endpoint(region: str, env: Mapping[str, str]) -> str:
    """The STS URL requests go to (``AWS_ENDPOINT_URL_STS`` when set)."""
    override = env.get("AWS_ENDPOINT_URL_STS", "").strip()
    if override:
        return override.rstrip("/")
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return f"https://sts.{region}{suffix}"


def default_session_name() -> str:
    """A session name like the SDK's (``aws-sdk-js-<ms>``), naming pi-tui in CloudTrail instead."""
    return f"pi-tui-{int(time.time() * 1000)}"


def assume_role(
    source: AwsCredentials, request: RoleRequest, region: str, env: Mapping[str, str]
) -> Temporary:
    """Call ``AssumeRole`` signed with ``source``.

    Raises:
        StsError: STS answered with an error (its code and message) or did not answer.
    """
    fields = {
        "Action": "AssumeRole",
        "Version": _VERSION,
        "RoleArn": request.role_arn,
        "RoleSessionName": request.session_name,
        "DurationSeconds": str(request.duration_seconds),
    }
    if request.external_id:
        fields["ExternalId"] = request.external_id
    endpoint = sts_endpoint(region, env)
    body = urlencode(fields).encode("ascii")
    parts = urlsplit(endpoint)
    path = parts.path or "/"
    headers = {"content-type": _FORM}
    headers.update(
        sign_request(
            method="POST",
            host=host_header(endpoint),
            path=path,
            headers=headers,
            body=body,
            credentials=source,
            region=region,
            service="sts",
        )
    )
    return _credentials(_post(endpoint, headers, body), "AssumeRole")


def assume_role_with_web_identity(
    token: str, request: RoleRequest, region: str, env: Mapping[str, str]
) -> Temporary:
    """Call ``AssumeRoleWithWebIdentity`` (unsigned) with the identity provider's ``token``.

    Raises:
        StsError: STS answered with an error (its code and message) or did not answer.
    """
    fields = {
        "Action": "AssumeRoleWithWebIdentity",
        "Version": _VERSION,
        "RoleArn": request.role_arn,
        "RoleSessionName": request.session_name,
        "WebIdentityToken": token,
    }
    body = urlencode(fields).encode("ascii")
    endpoint = sts_endpoint(region, env)
    return _credentials(_post(endpoint, {"content-type": _FORM}, body), "AssumeRoleWithWebIdentity")


def host_header(url: str) -> str:
    """The ``Host`` header http.client sends for ``url`` (the port only when it is not the default)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    default = 443 if parts.scheme == "https" else 80
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def _post(endpoint: str, headers: dict[str, str], body: bytes) -> Answer:
    try:
        url = endpoint if urlsplit(endpoint).path else endpoint + "/"
        return call("POST", url, headers=headers, body=body, timeout=_TIMEOUT)
    except Unreachable as exc:
        raise StsError(f"AWS STS at {endpoint} did not answer: {exc}") from exc


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _texts(root: ElementTree.Element) -> dict[str, str]:
    """Each element's text by its local name (the first of a name wins), namespaces dropped."""
    found: dict[str, str] = {}
    for element in root.iter():
        found.setdefault(_local(element.tag), (element.text or "").strip())
    return found


def _credentials(answer: Answer, action: str) -> Temporary:
    try:
        root = ElementTree.fromstring(answer.body) if answer.body.strip() else None
    except ElementTree.ParseError:
        root = None
    texts = _texts(root) if root is not None else {}
    if answer.status != 200:
        code, message = texts.get("Code", ""), texts.get("Message", "")
        words = f"{code}: {message}" if code and message else (code or message or answer.text()[:300].strip())
        raise StsError(f"{words} (HTTP {answer.status})")
    key, secret, token = texts.get("AccessKeyId"), texts.get("SecretAccessKey"), texts.get("SessionToken")
    if not key or not secret or not token:
        raise StsError(f"AWS STS answered {action} without credentials")
    return Temporary(AwsCredentials(key, secret, token), parse_expiry(texts.get("Expiration")))
