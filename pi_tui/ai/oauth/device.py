"""Polling a device-code login (RFC 8628) until the user approves it, as pi does.

The poll interval is the server's (default 5 s, at least 1 s); ``slow_down`` makes it the server's new
interval or 5 s longer; the code's ``expires_in`` bounds the whole wait. Cancelling stops the wait at
once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from .types import LoginCancelled, OAuthError

__all__ = ["Poll", "poll_device_flow"]

T = TypeVar("T")

_DEFAULT_INTERVAL_S = 5.0
_MIN_INTERVAL_S = 1.0
_SLOW_DOWN_STEP_S = 5.0


@dataclass(frozen=True)
class Poll(Generic[T]):
    """One poll's outcome: ``pending``, ``slow_down`` (optionally with the server's new interval),
    ``complete`` with ``value``, or ``failed`` with ``message``."""

    status: Literal["pending", "slow_down", "complete", "failed"]
    value: T | None = None
    message: str = ""
    interval: float | None = None


def poll_device_flow(
    poll: Callable[[], Poll[T]],
    *,
    interval: float | None,
    expires_in: float | None,
    cancel: threading.Event,
    wait_first: bool = True,
    min_interval: float = _MIN_INTERVAL_S,
) -> T:
    """Call ``poll`` until it completes.

    Args:
        poll: One token request.
        interval: The server's interval in seconds (None: 5 s).
        expires_in: Seconds the device code lives (None: no limit).
        cancel: Set to give up.
        wait_first: Wait one interval before the first poll (the user cannot have approved yet).
        min_interval: The shortest wait (tests of a fake server lower it).

    Raises:
        LoginCancelled: ``cancel`` was set.
        OAuthError: the server refused, or the code expired before approval.
    """
    deadline = time.monotonic() + expires_in if expires_in else float("inf")
    step = max(min_interval, interval if interval and interval > 0 else _DEFAULT_INTERVAL_S)
    slowed = False

    def wait(seconds: float) -> None:
        if cancel.wait(max(0.0, min(seconds, deadline - time.monotonic()))):
            raise LoginCancelled()

    if wait_first:
        wait(step)
    while time.monotonic() < deadline:
        if cancel.is_set():
            raise LoginCancelled()
        result = poll()
        if result.status == "complete" and result.value is not None:
            return result.value
        if result.status == "failed":
            raise OAuthError(result.message)
        if result.status == "slow_down":
            slowed = True
            step = (
                max(min_interval, result.interval)
                if result.interval and result.interval > 0
                else max(min_interval, step + _SLOW_DOWN_STEP_S)
            )
        wait(step)
    if slowed:
        raise OAuthError(
            "Device login timed out after the server asked to slow down; this often comes from a drifting "
            "clock (WSL or a VM): sync the clock and try again"
        )
    raise OAuthError("Device login timed out: the code was not approved in time; run the login again")
