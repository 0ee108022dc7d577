"""Running the tool calls of one assistant message (pi's tool batch).

Parallel mode (the default): every call is pre-flighted sequentially in source order (find the tool,
``prepare_arguments``, validate, ``before_tool_call``); then the allowed calls execute concurrently;
the tool-result messages are emitted in source order once all are done. Sequential mode runs each call
to completion before pre-flighting the next.

A steering message queued meanwhile (even while the calls were still streaming) does not stop the batch:
as in pi 0.87.1, every call of the message runs and its result is kept, and the run loop delivers the
steering message after the turn ends, before the next request. Only an abort stops calls that have not
started.

Every call gets exactly one result, whatever happens (abort included), so the history stays pairable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.ai.stream import AbortedError, AbortSignal
from pi_tui.ai.types import AssistantMessage, Message, TextContent, ToolCall, ToolResultMessage
from pi_tui.util.json_types import JsonObject

from .events import AgentEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from .hooks import (
    AfterToolCallFn,
    BeforeToolCallFn,
    FinishResultFn,
    ToolCallContext,
    ToolExecutionMode,
    ToolResultContext,
)
from .tool import AgentTool, ToolError, ToolResult
from .validate import ToolArgumentsError, validate_arguments

__all__ = [
    "ABORTED_TEXT",
    "BLOCKED_TEXT",
    "TRUNCATED_CALL_TEXT",
    "ToolBatch",
    "ToolBatchResult",
    "run_tool_batch",
    "fail_truncated_tool_calls",
]

log = logging.getLogger(__name__)

ABORTED_TEXT = "Operation aborted"
BLOCKED_TEXT = "Tool execution was blocked"
TRUNCATED_CALL_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be '
    "truncated. Re-issue the tool call with complete arguments."
)


def _error(text: str, details: Any = None) -> ToolResult:
    """A failed call's result; without details of its own it carries ``{}``, as pi's do (a client reading
    ``details.<field>`` of any result never meets ``null``)."""
    return ToolResult(content=[TextContent(text=text)], details={} if details is None else details)


@dataclass(slots=True)
class ToolBatch:
    """Everything one batch needs from the agent."""

    assistant_message: AssistantMessage
    tools: Sequence[AgentTool]
    signal: AbortSignal
    emit: Callable[[AgentEvent], Awaitable[None]]
    finalize: Callable[[ToolResultMessage], Awaitable[ToolResultMessage]]
    """Emits message_start, runs the message hook, appends to history, emits message_end."""
    messages: tuple[Message, ...] = ()
    before_tool_call: BeforeToolCallFn | None = None
    after_tool_call: AfterToolCallFn | None = None
    finish_result: FinishResultFn | None = None
    """Runs last on every executed call's result, after ``after_tool_call`` (the session fits the images
    a tool returned into the model's limits here, including those a ``tool_result`` handler added)."""
    mode: ToolExecutionMode = "parallel"
    abort_grace_s: float = 1.0
    """How long an aborted tool may take to stop by itself (and report its own text) before it is cancelled."""


@dataclass(slots=True)
class ToolBatchResult:
    results: list[ToolResultMessage] = field(default_factory=list)
    """The finalized tool-result messages, in source order."""


@dataclass(slots=True)
class _Slot:
    call: ToolCall
    tool: AgentTool | None = None
    args: JsonObject | None = None
    result: ToolResult | None = None
    is_error: bool = False

    @property
    def prepared(self) -> bool:
        return self.result is None and self.tool is not None


async def run_tool_batch(batch: ToolBatch) -> ToolBatchResult:
    """Run every tool call of ``batch.assistant_message``; see the module docstring."""
    calls = batch.assistant_message.tool_calls()
    out = ToolBatchResult()
    if batch.mode == "sequential":
        await _run_sequential(batch, calls, out)
    else:
        await _run_parallel(batch, calls, out)
    return out


async def _run_parallel(batch: ToolBatch, calls: list[ToolCall], out: ToolBatchResult) -> None:
    slots: list[_Slot] = []
    for call in calls:
        slot = _Slot(call)
        slots.append(slot)
        await batch.emit(ToolExecutionStart(call.id, call.name, call.arguments))
        await _preflight(batch, slot)
        if slot.result is not None:
            await _emit_end(batch, slot)

    runnable = [slot for slot in slots if slot.prepared]
    if batch.signal.aborted:
        for slot in runnable:
            await _settle(batch, slot, _error(ABORTED_TEXT), True)
    else:
        await asyncio.gather(*(_execute(batch, slot) for slot in runnable))

    for slot in slots:
        out.results.append(await batch.finalize(_result_message(slot)))


async def _run_sequential(batch: ToolBatch, calls: list[ToolCall], out: ToolBatchResult) -> None:
    for position, call in enumerate(calls):
        slot = _Slot(call)
        await batch.emit(ToolExecutionStart(call.id, call.name, call.arguments))
        await _preflight(batch, slot)
        if slot.result is not None:
            await _emit_end(batch, slot)
        else:
            await _execute(batch, slot)
        out.results.append(await batch.finalize(_result_message(slot)))
        if batch.signal.aborted:
            for rest in calls[position + 1 :]:
                skipped = _Slot(rest)
                await batch.emit(ToolExecutionStart(rest.id, rest.name, rest.arguments))
                await _settle(batch, skipped, _error(ABORTED_TEXT), True)
                out.results.append(await batch.finalize(_result_message(skipped)))
            return


async def fail_truncated_tool_calls(batch: ToolBatch) -> ToolBatchResult:
    """A ``length`` stop may have cut the arguments short: report every call as not executed."""
    out = ToolBatchResult()
    for call in batch.assistant_message.tool_calls():
        slot = _Slot(call)
        await batch.emit(ToolExecutionStart(call.id, call.name, call.arguments))
        await _settle(batch, slot, _error(TRUNCATED_CALL_TEXT.format(name=call.name)), True)
        out.results.append(await batch.finalize(_result_message(slot)))
    return out


async def _preflight(batch: ToolBatch, slot: _Slot) -> None:
    """Leave ``slot`` prepared (tool + args) or settled with an immediate error result."""
    call = slot.call
    if batch.signal.aborted:
        slot.result, slot.is_error = _error(ABORTED_TEXT), True
        return
    tool = next((t for t in batch.tools if t.name == call.name), None)
    if tool is None:
        slot.result, slot.is_error = _error(f"Tool {call.name} not found"), True
        return
    try:
        arguments = call.arguments
        if tool.prepare_arguments is not None:
            arguments = tool.prepare_arguments(dict(arguments))
        args = validate_arguments(call.name, tool.parameters, arguments)
        if batch.before_tool_call is not None:
            context = ToolCallContext(batch.assistant_message, call, args, batch.messages, batch.signal)
            decision = await batch.before_tool_call(context)
            if batch.signal.aborted:
                slot.result, slot.is_error = _error(ABORTED_TEXT), True
                return
            if decision is not None and decision.block:
                slot.result, slot.is_error = _error(decision.reason or BLOCKED_TEXT), True
                return
    except ToolArgumentsError as exc:
        slot.result, slot.is_error = _error(str(exc)), True
        return
    except Exception as exc:  # a broken shim or hook fails this call only
        log.warning("preflight of tool call %s (%s) failed", call.id, call.name, exc_info=True)
        slot.result, slot.is_error = _error(_exception_text(exc)), True
        return
    if batch.signal.aborted:
        slot.result, slot.is_error = _error(ABORTED_TEXT), True
        return
    slot.tool, slot.args = tool, args


async def _execute(batch: ToolBatch, slot: _Slot) -> None:
    """Run a prepared call, apply ``after_tool_call``, emit tool_execution_end."""
    assert slot.tool is not None and slot.args is not None
    call, tool, args = slot.call, slot.tool, slot.args
    updates: list[asyncio.Future[None]] = []
    accepting = True

    def on_update(partial: ToolResult) -> None:
        if accepting:
            event = ToolExecutionUpdate(call.id, call.name, call.arguments, partial)
            updates.append(asyncio.ensure_future(batch.emit(event)))

    try:
        execution = asyncio.ensure_future(tool.execute(call.id, args, batch.signal, on_update))
        result = await _await_abortable(execution, batch.signal, batch.abort_grace_s)
        if not isinstance(result, ToolResult):
            raise TypeError(f"Tool {call.name} returned {type(result).__name__}, expected ToolResult")
        is_error = False
    except AbortedError as exc:
        result, is_error = _error(str(exc) if str(exc) not in ("", "aborted") else ABORTED_TEXT), True
    except ToolError as exc:
        result, is_error = _error(str(exc), exc.details), True
    except asyncio.CancelledError:
        if not batch.signal.aborted:
            raise
        result, is_error = _error(ABORTED_TEXT), True
    except Exception as exc:
        result, is_error = _error(_exception_text(exc)), True
    finally:
        accepting = False
    if updates:
        await asyncio.gather(*updates, return_exceptions=True)

    if batch.after_tool_call is not None:
        context = ToolResultContext(
            batch.assistant_message, call, args, result, is_error, batch.messages, batch.signal
        )
        try:
            patch = await batch.after_tool_call(context)
            if patch is not None:
                result, is_error = patch.apply(result, is_error)
        except Exception as exc:
            log.warning("after_tool_call hook failed for %s", call.id, exc_info=True)
            result, is_error = _error(_exception_text(exc)), True
    if batch.finish_result is not None:
        try:
            result = await batch.finish_result(result)
        except Exception:  # the result as it was is still a result
            log.warning("finishing the result of %s failed", call.id, exc_info=True)
    await _settle(batch, slot, result, is_error)


async def _await_abortable(execution: asyncio.Future[Any], signal: AbortSignal, grace_s: float) -> Any:
    """Await a tool; after an abort give it ``grace_s`` to stop on its own, then cancel it."""
    abort_wait = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({execution, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
        if execution not in done:
            done, _ = await asyncio.wait({execution}, timeout=grace_s)
            if execution not in done:
                execution.cancel()
                await asyncio.gather(execution, return_exceptions=True)
                raise AbortedError(ABORTED_TEXT)
        return execution.result()
    except asyncio.CancelledError:
        execution.cancel()  # our caller is being cancelled: don't leave the tool running
        raise
    finally:
        abort_wait.cancel()


async def _settle(batch: ToolBatch, slot: _Slot, result: ToolResult, is_error: bool) -> None:
    slot.result, slot.is_error = result, is_error
    slot.tool = None
    await _emit_end(batch, slot)


async def _emit_end(batch: ToolBatch, slot: _Slot) -> None:
    assert slot.result is not None
    await batch.emit(ToolExecutionEnd(slot.call.id, slot.call.name, slot.result, slot.is_error))


def _result_message(slot: _Slot) -> ToolResultMessage:
    assert slot.result is not None
    return ToolResultMessage(
        tool_call_id=slot.call.id,
        tool_name=slot.call.name,
        content=list(slot.result.content),
        details=slot.result.details,
        is_error=slot.is_error,
    )


def _exception_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
