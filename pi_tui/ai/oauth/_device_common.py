"""Shared pieces of the RFC 8628 device-code logins (xAI, Kimi, Meta, GitHub Copilot)."""

from __future__ import annotations

import urllib.parse
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._http import HttpResult, test_mode
from .device import Poll
from .types import OAuthError

__all__ = ["min_poll_interval", "poll_outcome", "positive_seconds", "require_str", "trusted_url"]


def min_poll_interval() -> float:
    """The shortest wait between polls: 1 s as in pi; shorter against the loopback test server only."""
    return 0.01 if test_mode() else 1.0


def positive_seconds(value: object) -> float | None:
    """A provider's ``interval`` or ``expires_in``: the number it sent when that is above zero, else None
    (absent, not a number, zero or less)."""
    return float(value) if isinstance(value, int | float) and value > 0 else None


def require_str(body: JsonObject, name: str, who: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise OAuthError(f"{who} sent an unexpected answer (no {name})")
    return value


def trusted_url(value: object, who: str, *, https_only: bool = True) -> str:
    """A verification URL the user will open: only https (or http where the provider allows it)."""
    if isinstance(value, str):
        parts = urllib.parse.urlsplit(value)
        if parts.netloc and (parts.scheme == "https" or (not https_only and parts.scheme == "http")):
            return value
    raise OAuthError(f"{who} sent an untrusted verification URL")


def poll_outcome(result: HttpResult, who: str, *, denied: str, expired: str) -> Poll[Any] | None:
    """The RFC 8628 error answers of a token poll as a `Poll`; None when the poll did not fail that way."""
    error = result.body.get("error")
    if error == "authorization_pending":
        return Poll("pending")
    if error == "slow_down":
        interval = result.body.get("interval")
        return Poll("slow_down", interval=float(interval) if isinstance(interval, int | float) else None)
    if error in ("access_denied", "authorization_denied"):
        return Poll("failed", message=denied)
    if error == "expired_token":
        return Poll("failed", message=expired)
    return None
