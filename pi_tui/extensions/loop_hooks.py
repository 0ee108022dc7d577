"""The extension events that run inside the agent loop: tool_call, tool_result, message,
before_provider_request and context.

Deep-copy rules:

| event | what the handler gets | to change things |
|---|---|---|
| ``context`` | ``event.messages`` is a deep copy (made when first read) | return ``{"messages": [...]}`` or patch ops |
| ``tool_call`` | ``event.input`` is a read-only view of a deep copy of the arguments | return ``{"block": True, "reason": ...}`` |
| ``tool_result`` | ``event.content`` is a new list (blocks shared: do not mutate them) | return ``{"content"?, "details"?, "isError"?}`` |
| ``message`` | ``event.message`` is a deep copy | return ``{"message": replacement}`` |
| ``before_provider_request`` | ``event.payload`` is the provider body itself | return the replacement body |
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pi_tui.agent.hooks import (
    ToolCallContext,
    ToolCallDecision,
    ToolResultContext,
    ToolResultPatch,
    chain_after_tool_call,
    chain_before_tool_call,
)
from pi_tui.util.json_types import JsonObject

from .convert import to_content, to_message
from .events import Event, normalize_result

if TYPE_CHECKING:
    from pi_tui.ai.types import Message

    from .dispatch import Dispatch
    from .extension import Extension
    from .host import SessionHost

__all__ = ["LoopHooks", "message_replacement", "run_without_suspending"]


def message_replacement(current: Message, raw: object) -> Message | None:
    """The message a ``message`` handler's result puts in place of ``current``: a message record, or
    ``{"message": ...}`` with a record or its JSON; None when the result names none.

    Raises:
        TypeError: The result is no mapping or message, or its message has another role than
            ``current`` (a hook may change a message, not what kind it is).
    """
    value = raw if hasattr(raw, "role") else (normalize_result(raw) or {}).get("message")
    if value is None:
        return None
    replacement: Message = to_message(value)
    if replacement.role != current.role:
        raise TypeError(f"the message hook may not change a {current.role} message's role")
    return replacement


def run_without_suspending(
    awaitable: Any,
    *,
    not_coroutine: str = "before_provider_request handlers must return a value, not an awaitable",
    awaited: str = "before_provider_request handlers must not await: the provider builds its request synchronously",
) -> Any:
    """The result of a coroutine that finishes without awaiting anything (an ``async def`` handler that
    never awaits), for hooks called synchronously (the providers' request hook, messages saved outside a turn).

    Args:
        awaitable: What the handler returned.
        not_coroutine: The error's message when ``awaitable`` is an awaitable but not a coroutine.
        awaited: The error's message when the coroutine awaited (it is closed, and its result is lost).

    Raises:
        RuntimeError: It is not a coroutine, or the coroutine awaited something.
    """
    if not inspect.iscoroutine(awaitable):
        raise RuntimeError(not_coroutine)
    try:
        awaitable.send(None)
    except StopIteration as done:
        return done.value
    awaitable.close()
    raise RuntimeError(awaited)


def _read_only(args: JsonObject) -> MappingProxyType[str, Any]:
    return MappingProxyType(copy.deepcopy(args))


class LoopHooks:
    """Builds the agent-loop callbacks that run the extensions' handlers."""

    def __init__(self, dispatch: Dispatch) -> None:
        self._dispatch = dispatch

    def install(self, session: SessionHost) -> None:
        agent = session.agent
        agent.before_tool_call = (
            chain_before_tool_call(agent.before_tool_call, self.tool_call)
            if agent.before_tool_call is not None
            else self.tool_call
        )
        agent.after_tool_call = (
            chain_after_tool_call(agent.after_tool_call, self.tool_result)
            if agent.after_tool_call is not None
            else self.tool_result
        )
        agent.message_end_hook = self.message
        agent.stream_options.on_payload = self.provider_payload

    # --- tool_call ----------------------------------------------------------------------------------

    async def tool_call(self, ctx: ToolCallContext) -> ToolCallDecision | None:
        """The first ``block`` wins; a handler that raises blocks the call too (pi's rule)."""
        dispatch = self._dispatch
        handlers = dispatch.handlers("tool_call")
        if not handlers:
            return None
        call = ctx.tool_call
        event = Event("tool_call", tool_call_id=call.id, tool_name=call.name, input=_read_only(ctx.args))
        for ext, handler in handlers:
            try:
                raw = dispatch.call(ext, handler, event)
                if inspect.isawaitable(raw):
                    raw = await raw
                result = normalize_result(raw)
            except Exception as exc:
                await dispatch.report(ext, "tool_call", exc)
                return ToolCallDecision(
                    block=True,
                    reason=f'Blocked: the tool_call handler of extension "{ext.name}" failed: {exc}',
                )
            if result and result.get("block"):
                reason = result.get("reason")
                return ToolCallDecision(block=True, reason=str(reason) if reason else None)
        return None

    # --- tool_result --------------------------------------------------------------------------------

    async def tool_result(self, ctx: ToolResultContext) -> ToolResultPatch | None:
        """Partial patches chain: each handler sees the result as the previous ones left it."""
        dispatch = self._dispatch
        handlers = dispatch.handlers("tool_result")
        if not handlers:
            return None
        content = list(ctx.result.content)
        details, is_error, changed = ctx.result.details, ctx.is_error, False
        view = _read_only(ctx.args)
        for ext, handler in handlers:
            event = Event(
                "tool_result",
                tool_call_id=ctx.tool_call.id,
                tool_name=ctx.tool_call.name,
                input=view,
                content=list(content),
                details=details,
                is_error=is_error,
            )
            result = await dispatch.result(ext, handler, event)
            if not result:
                continue
            try:
                if result.get("content") is not None:
                    content = to_content(result["content"])
                    changed = True
            except (TypeError, ValueError) as exc:
                await dispatch.report(ext, "tool_result", exc)
                continue
            if "details" in result:
                details, changed = result["details"], True
            if result.get("is_error") is not None:
                is_error, changed = bool(result["is_error"]), True
        if not changed:
            return None
        return ToolResultPatch(content=content, details=details, is_error=is_error)

    # --- message -------------------------------------------------------------------------

    async def message(self, message: Message) -> Message | None:
        """Transform a finalized message before it is shown, persisted and used as context. A failing
        handler is reported and its change dropped; the others still run."""
        dispatch = self._dispatch
        handlers = dispatch.handlers("message")
        if not handlers:
            return None
        current, changed = message, False
        for ext, handler in handlers:
            ok, raw = await dispatch.invoke(
                ext, handler, Event("message", message=current.model_copy(deep=True))
            )
            if not ok or raw is None:
                continue
            try:
                replacement = message_replacement(current, raw)
            except Exception as exc:
                await dispatch.report(ext, "message", exc)
                continue
            if replacement is not None:
                current, changed = replacement, True
        return current if changed else None

    # --- before_provider_request --------------------------------------------------------------------

    def provider_payload(self, body: JsonObject) -> JsonObject | None:
        """Chained payload replacement; called synchronously by the provider (see `run_without_suspending`)."""
        dispatch = self._dispatch
        handlers = dispatch.handlers("before_provider_request")
        if not handlers:
            return None
        current, changed = body, False
        for ext, handler in handlers:
            try:
                result = dispatch.call(ext, handler, Event("before_provider_request", payload=current))
                if inspect.isawaitable(result):
                    result = run_without_suspending(result)
                if result is None:
                    continue
                if not isinstance(result, dict):
                    raise TypeError(f"the replacement payload must be a dict, got {type(result).__name__}")
            except Exception as exc:
                dispatch.report_soon(ext, "before_provider_request", exc)
                continue
            current, changed = result, True
        return current if changed else None

    # --- context ------------------------------------------------------------------------------------

    def context_handler(self, ext: Extension, handler: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap a ``context`` handler: it gets this extension's ctx; its error is reported and re-raised
        (the context engine then fails the request)."""
        dispatch = self._dispatch

        async def wrapped(event: Any, _ctx: Any) -> Any:
            try:
                result = dispatch.call(ext, handler, event)
                if inspect.isawaitable(result):
                    result = await result
                return result
            except Exception as exc:
                await dispatch.report(ext, "context", exc)
                raise

        return wrapped
