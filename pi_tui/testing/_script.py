"""The script model: provider-neutral reply parts, replies, faults, and their JSON form.

A script is an ordered list of turns. Each request the fake answers consumes one turn. A turn is a
`Reply` (parts rendered to whichever API was called), a `Fault` (an HTTP error or a broken stream),
or a callable ``(RecordedRequest) -> Reply | Fault`` evaluated when the request arrives.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

if TYPE_CHECKING:
    from ._records import RecordedRequest

__all__ = [
    "FAULT_KINDS",
    "Fault",
    "Part",
    "Reply",
    "TextPart",
    "ThinkingPart",
    "ToolCallPart",
    "Turn",
    "TurnSource",
    "fake_signature",
    "text",
    "thinking",
    "tool_call",
    "turn_from_dict",
    "turns_from_json",
]


@dataclass(frozen=True, slots=True)
class TextPart:
    """Assistant text."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """A thinking block. ``signature=None`` means the fake derives one (`fake_signature`).

    With ``redacted=True`` the text is the opaque ``data`` of a ``redacted_thinking`` block.
    """

    thinking: str
    signature: str | None = None
    redacted: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A tool call. ``input`` is a dict, or a raw JSON string (which may be invalid on purpose).

    ``id=None`` means a deterministic id: ``toolu_fake_0001`` (Anthropic) / ``call_fake_0001`` (OpenAI),
    numbered across the whole fake in the order the calls are sent.
    """

    name: str
    input: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments(self) -> str:
        """The arguments as the JSON text that is streamed."""
        if isinstance(self.input, str):
            return self.input
        return json.dumps(dict(self.input), separators=(",", ":"), ensure_ascii=False)

    def parsed_input(self) -> JsonObject:
        """The arguments as an object; ``{}`` when the raw string is not a JSON object."""
        if not isinstance(self.input, str):
            return dict(self.input)
        try:
            value = json_safe.loads(self.input)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


Part: TypeAlias = TextPart | ThinkingPart | ToolCallPart


def text(value: str) -> TextPart:
    """A text part."""
    return TextPart(value)


def thinking(value: str, signature: str | None = None, *, redacted: bool = False) -> ThinkingPart:
    """A thinking part; ``signature`` defaults to `fake_signature(value)`."""
    return ThinkingPart(value, signature, redacted)


def tool_call(
    name: str, input: Mapping[str, Any] | str | None = None, *, id: str | None = None
) -> ToolCallPart:
    """A tool-call part; ``input`` is a dict or a raw JSON string."""
    return ToolCallPart(name, {} if input is None else input, id)


def fake_signature(thinking_text: str) -> str:
    """The signature the fake issues for a thinking text (and accepts back on replay)."""
    return "sig_fake_" + hashlib.sha256(thinking_text.encode()).hexdigest()[:40]


Chunking: TypeAlias = int | Literal["word", "whole"]

_STOP_ALIASES = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "toolUse": "tool_use",
    "content_filter": "refusal",
}
STOP_REASONS = frozenset(
    {
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
)


@dataclass
class Reply:
    """A successful answer made of neutral parts.

    Args:
        parts: the content; a bare string is shorthand for one text part.
        stop_reason: Anthropic vocabulary (``end_turn``, ``max_tokens``, ``tool_use``, ``refusal``,
            ``stop_sequence``, ``pause_turn``, ``model_context_window_exceeded``); OpenAI names
            (``stop``, ``length``, ``tool_calls``, ``content_filter``) are accepted too. Default:
            ``tool_use`` when there is a tool call, else ``end_turn``.
        usage: overrides of the reported usage, neutral keys ``input``, ``output``, ``cache_read``,
            ``cache_write`` (anything not given is simulated).
        chunk: how text is split into deltas: ``"word"`` (default), ``"whole"`` or a fixed char count.
        frame_delay: seconds to sleep before every SSE frame after the first.
        first_byte_delay: seconds to sleep before the response starts.
        interleave_tool_calls: OpenAI chat only: send tool-call fragments round-robin (indices 0, 1, 0, 1…).
        ping: Anthropic only: send a ``ping`` event after ``message_start``.
    """

    parts: Sequence[Part | str] | Part | str = ()
    stop_reason: str | None = None
    usage: Mapping[str, int] | None = None
    chunk: Chunking = "word"
    frame_delay: float = 0.0
    first_byte_delay: float = 0.0
    interleave_tool_calls: bool = False
    ping: bool = False

    def __post_init__(self) -> None:
        raw = (
            [self.parts]
            if isinstance(self.parts, str | TextPart | ThinkingPart | ToolCallPart)
            else self.parts
        )
        self.parts = tuple(TextPart(p) if isinstance(p, str) else p for p in raw)
        for part in self.parts:
            if not isinstance(part, TextPart | ThinkingPart | ToolCallPart):
                raise TypeError(f"Reply parts must be text(), thinking() or tool_call() parts, got {part!r}")
        if self.stop_reason is not None:
            reason = _STOP_ALIASES.get(self.stop_reason, self.stop_reason)
            if reason not in STOP_REASONS:
                raise ValueError(
                    f"unknown stop_reason {self.stop_reason!r}; use one of {sorted(STOP_REASONS)}"
                )
            self.stop_reason = reason
        if self.usage is not None:
            unknown = set(self.usage) - {"input", "output", "cache_read", "cache_write"}
            if unknown:
                raise ValueError(
                    f"unknown usage keys {sorted(unknown)}; use input, output, cache_read, cache_write"
                )
        if isinstance(self.chunk, int) and self.chunk < 1:
            raise ValueError("chunk must be a positive char count, 'word' or 'whole'")

    @property
    def part_list(self) -> tuple[Part, ...]:
        return self.parts  # type: ignore[return-value]  # normalised in __post_init__

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(isinstance(p, ToolCallPart) for p in self.part_list) else "end_turn"


FaultKind: TypeAlias = Literal[
    "rate_limit",
    "overloaded",
    "api_error",
    "auth",
    "request_too_large",
    "context_overflow",
    "stream_error",
    "truncate",
    "drop",
    "stall",
]
FAULT_KINDS: frozenset[str] = frozenset(get_args(FaultKind))
HTTP_FAULTS = frozenset(
    {"rate_limit", "overloaded", "api_error", "auth", "request_too_large", "context_overflow"}
)
_FAULT_ALIASES = {
    "prompt_too_long": "context_overflow",
    "context_length_exceeded": "context_overflow",
    "overflow": "context_overflow",
    "disconnect": "drop",
    "socket_drop": "drop",
    "cut": "truncate",
    "error_event": "stream_error",
}


@dataclass
class Fault:
    """A failure instead of (or in the middle of) an answer.

    HTTP faults answer with an error status and the provider's real error body:
    ``rate_limit`` (429, ``retry-after-ms: 1``), ``overloaded`` (529 Anthropic / 503 OpenAI),
    ``api_error`` (500), ``auth`` (401), ``request_too_large`` (413), ``context_overflow`` (400 with
    the real "prompt is too long" / ``context_length_exceeded`` text computed from the fake token count).

    Stream faults stream ``reply`` (default: a short text) and break it after ``after_frames`` SSE frames
    (at most all but the last frame, so the break always happens):
    ``stream_error`` (an SSE ``error`` event), ``truncate`` (the body ends cleanly with no
    ``message_stop`` / ``finish_reason`` / ``[DONE]``), ``drop`` (the socket is closed mid-body),
    ``stall`` (nothing more is sent for ``stall_seconds`` or until the server closes).
    On a non-streaming request they become: the matching HTTP error, a short body, a closed socket,
    and a stall before the headers.

    Args:
        kind: one of `FAULT_KINDS` (aliases: ``prompt_too_long``, ``context_length_exceeded``, ``disconnect``).
        after_frames: stream faults: how many frames are sent first.
        reply: stream faults: what is streamed before the break.
        message: overrides the error message.
        status: overrides the HTTP status.
        error_type: ``stream_error``: the error type (default ``overloaded_error``).
        retry_after_ms: value of the ``retry-after-ms`` header on retryable HTTP faults (``None``: omit).
        stall_seconds: ``stall``: the longest the fake stays silent.
        tokens: ``context_overflow``: the token count to report (default: the fake count, at least window + 1).
    """

    kind: str
    after_frames: int = 0
    reply: Reply | None = None
    message: str | None = None
    status: int | None = None
    error_type: str | None = None
    retry_after_ms: int | None = 1
    stall_seconds: float = 30.0
    tokens: int | None = None

    def __post_init__(self) -> None:
        self.kind = _FAULT_ALIASES.get(self.kind, self.kind)
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; use one of {sorted(FAULT_KINDS)}")
        if self.after_frames < 0:
            raise ValueError("after_frames must be >= 0")

    @property
    def is_http(self) -> bool:
        return self.kind in HTTP_FAULTS

    def streamed_reply(self) -> Reply:
        return self.reply or Reply(
            [TextPart("This answer is cut short by a scripted fault in the fake server.")]
        )


Turn: TypeAlias = Reply | Fault
TurnSource: TypeAlias = "Turn | Callable[[RecordedRequest], Turn | None]"


# ---------------------------------------------------------------------------------------------------
# JSON form (see `pi_tui.testing.server` for the documented format)
# ---------------------------------------------------------------------------------------------------


def _part_from_dict(data: Any) -> Part:
    if isinstance(data, str):
        return TextPart(data)
    if not isinstance(data, dict):
        raise ValueError(f"a reply part must be an object or a string, got {data!r}")
    kind = data.get("type")
    if kind == "text":
        return TextPart(str(data.get("text", "")))
    if kind == "thinking":
        return ThinkingPart(
            str(data.get("thinking", "")), data.get("signature"), bool(data.get("redacted", False))
        )
    if kind == "tool_call":
        if "arguments" in data:
            raw: Mapping[str, Any] | str = str(data["arguments"])
        else:
            raw = data.get("input", {})
        return ToolCallPart(str(data["name"]), raw, data.get("id"))
    raise ValueError(f"unknown reply part type {kind!r}; use text, thinking or tool_call")


_REPLY_KEYS = {
    "stop_reason",
    "usage",
    "chunk",
    "frame_delay",
    "first_byte_delay",
    "interleave_tool_calls",
    "ping",
}
_FAULT_KEYS = {"after_frames", "message", "status", "error_type", "retry_after_ms", "stall_seconds", "tokens"}


def _reply_from_dict(data: JsonObject) -> Reply:
    parts = [_part_from_dict(p) for p in data.get("parts", [])]
    return Reply(parts, **{k: v for k, v in data.items() if k in _REPLY_KEYS})


def turn_from_dict(data: JsonObject) -> Turn:
    """Build a `Reply` or `Fault` from its JSON form.

    Raises:
        ValueError: when the object is not a valid turn.
    """
    if not isinstance(data, dict):
        raise ValueError(f"a turn must be an object, got {data!r}")
    kind = data.get("type", "reply")
    if kind == "reply":
        return _reply_from_dict(data)
    if kind == "fault":
        reply = data.get("reply")
        fault_reply = _reply_from_dict(reply) if isinstance(reply, dict) else None
        options = {k: v for k, v in data.items() if k in _FAULT_KEYS}
        return Fault(str(data.get("kind", "")), reply=fault_reply, **options)
    raise ValueError(f"unknown turn type {kind!r}; use 'reply' or 'fault'")


def turns_from_json(data: Any) -> list[Turn]:
    """Parse a script document: ``{"turns": [...]}`` or a bare list of turns."""
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise ValueError('a script must be {"turns": [...]} or a list of turns')
    return [turn_from_dict(t) for t in turns]
