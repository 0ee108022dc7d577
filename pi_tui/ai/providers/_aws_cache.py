"""Temporary AWS credentials kept until shortly before they expire, as the AWS SDK keeps them.

The SDK treats credentials with less than five minutes left as expired and fetches new ones; when that
early refresh fails, the ones still valid are used until they do expire. Credentials without an
expiry (static keys a ``credential_process`` printed) are kept for the life of the process. One lock
serialises the fetches, so two requests starting together make one STS or SSO call, not two.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from ._sigv4 import AwsCredentials

__all__ = ["REFRESH_WINDOW", "Temporary", "cached", "clear", "parse_expiry"]

REFRESH_WINDOW = 300.0  # seconds before expiry at which the SDK fetches new credentials

_lock = threading.RLock()
_entries: dict[str, Temporary] = {}


@dataclass(frozen=True, slots=True)
class Temporary:
    """Credentials and when they expire (epoch seconds; None: they do not)."""

    credentials: AwsCredentials
    expires: float | None = None

    def fresh(self, now: float) -> bool:
        """Whether they are good for more than the refresh window."""
        return self.expires is None or self.expires - now > REFRESH_WINDOW


def cached(key: str, fetch: Callable[[], Temporary], *, stale_grace: float | None = None) -> Temporary:
    """The credentials kept under ``key``, fetched anew when they are within five minutes of expiry.

    A failed refresh falls back on the kept credentials while they are still valid. With
    ``stale_grace`` (the instance metadata service's "static stability") expired ones are kept too, for
    that many more seconds, rather than failing while the service is briefly away.
    """
    with _lock:
        now = time.time()
        entry = _entries.get(key)
        if entry is not None and entry.fresh(now):
            return entry
        try:
            new = fetch()
        except Exception:
            if entry is not None and entry.expires is not None and entry.expires > now:
                return entry
            if entry is not None and stale_grace is not None:
                kept = replace(entry, expires=now + stale_grace)
                _entries[key] = kept
                return kept
            raise
        if stale_grace is not None and new.expires is not None and new.expires <= now:
            new = replace(new, expires=now + stale_grace)
        _entries[key] = new
        return new


def clear() -> None:
    """Forget every kept credential (a test's fresh start)."""
    with _lock:
        _entries.clear()


def parse_expiry(value: object) -> float | None:
    """An expiry as AWS writes it: ISO 8601 text (``…Z``, ``…UTC`` or an offset, fractions allowed) or
    epoch milliseconds; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) / 1000.0
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("UTC"):
        text = text[:-3].rstrip() + "+00:00"
    elif text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
