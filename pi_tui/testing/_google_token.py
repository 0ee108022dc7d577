"""A fake Google OAuth 2 token endpoint (``POST /token``) for application-default credentials.

It answers the two grants ADC files lead to, as ``oauth2.googleapis.com/token`` does:

- ``urn:ietf:params:oauth:grant-type:jwt-bearer`` (a service account's signed JWT ``assertion``): the JWT
  must be three base64url parts with an RS256 header and ``iss``, ``scope``, ``aud``, ``iat``, ``exp``
  claims at most an hour apart. The signature is not checked here (the fake has no key): tests verify
  the recorded assertion with the public key;
- ``refresh_token`` (an ``authorized_user`` file): ``client_id``, ``client_secret`` and
  ``refresh_token`` are required; a refresh token starting with ``revoked`` is refused with
  ``invalid_grant`` as a revoked one is.

Access tokens are ``ya29.fake-<n>``; the engine accepts them as bearer credentials afterwards.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qsl

from ._plan import Plan, json_plan

__all__ = ["JWT_BEARER", "decode_jwt_part", "parse_form", "token_plan"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def parse_form(raw: bytes) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (a JSON object body is accepted too)."""
    text = raw.decode("utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
    return dict(parse_qsl(text, keep_blank_values=True))


def decode_jwt_part(part: str) -> Any:
    """One base64url JSON part of a JWT (header or claims)."""
    padded = part + "=" * (-len(part) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode()))


def _error(code: str, description: str, seq: int, status: int = 400) -> Plan:
    return json_plan(status, {"error": code, "error_description": description}, seq=seq)


def token_plan(form: dict[str, str], seq: int, token: str, lifetime: int) -> tuple[Plan, bool]:
    """The answer to a token request, and whether it issued ``token``."""
    grant = form.get("grant_type", "")
    if grant == JWT_BEARER:
        problem = _jwt_problem(form.get("assertion", ""))
        if problem is not None:
            return _error("invalid_grant", problem, seq), False
    elif grant == "refresh_token":
        missing = [name for name in ("client_id", "client_secret", "refresh_token") if not form.get(name)]
        if missing:
            return _error("invalid_request", f"Missing required parameter: {missing[0]}", seq), False
        if form["refresh_token"].startswith("revoked"):
            return _error("invalid_grant", "Token has been expired or revoked.", seq), False
    else:
        return _error("unsupported_grant_type", f"Invalid grant_type: {grant}", seq), False
    payload = {"access_token": token, "expires_in": lifetime, "token_type": "Bearer"}
    if grant == "refresh_token":
        payload["scope"] = "https://www.googleapis.com/auth/cloud-platform"
    return json_plan(200, payload, seq=seq), True


def _jwt_problem(assertion: str) -> str | None:
    parts = assertion.split(".")
    if len(parts) != 3 or not all(parts):
        return "Invalid JWT: the assertion is not a signed JWT (header.claims.signature)."
    try:
        header = decode_jwt_part(parts[0])
        claims = decode_jwt_part(parts[1])
    except ValueError:
        return "Invalid JWT: the header or claims are not base64url JSON."
    if not isinstance(header, dict) or header.get("alg") != "RS256":
        return "Invalid JWT Signature."
    if not isinstance(claims, dict):
        return "Invalid JWT: the claims are not an object."
    for name in ("iss", "scope", "aud", "iat", "exp"):
        if name not in claims:
            return f"Invalid JWT: the claim '{name}' is missing."
    if not isinstance(claims["iat"], int) or not isinstance(claims["exp"], int):
        return "Invalid JWT: iat and exp must be integers."
    if not 0 < claims["exp"] - claims["iat"] <= 3600:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
    return None
