"""The normalised event stream every provider produces, and what a provider call receives.

Contract (pi's): a provider's ``stream()`` never raises once called. It yields events and always ends
with exactly one `Done` or `Error` event that carries the final `AssistantMessage`. Failures are encoded
as ``stop_reason="error"`` (or ``"aborted"``) plus ``error_message``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

from pi_tui.util.json_types import JsonObject
from pi_tui.util.record_checks import to_camel

from .types import AssistantMessage, LlmMessage, Model, ThinkingLevel, ToolCall, ToolDefinition

__all__ = [
    "AbortSignal",
    "AbortedError",
    "LlmRequest",
    "StreamOptions",
    "WirePrefix",
    "StreamEvent",
    "StreamStart",
    "TextStart",
    "TextDelta",
    "TextEnd",
    "ThinkingStart",
    "ThinkingDelta",
    "ThinkingEnd",
    "ToolCallStart",
    "ToolCallDelta",
    "ToolCallEnd",
    "Done",
    "Error",
    "StreamFn",
    "ProviderError",
]


class AbortedError(Exception):
    """Raised inside cancellable work when its `AbortSignal` fires."""


class AbortSignal:
    """A one-shot cancellation flag that async code can poll or await.

    Unlike ``asyncio.Event`` it can be created outside a running loop and aborted from any thread.
    """

    def __init__(self) -> None:
        self._aborted = False
        self.reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self, reason: str = "aborted") -> None:
        if self._aborted:
            return
        self._aborted = True
        self.reason = reason
        for callback in list(self._callbacks):
            try:
                callback()
            except Exception:  # a failing listener must not stop the others
                pass
        for loop, fut in self._waiters:
            if not fut.done():
                loop.call_soon_threadsafe(_resolve, fut)
        self._waiters.clear()

    def add_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` on abort (at once if already aborted). Returns an unsubscribe function."""
        if self._aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> None:
        """Wait until aborted."""
        if self._aborted:
            return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        waiter = (loop, fut)
        self._waiters.append(waiter)
        try:
            await fut
        finally:
            # A cancelled wait must not leave its future behind on a long-lived signal.
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def raise_if_aborted(self) -> None:
        if self._aborted:
            raise AbortedError(self.reason or "aborted")

    async def sleep(self, seconds: float) -> None:
        """Sleep, but raise `AbortedError` as soon as the signal fires."""
        if seconds <= 0:
            self.raise_if_aborted()
            return
        waiter = asyncio.ensure_future(self.wait())
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout=seconds)
        except TimeoutError:
            return
        finally:
            waiter.cancel()
        self.raise_if_aborted()


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


@dataclass(slots=True)
class LlmRequest:
    """One provider request, provider-neutral.

    ``messages[:cache_boundary]`` is the cached region (the conversation history the envelope keeps);
    the rest is the request-only uncached tail. ``None`` means everything is cached. Providers place
    their last cache breakpoint at the end of the cached region.
    """

    system_prompt: str
    messages: list[LlmMessage]
    tools: list[ToolDefinition] = field(default_factory=list)
    cache_boundary: int | None = None
    # Whether ``messages`` already follow the tool-pairing rules, as `transform_messages` leaves a list
    # (the cached and the uncached part each): no failed turn, every tool call of an assistant message
    # answered right after it by exactly one result per call id, no other result. The provider's
    # preparation then converts message by message and skips its own pairing bookkeeping.
    paired: bool = False
    # History already in the provider's wire shape, sent before ``messages`` (a resumed session's first
    # request, built from the file's lines while its typed history is not built yet: see
    # `pi_tui.session.fast_context`). Only the provider of its ``api`` takes a request carrying one.
    wire_prefix: WirePrefix | None = None


@dataclass(frozen=True, slots=True)
class WirePrefix:
    """Wire messages of the oldest part of a history, for one API (see `LlmRequest.wire_prefix`).

    The request's ``messages`` continue the history from where these end, starting with a user prompt,
    and hold the last answer whose usage pi's context estimate starts from: so every figure a provider
    derives from the history (the output cap, the cache marker) is the one the whole history gives.
    """

    api: str
    messages: list[dict[str, object]]
    json: bytes  # the messages' JSON as the wire encoder writes it, comma-joined, without brackets
    has_tool_history: bool  # whether these messages hold a tool call or result
    # How many history messages became wire messages here (the Responses API names an assistant text
    # without an id by its message's place among those)
    converted: int = 0

    def sendable(self, model: Model, options: StreamOptions) -> list[dict[str, object]]:
        """The messages, for a provider about to send them to ``model``.

        Raises:
            ValueError: they are another API's, or a payload hook would be handed them.
        """
        if self.api != model.api or options.on_payload is not None:
            raise ValueError(
                f"a {self.api} history prefix cannot be sent to {model.api} or through a payload hook"
            )
        return self.messages


@dataclass(slots=True)
class StreamOptions:
    """Per-call knobs. Only ``api_key`` is required by the real providers."""

    api_key: str | None = None
    thinking: ThinkingLevel = "off"
    max_tokens: int | None = None
    temperature: float | None = None
    session_id: str | None = None
    signal: AbortSignal | None = None
    # pi's default: short, or long with PI_CACHE_RETENTION=long in the environment
    cache_retention: Literal["none", "short", "long"] = field(
        default_factory=lambda: default_cache_retention()
    )
    # Extra request headers; a None value deletes a header the wire API would add (pi's null).
    headers: dict[str, str | None] | None = None
    thinking_budgets: dict[str, int] | None = None
    timeout: float | None = None
    max_retry_delay_ms: int = 60_000
    # Provider-level retries of a refused request before it streams (``retry.provider.maxRetries``).
    max_retries: int = 0
    # Called with the provider-specific request body just before sending; may return a replacement.
    on_payload: Callable[[JsonObject], JsonObject | None] | None = None
    # Called once the request's body has been written, before the answer is awaited (work that can
    # run while the server reads it).
    after_write: Callable[[], None] | None = None


def default_cache_retention() -> Literal["short", "long"]:
    """``long`` when ``PI_CACHE_RETENTION=long`` (pi's switch for 1-hour / 24-hour prompt caching), else
    ``short``."""
    import os

    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


class ProviderError(Exception):
    """A provider failure with what the retry/overflow logic needs to know."""

    def __init__(self, message: str, *, status: int | None = None, retry_after_ms: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_ms = retry_after_ms


# --- events ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Event:
    type: ClassVar[str] = ""

    def to_json(self) -> JsonObject:
        """pi's ``AssistantMessageEvent`` JSON shape."""
        out: JsonObject = {"type": self.type}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)  # each of this event's own declared fields, by name
            key = to_camel(name)
            if isinstance(value, AssistantMessage):
                out[key] = value.to_json_dict()
            elif isinstance(value, ToolCall):
                out[key] = value.to_json_dict()
            else:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class StreamStart(_Event):
    type: ClassVar[str] = "start"
    partial: AssistantMessage


# Text, thinking and tool-call blocks each open, grow and close with events of the same fields; the
# kinds differ only in ``type`` (and a tool call ends with the parsed call rather than its text).


@dataclass(frozen=True, slots=True)
class _BlockStart(_Event):
    """A content block opened at ``content_index`` of ``partial``."""

    content_index: int
    partial: AssistantMessage


@dataclass(frozen=True, slots=True)
class _BlockDelta(_Event):
    """``delta`` was appended to the block at ``content_index``."""

    content_index: int
    delta: str
    partial: AssistantMessage


@dataclass(frozen=True, slots=True)
class _BlockEnd(_Event):
    """The block at ``content_index`` is complete; ``content`` is its whole text."""

    content_index: int
    content: str
    partial: AssistantMessage


@dataclass(frozen=True, slots=True)
class TextStart(_BlockStart):
    type: ClassVar[str] = "text_start"


@dataclass(frozen=True, slots=True)
class TextDelta(_BlockDelta):
    type: ClassVar[str] = "text_delta"


@dataclass(frozen=True, slots=True)
class TextEnd(_BlockEnd):
    type: ClassVar[str] = "text_end"


@dataclass(frozen=True, slots=True)
class ThinkingStart(_BlockStart):
    type: ClassVar[str] = "thinking_start"


@dataclass(frozen=True, slots=True)
class ThinkingDelta(_BlockDelta):
    type: ClassVar[str] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ThinkingEnd(_BlockEnd):
    type: ClassVar[str] = "thinking_end"


@dataclass(frozen=True, slots=True)
class ToolCallStart(_BlockStart):
    type: ClassVar[str] = "toolcall_start"


@dataclass(frozen=True, slots=True)
class ToolCallDelta(_BlockDelta):
    type: ClassVar[str] = "toolcall_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEnd(_Event):
    type: ClassVar[str] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


@dataclass(frozen=True, slots=True)
class Done(_Event):
    type: ClassVar[str] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


@dataclass(frozen=True, slots=True)
class Error(_Event):
    type: ClassVar[str] = "error"
    reason: Literal["error", "aborted"]
    error: AssistantMessage


StreamEvent = (
    StreamStart
    | TextStart
    | TextDelta
    | TextEnd
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | Done
    | Error
)


class StreamFn(Protocol):
    """The signature of every provider's entry point (and of test doubles the agent loop accepts)."""

    def __call__(
        self, model: Model, request: LlmRequest, options: StreamOptions
    ) -> AsyncIterator[StreamEvent]: ...
