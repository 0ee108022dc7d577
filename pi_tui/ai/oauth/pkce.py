"""PKCE (RFC 7636): a random verifier and its S256 challenge, as pi makes them."""

from __future__ import annotations

import base64
import hashlib
import secrets

__all__ = ["generate_pkce"]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def generate_pkce() -> tuple[str, str]:
    """``(verifier, challenge)``: 32 random bytes base64url-encoded, and its SHA-256, base64url-encoded."""
    verifier = _b64url(secrets.token_bytes(32))
    challenge = _b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return verifier, challenge
