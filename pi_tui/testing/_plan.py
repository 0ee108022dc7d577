"""A response plan: what the HTTP adapter must send, decided by the engine without doing any I/O."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_tui.util.json_types import JsonObject

__all__ = ["Plan", "json_plan", "sse_data", "sse_event"]

End = Literal["done", "truncate", "drop", "stall"]


@dataclass
class Plan:
    """What to send for one request.

    Attributes:
        status: HTTP status.
        headers: extra response headers.
        body: a complete JSON body (``None`` for streams and for dropped connections).
        frames: SSE frames, already encoded; ``None`` for non-stream answers.
        first_byte_delay: seconds before anything is sent.
        frame_delay: seconds before each frame after the first.
        end: how the response finishes: ``done`` (normally), ``truncate`` (a clean end without the
            body's natural end: a short JSON body, or the SSE stream closed early), ``drop`` (the socket
            is closed without ending the body), ``stall`` (nothing more is sent, then the socket closes).
        stall_seconds: how long a stall lasts at most.
        seq: the `RecordedRequest.seq` this plan answers (0 for control-plane answers).
    """

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    frames: list[bytes] | None = None
    first_byte_delay: float = 0.0
    frame_delay: float = 0.0
    end: End = "done"
    stall_seconds: float = 0.0
    seq: int = 0


def json_plan(status: int, payload: Any, headers: dict[str, str] | None = None, seq: int = 0) -> Plan:
    """A plain JSON answer."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    return Plan(status, {"content-type": "application/json", **(headers or {})}, body=body, seq=seq)


def sse_event(event: str, data: JsonObject) -> bytes:
    """A named SSE frame (Anthropic, Responses)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def sse_data(data: JsonObject | str) -> bytes:
    """An unnamed SSE frame (Chat Completions); a str is sent verbatim (``[DONE]``)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n".encode()
