"""Hook signatures and settings of the agent loop.

The loop takes one callable per hook. Several extensions' handlers are combined into one callable by
the extension layer; `chain_before_tool_call` and `chain_after_tool_call` implement pi's semantics for
the tool hooks (first block wins; result patches accumulate, each handler seeing the previous output).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from pi_tui.ai.stream import AbortSignal, LlmRequest
from pi_tui.ai.types import AssistantMessage, ImageContent, Message, TextContent, ToolCall
from pi_tui.util.json_types import JsonObject

from .tool import ToolResult

__all__ = [
    "QueueMode",
    "ToolExecutionMode",
    "RetryConfig",
    "ToolCallContext",
    "ToolCallDecision",
    "ToolResultContext",
    "ToolResultPatch",
    "TransformContextFn",
    "BuildRequestFn",
    "BeforeToolCallFn",
    "AfterToolCallFn",
    "FinishResultFn",
    "MessageHookFn",
    "ContextOverflowFn",
    "ApiKeyFn",
    "chain_before_tool_call",
    "chain_after_tool_call",
]

QueueMode = Literal["one-at-a-time", "all"]
"""How many queued steering/follow-up messages one poll delivers."""

ToolExecutionMode = Literal["parallel", "sequential"]


@dataclass(slots=True)
class RetryConfig:
    """Auto-retry of transient provider errors (pi's ``retry`` settings).

    Attributes:
        enabled: Retry at all.
        max_retries: Retries after the first failure (so at most ``max_retries + 1`` requests).
        base_delay_ms: Delay before retry n is ``base_delay_ms * 2**(n-1)`` (2 s, 4 s, 8 s).
        max_delay_ms: The longest wait a provider may ask for (``retry-after``) and get; a longer one
            is set aside and the backoff above applies instead, as in pi. 0 means no cap.
        max_agent_delay_ms: Cap on the backoff delay. 0 means no cap.
    """

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000
    max_agent_delay_ms: int = 60_000


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """What ``before_tool_call`` sees: one tool call after its arguments were validated."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: JsonObject
    """The validated (coerced) arguments. Do not mutate; block instead."""
    messages: tuple[Message, ...]
    """The agent's history when the tool batch started."""
    signal: AbortSignal
    """The run's abort signal (a hook waiting for the user should give up when it fires)."""


@dataclass(frozen=True, slots=True)
class ToolCallDecision:
    """``before_tool_call``'s answer. ``block=True`` turns the call into an error result with ``reason``."""

    block: bool = False
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResultContext:
    """What ``after_tool_call`` sees: an executed call's result (also when the tool raised)."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: JsonObject
    result: ToolResult
    is_error: bool
    messages: tuple[Message, ...]
    signal: AbortSignal


@dataclass(frozen=True, slots=True)
class ToolResultPatch:
    """A partial replacement of a tool result; ``None`` fields keep the current value."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None

    def apply(self, result: ToolResult, is_error: bool) -> tuple[ToolResult, bool]:
        patched = ToolResult(
            content=list(self.content) if self.content is not None else result.content,
            details=self.details if self.details is not None else result.details,
        )
        return patched, self.is_error if self.is_error is not None else is_error


TransformContextFn = Callable[[list[Message], AbortSignal], Awaitable[list[Message]]]
"""``(history copy, signal) -> messages`` run before every request (the ``context`` event)."""

BuildRequestFn = Callable[[list[Message], AbortSignal], Awaitable[LlmRequest]]
"""``(history copy, signal) -> LlmRequest``: full control of request assembly (replaces the default chain)."""

BeforeToolCallFn = Callable[[ToolCallContext], Awaitable[ToolCallDecision | None]]
"""Pi's ``tool_call`` hook: may block a validated call."""
AfterToolCallFn = Callable[[ToolResultContext], Awaitable[ToolResultPatch | None]]
"""Pi's ``tool_result`` hook: may patch an executed call's result."""
FinishResultFn = Callable[[ToolResult], Awaitable[ToolResult]]
"""Runs on every executed call's result after ``after_tool_call``; returns it, changed or not."""

MessageHookFn = Callable[[Message], Awaitable[Message | None]]
"""The ``message`` hook: gets a finalized message, may return a replacement (``None`` keeps it)."""

ContextOverflowFn = Callable[[AssistantMessage], Awaitable[bool]]
"""Called with a context-overflow error (already removed from the history). True = history fixed, retry once."""

ApiKeyFn = Callable[[str], Awaitable[str | None]]
"""``provider -> api key``, asked before every request (keys and OAuth tokens may expire)."""


def chain_before_tool_call(*hooks: BeforeToolCallFn) -> BeforeToolCallFn:
    """Combine hooks in order; the first that blocks wins and the rest are skipped."""

    async def chained(context: ToolCallContext) -> ToolCallDecision | None:
        for hook in hooks:
            decision = await hook(context)
            if decision is not None and decision.block:
                return decision
        return None

    return chained


def chain_after_tool_call(*hooks: AfterToolCallFn) -> AfterToolCallFn:
    """Combine hooks in order; each sees the result as patched by the ones before it."""

    async def chained(context: ToolResultContext) -> ToolResultPatch | None:
        current = context
        changed = False
        for hook in hooks:
            patch = await hook(current)
            if patch is None:
                continue
            result, is_error = patch.apply(current.result, current.is_error)
            current = replace(current, result=result, is_error=is_error)
            changed = True
        if not changed:
            return None
        return ToolResultPatch(
            content=current.result.content, details=current.result.details, is_error=current.is_error
        )

    return chained
