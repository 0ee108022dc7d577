"""AWS Signature Version 4 for one request (what the AWS SDKs put in ``Authorization``).

The canonical request is ``METHOD``, the canonical path (each byte outside ``A-Za-z0-9-_.~/`` percent-
encoded once more, as every service but S3 wants: a model id sent as ``…v1%3A0`` is signed as
``…v1%253A0``), the sorted query, the signed headers (lower-case names, values trimmed with inner runs
of spaces collapsed), their names joined by ``;`` and the hex SHA-256 of the body. The string to sign
names the algorithm, the time, the scope ``<date>/<region>/<service>/aws4_request`` and the hash of the
canonical request; the key is derived from the secret by HMAC over date, region, service and
``aws4_request``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qsl, quote

__all__ = ["AwsCredentials", "canonical_request", "sign_request", "signature_for"]

ALGORITHM = "AWS4-HMAC-SHA256"
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An access key pair, with the session token of temporary credentials."""

    access_key_id: str
    secret_access_key: str
    session_token: str | None = None


def _canonical_path(path: str) -> str:
    return quote(path or "/", safe="/~")


def _canonical_query(query: str) -> str:
    pairs = sorted(
        (quote(name, safe="-_.~"), quote(value, safe="-_.~"))
        for name, value in parse_qsl(query, keep_blank_values=True)
    )
    return "&".join(f"{name}={value}" for name, value in pairs)


def canonical_request(
    method: str, path: str, query: str, headers: dict[str, str], signed: list[str], body: bytes
) -> str:
    """The canonical request text; ``headers`` keyed by lower-case name, ``signed`` sorted names."""
    lines = [f"{name}:{_SPACES.sub(' ', headers[name].strip())}\n" for name in signed]
    return "\n".join(
        [
            method.upper(),
            _canonical_path(path),
            _canonical_query(query),
            "".join(lines),
            ";".join(signed),
            hashlib.sha256(body).hexdigest(),
        ]
    )


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def signature_for(secret: str, amz_date: str, region: str, service: str, request_text: str) -> str:
    """The hex signature of a canonical request made at ``amz_date`` (``YYYYMMDDTHHMMSSZ``)."""
    day = amz_date[:8]
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        [ALGORITHM, amz_date, scope, hashlib.sha256(request_text.encode("utf-8")).hexdigest()]
    )
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret}".encode(), day), region), service), "aws4_request")
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def sign_request(
    *,
    method: str,
    host: str,
    path: str,
    query: str = "",
    headers: dict[str, str],
    body: bytes,
    credentials: AwsCredentials,
    region: str,
    service: str,
    now: datetime | None = None,
) -> dict[str, str]:
    """The headers that authenticate the request: ``x-amz-date``, ``x-amz-security-token`` (temporary
    credentials) and ``authorization``.

    ``host`` is the ``Host`` header as sent (``name[:port]``); every header in ``headers`` is signed too.
    """
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    amz_date = moment.strftime("%Y%m%dT%H%M%SZ")
    added = {"x-amz-date": amz_date}
    if credentials.session_token:
        added["x-amz-security-token"] = credentials.session_token
    all_headers = {name.lower(): value for name, value in headers.items()}
    all_headers.update(added)
    all_headers["host"] = host
    signed = sorted(all_headers)
    text = canonical_request(method, path, query, all_headers, signed, body)
    signature = signature_for(credentials.secret_access_key, amz_date, region, service, text)
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    added["authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={';'.join(signed)}, Signature={signature}"
    )
    return added
