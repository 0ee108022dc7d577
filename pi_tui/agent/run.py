"""One run of the agent loop: turns, the provider stream, retries and overflow recovery.

`Agent` (in `pi_tui.agent.loop`) owns the state and the public API; an `AgentRun` is created per
``prompt()``/``continue_()`` and holds that run's bookkeeping (new messages, turn index, retry counter).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from pi_tui.ai.errors import CredentialError, is_context_overflow, is_retryable_error
from pi_tui.ai.stream import (
    AbortedError,
    AbortSignal,
    Done,
    Error,
    LlmRequest,
    StreamEvent,
    StreamFn,
    StreamOptions,
    StreamStart,
)
from pi_tui.ai.types import AssistantMessage, Message

from .events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    AutoRetryEnd,
    AutoRetryStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
    TurnStart,
)
from .hooks import RetryConfig
from .tool_exec import ABORTED_TEXT, ToolBatch, fail_truncated_tool_calls, run_tool_batch

if TYPE_CHECKING:
    from pi_tui.ai.types import Model

    from .hooks import (
        AfterToolCallFn,
        BeforeToolCallFn,
        BuildRequestFn,
        ContextOverflowFn,
        FinishResultFn,
        MessageHookFn,
        ToolExecutionMode,
    )
    from .tool import AgentTool

__all__ = ["AgentRun", "RETRY_CANCELLED_TEXT", "RunHost", "retry_delay_ms"]

AnyMessage = TypeVar("AnyMessage", bound=Message)
"""A message of any role; the message hook gives back one of the same role."""

log = logging.getLogger(__name__)

RETRY_CANCELLED_TEXT = "Retry cancelled"


def _default_stream_fn() -> StreamFn:
    # Imported lazily: the registry pulls in provider SDKs, which the loop itself never needs.
    from pi_tui.ai.registry import stream

    return stream


_RETRY_AFTER_TEXT = re.compile(r"retry after (\d+(?:\.\d+)?) ?ms", re.IGNORECASE)


def _retry_after_ms(message: AssistantMessage) -> int | None:
    """The provider's retry hint: an extra ``retryAfterMs`` field, or ``(retry after N ms)`` in the text."""
    extra = message.model_extra or {}
    for key in ("retryAfterMs", "retry_after_ms"):
        value = extra.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    found = _RETRY_AFTER_TEXT.search(message.error_message or "")
    return int(float(found.group(1))) if found else None


def retry_delay_ms(config: RetryConfig, attempt: int, message: AssistantMessage) -> int:
    """Delay before retry ``attempt`` (1-based).

    The provider's requested wait when it gave one within ``max_delay_ms``; otherwise (no hint, or a
    wait longer than the cap, which pi 0.87.1 refuses to honour) the agent's own backoff
    ``base_delay_ms * 2**(attempt-1)``, capped by ``max_agent_delay_ms``.
    """
    hint = _retry_after_ms(message)
    if hint is not None and (config.max_delay_ms <= 0 or hint <= config.max_delay_ms):
        return max(0, hint)
    delay = config.base_delay_ms * 2 ** (attempt - 1)
    return min(delay, config.max_agent_delay_ms) if config.max_agent_delay_ms > 0 else delay


_TurnOutcome = Literal["tools", "stop", "end"]


class RunHost(Protocol):
    """What a run uses of its `pi_tui.agent.loop.Agent`: its state, hooks and public methods."""

    model: Model
    tools: list[AgentTool]
    messages: list[Message]
    stream_fn: StreamFn | None
    build_request: BuildRequestFn | None
    before_tool_call: BeforeToolCallFn | None
    after_tool_call: AfterToolCallFn | None
    finish_tool_result: FinishResultFn | None
    message_end_hook: MessageHookFn | None
    on_context_overflow: ContextOverflowFn | None
    retry: RetryConfig
    tool_execution: ToolExecutionMode
    abort_grace_s: float
    stream_message: AssistantMessage | None

    async def emit(self, event: AgentEvent) -> None: ...

    def report(self, where: str, exc: BaseException) -> None: ...

    def take_steering(self) -> list[Message]: ...

    def take_follow_up(self) -> list[Message]: ...

    async def request_options(self, signal: AbortSignal) -> StreamOptions: ...

    async def build_default_request(self, messages: list[Message], signal: AbortSignal) -> LlmRequest: ...


class AgentRun:
    """The state of one run: its new messages, turn counter and retry bookkeeping."""

    def __init__(self, agent: RunHost, signal: AbortSignal) -> None:
        self.agent = agent
        self.signal = signal
        self.emit = agent.emit
        self.new_messages: list[Message] = []
        self.turn_index = 0
        self.retry_attempt = 0
        self.overflow_recovered = False

    async def execute(self, inputs: list[Message]) -> None:
        await self.emit(AgentStart())
        try:
            await self._loop(inputs)
        except Exception as exc:  # a bug or a broken hook: end the run with a visible error, not a crash
            log.exception("agent run failed")
            failure = self._error_message(f"Agent loop failed: {exc}")
            await self.emit(MessageStart(failure))
            await self.finalize(failure)
        await self.emit(AgentEnd(tuple(self.new_messages)))

    async def _loop(self, inputs: list[Message]) -> None:
        pending = list(inputs) + self.agent.take_steering()
        while True:
            more_tools = True
            while more_tools or pending:
                for message in pending:
                    await self.emit(MessageStart(message))
                    await self.finalize(message)
                pending = []
                outcome = await self._turn()
                if outcome == "end":
                    return
                more_tools = outcome == "tools"
                # Steering queued during the turn (while the answer streamed or its tools ran) is
                # delivered now, after the turn ended, before the next request (pi 0.87.1's rule).
                pending = self.agent.take_steering()
            pending = self.agent.take_follow_up()
            if not pending:
                return

    async def finalize(self, message: AnyMessage) -> AnyMessage:
        """Run the message hook, append to the history, emit message_end (awaiting listeners)."""
        hook = self.agent.message_end_hook
        if hook is not None:
            try:
                replacement = await hook(message)
                if replacement is not None:
                    if not isinstance(replacement, type(message)):  # one class per role
                        raise TypeError("the message hook may not change a message's role")
                    message = replacement
            except Exception as exc:
                self.agent.report("message_end_hook", exc)
        self.agent.messages.append(message)
        self.new_messages.append(message)
        await self.emit(MessageEnd(message))
        return message

    def _forget(self, message: Message) -> None:
        """Take a (retried) message out of the history and this run's output; it stays persisted."""
        for bucket in (self.agent.messages, self.new_messages):
            for i in range(len(bucket) - 1, -1, -1):
                if bucket[i] is message:
                    del bucket[i]
                    break

    def _remember(self, message: Message) -> None:
        self.agent.messages.append(message)
        self.new_messages.append(message)

    # --- one turn ---------------------------------------------------------------------------------

    async def _turn(self) -> _TurnOutcome:
        while True:
            index = self.turn_index
            self.turn_index += 1
            await self.emit(TurnStart(index))
            message = await self._request()
            if message.stop_reason == "aborted" or (message.stop_reason == "error" and self.signal.aborted):
                await self.emit(TurnEnd(index, message, ()))
                return "end"
            if message.stop_reason == "error":
                if await self._recover(message, index):
                    continue
                return "end"

            if self.retry_attempt > 0:
                await self.emit(AutoRetryEnd(success=True, attempt=self.retry_attempt))
                self.retry_attempt = 0
            self.overflow_recovered = False

            if not message.tool_calls():
                await self.emit(TurnEnd(index, message, ()))
                return "stop"
            batch = ToolBatch(
                assistant_message=message,
                tools=list(self.agent.tools),
                signal=self.signal,
                emit=self.emit,
                finalize=self._finalize_result,
                messages=tuple(self.agent.messages),
                before_tool_call=self.agent.before_tool_call,
                after_tool_call=self.agent.after_tool_call,
                finish_result=self.agent.finish_tool_result,
                mode=self.agent.tool_execution,
                abort_grace_s=self.agent.abort_grace_s,
            )
            if message.stop_reason == "length":
                outcome = await fail_truncated_tool_calls(batch)
            else:
                outcome = await run_tool_batch(batch)
            await self.emit(TurnEnd(index, message, tuple(outcome.results)))
            if self.signal.aborted:
                return "end"  # what the user queued stays queued for the next run
            return "tools"

    async def _finalize_result(self, message: AnyMessage) -> AnyMessage:
        await self.emit(MessageStart(message))
        return await self.finalize(message)

    async def _recover(self, message: AssistantMessage, index: int) -> bool:
        """Handle a failed request. True = try again (a new turn), False = the run ends."""
        agent = self.agent
        window = agent.model.context_window
        if is_context_overflow(message, window):
            if agent.on_context_overflow is None or self.overflow_recovered:
                await self.emit(TurnEnd(index, message, ()))
                await self._end_retry_chain(message)
                return False
            self._forget(message)
            await self.emit(TurnEnd(index, message, ()))
            try:
                fixed = await agent.on_context_overflow(message)
            except Exception as exc:
                agent.report("on_context_overflow", exc)
                fixed = False
            if fixed and not self.signal.aborted:
                self.overflow_recovered = True
                return True
            self._remember(message)
            await self._end_retry_chain(message)
            return False

        config = agent.retry
        attempt = self.retry_attempt + 1
        retryable = config.enabled and attempt <= config.max_retries and is_retryable_error(message, window)
        if not retryable:
            await self.emit(TurnEnd(index, message, ()))
            await self._end_retry_chain(message)
            return False

        delay = retry_delay_ms(config, attempt, message)
        self.retry_attempt = attempt
        self._forget(message)
        await self.emit(TurnEnd(index, message, ()))
        await self.emit(
            AutoRetryStart(
                attempt=attempt,
                max_attempts=config.max_retries,
                delay_ms=delay,
                error_message=message.error_message or "",
            )
        )
        try:
            await self.signal.sleep(delay / 1000)
        except AbortedError:
            await self.emit(AutoRetryEnd(success=False, attempt=attempt, final_error=RETRY_CANCELLED_TEXT))
            self.retry_attempt = 0
            return False
        return True

    async def _end_retry_chain(self, message: AssistantMessage) -> None:
        if self.retry_attempt > 0:
            await self.emit(
                AutoRetryEnd(success=False, attempt=self.retry_attempt, final_error=message.error_message)
            )
            self.retry_attempt = 0

    # --- one request ------------------------------------------------------------------------------

    async def _request(self) -> AssistantMessage:
        """Build the request, stream the answer (emitting message events) and finalize it."""
        agent = self.agent
        try:
            history = list(agent.messages)
            build = agent.build_request or agent.build_default_request
            request = await build(history, self.signal)
            options = await agent.request_options(self.signal)
            stream_fn = agent.stream_fn or _default_stream_fn()
        except Exception as exc:
            log.warning("request preparation failed", exc_info=True)
            failure = (  # a context hook stopped by abort fails the build: the outcome is the abort
                self._aborted_message(None)
                if self.signal.aborted
                else self._error_message(
                    str(exc) if isinstance(exc, CredentialError) else f"Request preparation failed: {exc}"
                )
            )
            await self.emit(MessageStart(failure))
            return await self.finalize(failure)
        if self.signal.aborted:
            aborted = self._aborted_message(None)
            await self.emit(MessageStart(aborted))
            return await self.finalize(aborted)
        return await self._stream(stream_fn, request, options)

    async def _stream(
        self, stream_fn: StreamFn, request: LlmRequest, options: StreamOptions
    ) -> AssistantMessage:
        agent = self.agent
        partial: AssistantMessage | None = None
        final: AssistantMessage | None = None
        started = False
        iterator: AsyncIterator[StreamEvent] | None = None
        abort_wait = asyncio.ensure_future(self.signal.wait())
        try:
            produced: Any = stream_fn(agent.model, request, options)
            if inspect.isawaitable(produced):
                produced = await produced
            iterator = aiter(produced)
            while final is None and not self.signal.aborted:
                step = asyncio.ensure_future(anext(iterator))
                done, _ = await asyncio.wait({step, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
                if step not in done:  # aborted while the provider was silent
                    step.cancel()
                    await asyncio.gather(step, return_exceptions=True)
                    break
                try:
                    event = step.result()
                except StopAsyncIteration:
                    break
                if isinstance(event, Done):
                    final = event.message
                elif isinstance(event, Error):
                    final = event.error
                else:
                    partial = event.partial
                    agent.stream_message = partial
                    if not started:
                        started = True
                        await self.emit(MessageStart(partial))
                    if not isinstance(event, StreamStart):
                        await self.emit(MessageUpdate(partial, event))
        except Exception as exc:
            log.warning("provider stream raised (it should not)", exc_info=True)
            final = (
                self._aborted_message(partial)
                if self.signal.aborted
                else self._error_message(str(exc), partial)
            )
        finally:
            abort_wait.cancel()
            await _close(iterator)
            agent.stream_message = None

        if final is None:
            if self.signal.aborted:
                final = self._aborted_message(partial)
            else:
                final = self._error_message("Stream ended without a final message", partial)
        if not started:
            await self.emit(MessageStart(final))
        return await self.finalize(final)

    def _error_message(self, text: str, partial: AssistantMessage | None = None) -> AssistantMessage:
        return self._closing_message(partial, "error", text)

    def _aborted_message(self, partial: AssistantMessage | None) -> AssistantMessage:
        return self._closing_message(partial, "aborted", ABORTED_TEXT)

    def _closing_message(
        self, partial: AssistantMessage | None, reason: Literal["error", "aborted"], text: str
    ) -> AssistantMessage:
        if partial is not None:
            return partial.model_copy(deep=True, update={"stop_reason": reason, "error_message": text})
        model = self.agent.model
        return AssistantMessage(
            api=model.api, provider=model.provider, model=model.id, stop_reason=reason, error_message=text
        )


async def _close(iterator: object) -> None:
    # A provider's stream (an extension's provider too) is any async iterator: aclose() only if it has one.
    close = getattr(iterator, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:  # closing a broken provider stream must not mask the outcome
        log.debug("closing the provider stream failed", exc_info=True)
