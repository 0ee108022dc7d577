"""The agent turn loop (seed 000, stage 5): request → stream → tools → steering/follow-up, repeat.

`Agent` owns the history and runs one *run* at a time (``prompt()`` or ``continue_()``). A run is a
sequence of turns; a turn is one provider request plus the tool calls of its answer. Per request:
``build_request`` (default: ``transform_context`` → `convert_to_llm` → `transform_messages`, with the
agent's system prompt and tool definitions) → ``stream_fn`` → tool batch (`run_tool_batch`).

Guarantees:
- Events come in pi's order (see `pi_tui.agent.events`); listeners are awaited one event at a time, so a
  ``message_end`` listener may persist the message before anything else happens.
- Abort works at any point (streaming, tools, retry sleep): an interrupted answer is recorded with
  ``stop_reason="aborted"``, every tool call of a completed answer gets a result, and the next
  request passes the providers' tool-pairing rules.
- Transient provider errors are retried with pi's backoff; a context overflow is handed to
  ``on_context_overflow`` (retried once when it fixed the history), never retried blindly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal

from pi_tui.ai.errors import is_context_overflow, is_retryable_error
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
from pi_tui.ai.types import AssistantMessage, Model, ThinkingLevel, UserMessage

from .convert import convert_to_llm, transform_messages
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
from .hooks import (
    AfterToolCallFn,
    ApiKeyFn,
    BeforeToolCallFn,
    BuildRequestFn,
    ContextOverflowFn,
    MessageHookFn,
    QueueMode,
    RetryConfig,
    ToolExecutionMode,
    TransformContextFn,
)
from .tool import AgentTool
from .tool_exec import ABORTED_TEXT, ToolBatch, fail_truncated_tool_calls, run_tool_batch

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentStateError",
    "Listener",
    "ErrorReporter",
    "RETRY_CANCELLED_TEXT",
    "retry_delay_ms",
]

log = logging.getLogger(__name__)

Listener = Callable[[AgentEvent], Awaitable[None] | None]
ErrorReporter = Callable[[str, BaseException], None]
"""``(where, exception)`` for failures the loop survives (a listener or the message hook raising)."""

RETRY_CANCELLED_TEXT = "Retry cancelled"


class AgentBusyError(RuntimeError):
    """``prompt()``/``continue_()`` while a run is in progress; queue with ``steer``/``follow_up`` instead."""


class AgentStateError(RuntimeError):
    """The history does not allow the requested operation (e.g. ``continue_()`` after an answer)."""


def _as_message(message: Any) -> Any:
    return UserMessage(content=message) if isinstance(message, str) else message


class Agent:
    """A stateful agent: history, tools, model and the turn loop.

    Attributes are plain and may be changed between runs (and, for ``tools``/``system_prompt``/
    ``model``/``thinking``, between turns of a run: each request reads them afresh).

    Args:
        model: The model requests go to.
        system_prompt: Sent with every request by the default ``build_request``.
        tools: The active tools.
        messages: Initial history (any `pi_tui.ai.types.Message`).
        thinking: Thinking level passed in the stream options.
        stream_options: Base options for every request (``signal`` and ``thinking`` are set per request).
        stream_fn: The provider entry point; default `pi_tui.ai.registry.stream`.
        transform_context: The ``context`` hook of the default ``build_request``.
        build_request: Replaces request assembly entirely (a context engine's hook).
        before_tool_call / after_tool_call: Tool hooks (see `pi_tui.agent.hooks`).
        message_end_hook: Seed 001's ``message`` hook on every finalized message.
        on_context_overflow: Called with an overflow error; True = history fixed, retry once.
        get_api_key: Resolves the key per request (``provider -> key``).
        retry: Auto-retry settings.
        steering_mode / follow_up_mode: ``one-at-a-time`` (default) or ``all``.
        tool_execution: ``parallel`` (default) or ``sequential``.
        block_images: Replace images with text in requests (pi's ``images.blockImages``).
        abort_grace_s: How long an aborted tool may take to stop by itself before it is cancelled.
        on_error: Where survivable failures are reported (default: logged).
    """

    def __init__(
        self,
        *,
        model: Model,
        system_prompt: str = "",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[Any] = (),
        thinking: ThinkingLevel = "off",
        stream_options: StreamOptions | None = None,
        stream_fn: StreamFn | None = None,
        transform_context: TransformContextFn | None = None,
        build_request: BuildRequestFn | None = None,
        before_tool_call: BeforeToolCallFn | None = None,
        after_tool_call: AfterToolCallFn | None = None,
        message_end_hook: MessageHookFn | None = None,
        on_context_overflow: ContextOverflowFn | None = None,
        get_api_key: ApiKeyFn | None = None,
        retry: RetryConfig | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        tool_execution: ToolExecutionMode = "parallel",
        block_images: bool = False,
        abort_grace_s: float = 1.0,
        on_error: ErrorReporter | None = None,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.tools: list[AgentTool] = list(tools)
        self.messages: list[Any] = list(messages)
        self.thinking: ThinkingLevel = thinking
        self.stream_options = stream_options or StreamOptions()
        self.stream_fn = stream_fn
        self.transform_context = transform_context
        self.build_request = build_request
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.message_end_hook = message_end_hook
        self.on_context_overflow = on_context_overflow
        self.get_api_key = get_api_key
        self.retry = retry or RetryConfig()
        self.steering_mode: QueueMode = steering_mode
        self.follow_up_mode: QueueMode = follow_up_mode
        self.tool_execution: ToolExecutionMode = tool_execution
        self.block_images = block_images
        self.abort_grace_s = abort_grace_s
        self.on_error = on_error

        self.stream_message: AssistantMessage | None = None
        """The assistant message being streamed right now (partial), for UIs that attach late."""
        self._listeners: list[Listener] = []
        self._steering: deque[Any] = deque()
        self._follow_up: deque[Any] = deque()
        self._signal: AbortSignal | None = None
        self._running = False
        self._idle: asyncio.Future[None] | None = None
        self._emit_lock: asyncio.Lock | None = None

    # --- state and queues -------------------------------------------------------------------------

    @property
    def is_streaming(self) -> bool:
        """True while a run is in progress (streaming, running tools or waiting to retry)."""
        return self._running

    @property
    def steering_queue(self) -> tuple[Any, ...]:
        return tuple(self._steering)

    @property
    def follow_up_queue(self) -> tuple[Any, ...]:
        return tuple(self._follow_up)

    def steer(self, message: Any) -> None:
        """Queue a message for delivery after the current tool batch (remaining calls are skipped)."""
        self._steering.append(_as_message(message))

    def follow_up(self, message: Any) -> None:
        """Queue a message for delivery when the agent would otherwise stop."""
        self._follow_up.append(_as_message(message))

    def clear_queues(self) -> tuple[list[Any], list[Any]]:
        """Empty both queues; returns ``(steering, follow_up)`` so a UI can restore their text."""
        steering, follow_up = list(self._steering), list(self._follow_up)
        self._steering.clear()
        self._follow_up.clear()
        return steering, follow_up

    def _take(self, queue: deque[Any], mode: QueueMode) -> list[Any]:
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.popleft()]

    def _take_steering(self) -> list[Any]:
        return self._take(self._steering, self.steering_mode)

    def _take_follow_up(self) -> list[Any]:
        return self._take(self._follow_up, self.follow_up_mode)

    # --- events -----------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for every event (awaited if it returns an awaitable). Returns an unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def _emit(self, event: AgentEvent) -> None:
        # One event at a time, every listener in subscription order, even when concurrent tools emit.
        lock = self._emit_lock or asyncio.Lock()
        self._emit_lock = lock
        async with lock:
            for listener in list(self._listeners):
                try:
                    outcome = listener(event)
                    if inspect.isawaitable(outcome):
                        await outcome
                except Exception as exc:
                    self._report(f"listener for {event.type}", exc)

    def _report(self, where: str, exc: BaseException) -> None:
        if self.on_error is not None:
            try:
                self.on_error(where, exc)
                return
            except Exception:
                log.exception("on_error reporter failed")
        log.error("agent: %s failed: %s", where, exc, exc_info=exc)

    # --- control ----------------------------------------------------------------------------------

    def abort(self) -> None:
        """Abort the current run (no-op when idle). Queued messages stay queued."""
        if self._signal is not None:
            self._signal.abort()

    async def wait_for_idle(self) -> None:
        """Return when no run is in progress."""
        if self._idle is not None:
            await asyncio.shield(self._idle)

    async def prompt(self, messages: Any) -> None:
        """Run the loop with new input: a string, a message, or a list of messages.

        Returns when the run is over (including retries and follow-ups).

        Raises:
            AgentBusyError: A run is already in progress.
        """
        if self._running:
            raise AgentBusyError(
                "The agent is already running; queue the message with steer() or follow_up()"
            )
        items = messages if isinstance(messages, list | tuple) else [messages]
        inputs = [_as_message(m) for m in items]
        if not inputs:
            raise ValueError("prompt() needs at least one message")
        await self._run(inputs)

    async def continue_(self) -> None:
        """Run the loop from the current history without new input (e.g. after a fix-up or a restart).

        Raises:
            AgentBusyError: A run is already in progress.
            AgentStateError: The history is empty, or ends with a completed assistant answer and nothing is
                queued.
        """
        if self._running:
            raise AgentBusyError("The agent is already running")
        if not self.messages:
            raise AgentStateError("Cannot continue: there are no messages")
        last = self.messages[-1]
        if isinstance(last, AssistantMessage) and last.stop_reason not in ("error", "aborted"):
            queued = self._take_steering() or self._take_follow_up()
            if not queued:
                raise AgentStateError("Cannot continue from an assistant message; send a prompt instead")
            await self._run(queued)
            return
        await self._run([])

    async def _run(self, inputs: list[Any]) -> None:
        self._running = True
        self._signal = AbortSignal()
        self._idle = asyncio.get_running_loop().create_future()
        self._emit_lock = asyncio.Lock()
        run = _Run(self, self._signal)
        try:
            await run.execute(inputs)
        except asyncio.CancelledError:
            self._signal.abort()
            raise
        finally:
            self._running = False
            self._signal = None
            self.stream_message = None
            if not self._idle.done():
                self._idle.set_result(None)

    # --- request assembly -------------------------------------------------------------------------

    async def build_default_request(self, messages: list[Any], signal: AbortSignal) -> LlmRequest:
        """The default request: ``transform_context`` → `convert_to_llm` → `transform_messages`.

        Public so a custom ``build_request`` can start from it.
        """
        if self.transform_context is not None:
            messages = await self.transform_context(list(messages), signal)
        llm_messages = transform_messages(convert_to_llm(messages, block_images=self.block_images))
        return LlmRequest(
            system_prompt=self.system_prompt,
            messages=llm_messages,
            tools=[tool.definition() for tool in self.tools],
        )

    async def _request_options(self, signal: AbortSignal) -> StreamOptions:
        api_key = self.stream_options.api_key
        if self.get_api_key is not None:
            api_key = await self.get_api_key(self.model.provider) or api_key
        return dataclasses.replace(
            self.stream_options, signal=signal, thinking=self.thinking, api_key=api_key
        )


def _default_stream_fn() -> StreamFn:
    # Imported lazily: the registry pulls in provider SDKs, which the loop itself never needs.
    from pi_tui.ai.registry import stream

    return stream  # type: ignore[no-any-return]


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


def retry_delay_ms(config: RetryConfig, attempt: int, message: AssistantMessage) -> int | None:
    """Delay before retry ``attempt`` (1-based), or None when the provider asks for longer than the cap."""
    hint = _retry_after_ms(message)
    if hint is not None:
        if config.max_delay_ms > 0 and hint > config.max_delay_ms:
            return None
        return max(0, hint)
    delay = config.base_delay_ms * 2 ** (attempt - 1)
    return min(delay, config.max_delay_ms) if config.max_delay_ms > 0 else delay


_TurnOutcome = Literal["tools", "stop", "end"]


class _Run:
    """The state of one run: its new messages, turn counter and retry bookkeeping."""

    def __init__(self, agent: Agent, signal: AbortSignal) -> None:
        self.agent = agent
        self.signal = signal
        self.emit = agent._emit
        self.new_messages: list[Any] = []
        self.turn_index = 0
        self.retry_attempt = 0
        self.overflow_recovered = False

    async def execute(self, inputs: list[Any]) -> None:
        await self.emit(AgentStart())
        try:
            await self._loop(inputs)
        except Exception as exc:  # a bug or a broken hook: end the run with a visible error, not a crash
            log.exception("agent run failed")
            failure = self._error_message(f"Agent loop failed: {exc}")
            await self.emit(MessageStart(failure))
            await self.finalize(failure)
        await self.emit(AgentEnd(tuple(self.new_messages)))

    async def _loop(self, inputs: list[Any]) -> None:
        pending = list(inputs) + self.agent._take_steering()
        while True:
            more_tools = True
            while more_tools or pending:
                for message in pending:
                    await self.emit(MessageStart(message))
                    await self.finalize(message)
                pending = []
                outcome, steering = await self._turn()
                if outcome == "end":
                    return
                more_tools = outcome == "tools"
                pending = steering or self.agent._take_steering()
            pending = self.agent._take_follow_up()
            if not pending:
                return

    async def finalize(self, message: Any) -> Any:
        """Run the message hook, append to the history, emit message_end (awaiting listeners)."""
        hook = self.agent.message_end_hook
        if hook is not None:
            try:
                replacement = await hook(message)
                if replacement is not None:
                    if getattr(replacement, "role", None) != getattr(message, "role", None):
                        raise TypeError("the message hook may not change a message's role")
                    message = replacement
            except Exception as exc:
                self.agent._report("message_end_hook", exc)
        self.agent.messages.append(message)
        self.new_messages.append(message)
        await self.emit(MessageEnd(message))
        return message

    def _forget(self, message: Any) -> None:
        """Take a (retried) message out of the history and this run's output; it stays persisted."""
        for bucket in (self.agent.messages, self.new_messages):
            for i in range(len(bucket) - 1, -1, -1):
                if bucket[i] is message:
                    del bucket[i]
                    break

    def _remember(self, message: Any) -> None:
        self.agent.messages.append(message)
        self.new_messages.append(message)

    # --- one turn ---------------------------------------------------------------------------------

    async def _turn(self) -> tuple[_TurnOutcome, list[Any]]:
        while True:
            index = self.turn_index
            self.turn_index += 1
            await self.emit(TurnStart(index))
            message = await self._request()
            if message.stop_reason == "aborted" or (message.stop_reason == "error" and self.signal.aborted):
                await self.emit(TurnEnd(index, message, ()))
                return "end", []
            if message.stop_reason == "error":
                if await self._recover(message, index):
                    continue
                return "end", []

            if self.retry_attempt > 0:
                await self.emit(AutoRetryEnd(success=True, attempt=self.retry_attempt))
                self.retry_attempt = 0
            self.overflow_recovered = False

            if not message.tool_calls():
                await self.emit(TurnEnd(index, message, ()))
                return "stop", []
            batch = ToolBatch(
                assistant_message=message,
                tools=list(self.agent.tools),
                signal=self.signal,
                emit=self.emit,
                finalize=self._finalize_result,
                take_steering=self.agent._take_steering,
                messages=tuple(self.agent.messages),
                before_tool_call=self.agent.before_tool_call,
                after_tool_call=self.agent.after_tool_call,
                mode=self.agent.tool_execution,
                abort_grace_s=self.agent.abort_grace_s,
            )
            if message.stop_reason == "length":
                outcome = await fail_truncated_tool_calls(batch)
            else:
                outcome = await run_tool_batch(batch)
            await self.emit(TurnEnd(index, message, tuple(outcome.results)))
            if self.signal.aborted:
                # Keep what the user queued for the next run rather than losing it.
                self.agent._steering.extendleft(reversed(outcome.steering))
                return "end", []
            return "tools", outcome.steering

    async def _finalize_result(self, message: Any) -> Any:
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
                agent._report("on_context_overflow", exc)
                fixed = False
            if fixed and not self.signal.aborted:
                self.overflow_recovered = True
                return True
            self._remember(message)
            await self._end_retry_chain(message)
            return False

        config = agent.retry
        attempt = self.retry_attempt + 1
        delay = retry_delay_ms(config, attempt, message) if attempt <= config.max_retries else None
        if not (config.enabled and is_retryable_error(message, window)) or delay is None:
            await self.emit(TurnEnd(index, message, ()))
            await self._end_retry_chain(message)
            return False

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
            options = await agent._request_options(self.signal)
            stream_fn = agent.stream_fn or _default_stream_fn()
        except Exception as exc:
            log.warning("request preparation failed", exc_info=True)
            failure = self._error_message(f"Request preparation failed: {exc}")
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


async def _close(iterator: Any) -> None:
    close = getattr(iterator, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:  # closing a broken provider stream must not mask the outcome
        log.debug("closing the provider stream failed", exc_info=True)
