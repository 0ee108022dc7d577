"""The agent turn loop: request → stream → tools → steering/follow-up, repeat.

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
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from pi_tui.ai.stream import AbortSignal, LlmRequest, StreamFn, StreamOptions
from pi_tui.ai.types import AssistantMessage, Message, Model, ThinkingLevel, UserMessage
from pi_tui.util.tasks import stray_cancellation

from .convert import convert_to_llm, transform_messages
from .events import AgentEvent
from .hooks import (
    AfterToolCallFn,
    ApiKeyFn,
    BeforeToolCallFn,
    BuildRequestFn,
    ContextOverflowFn,
    FinishResultFn,
    MessageHookFn,
    QueueMode,
    RetryConfig,
    ToolExecutionMode,
    TransformContextFn,
)
from .run import RETRY_CANCELLED_TEXT, AgentRun, retry_delay_ms
from .tool import AgentTool

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


class AgentBusyError(RuntimeError):
    """``prompt()``/``continue_()`` while a run is in progress; queue with ``steer``/``follow_up`` instead."""


class AgentStateError(RuntimeError):
    """The history does not allow the requested operation (e.g. ``continue_()`` after an answer)."""


def _as_message(message: str | Message) -> Message:
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
        finish_tool_result: Runs last on every executed call's result, after ``after_tool_call``.
        message_end_hook: The ``message`` hook on every finalized message.
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
        messages: Sequence[Message] = (),
        thinking: ThinkingLevel = "off",
        stream_options: StreamOptions | None = None,
        stream_fn: StreamFn | None = None,
        transform_context: TransformContextFn | None = None,
        build_request: BuildRequestFn | None = None,
        before_tool_call: BeforeToolCallFn | None = None,
        after_tool_call: AfterToolCallFn | None = None,
        finish_tool_result: FinishResultFn | None = None,
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
        self.messages: list[Message] = list(messages)
        self.thinking: ThinkingLevel = thinking
        self.stream_options = stream_options or StreamOptions()
        self.stream_fn = stream_fn
        self.transform_context = transform_context
        self.build_request = build_request
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.finish_tool_result = finish_tool_result
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
        self._steering: deque[Message] = deque()
        self._follow_up: deque[Message] = deque()
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
    def steering_queue(self) -> tuple[Message, ...]:
        return tuple(self._steering)

    @property
    def follow_up_queue(self) -> tuple[Message, ...]:
        return tuple(self._follow_up)

    def steer(self, message: str | Message) -> None:
        """Queue a message for delivery after the current tool batch (remaining calls are skipped)."""
        self._steering.append(_as_message(message))

    def follow_up(self, message: str | Message) -> None:
        """Queue a message for delivery when the agent would otherwise stop."""
        self._follow_up.append(_as_message(message))

    def clear_queues(self) -> tuple[list[Message], list[Message]]:
        """Empty both queues; returns ``(steering, follow_up)`` so a UI can restore their text."""
        steering, follow_up = list(self._steering), list(self._follow_up)
        self._steering.clear()
        self._follow_up.clear()
        return steering, follow_up

    def _take(self, queue: deque[Message], mode: QueueMode) -> list[Message]:
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.popleft()]

    def take_steering(self) -> list[Message]:
        """Take the queued steering messages the next turn gets (one, or all by ``steering_mode``)."""
        return self._take(self._steering, self.steering_mode)

    def take_follow_up(self) -> list[Message]:
        """Take the queued follow-up messages a finished run continues with (by ``follow_up_mode``)."""
        return self._take(self._follow_up, self.follow_up_mode)

    # --- events -----------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for every event (awaited if it returns an awaitable). Returns an unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def emit(self, event: AgentEvent) -> None:
        """Hand ``event`` to every listener, in subscription order (awaited; a failing listener is
        reported and the others still run)."""
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
                    self.report(f"listener for {event.type}", exc)
                except asyncio.CancelledError as exc:
                    # A listener's own stray cancellation must not end the run and drop what is queued.
                    if not stray_cancellation():
                        raise
                    self.report(f"listener for {event.type}", exc)

    def report(self, where: str, exc: BaseException) -> None:
        """Report a survivable failure (a listener, a hook) to ``on_error``, or log it."""
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

    async def prompt(self, messages: str | Message | list[str | Message] | tuple[str | Message, ...]) -> None:
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
            queued = self.take_steering() or self.take_follow_up()
            if not queued:
                raise AgentStateError("Cannot continue from an assistant message; send a prompt instead")
            await self._run(queued)
            return
        await self._run([])

    async def _run(self, inputs: list[Message]) -> None:
        self._running = True
        self._signal = AbortSignal()
        self._idle = asyncio.get_running_loop().create_future()
        self._emit_lock = asyncio.Lock()
        run = AgentRun(self, self._signal)
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

    async def build_default_request(self, messages: list[Message], signal: AbortSignal) -> LlmRequest:
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
            paired=True,
        )

    async def request_options(self, signal: AbortSignal) -> StreamOptions:
        """The stream options of one request: the agent's, with ``signal``, the thinking level and the key."""
        api_key = self.stream_options.api_key
        if self.get_api_key is not None:
            api_key = await self.get_api_key(self.model.provider) or api_key
        return dataclasses.replace(
            self.stream_options, signal=signal, thinking=self.thinking, api_key=api_key
        )
