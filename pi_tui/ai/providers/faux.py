"""``faux``: a scripted in-process model that needs no key and no network.

Two ways to use it:

- **Scripted** (tests): queue responses on a `FauxScript` and pass ``script.stream`` as the agent's
  stream function, or install the script for the ``faux`` provider with `set_faux_script`::

      script = FauxScript(
          faux_reply(faux_tool_call("read", {"path": "a.txt"}, id="call_1")),
          faux_reply("The file says hello."),
      )
      agent = Agent(model=FAUX_MODEL, stream_fn=script.stream)

  Every request is recorded in ``script.requests``. A step may also be a callable
  ``(FauxCall) -> FauxResponse`` (sync or async) that answers from the request.

- **Default** (no script installed): a deterministic demo answer that says it is the faux provider.
  ``read <path>`` produces a ``read`` tool call and ``run <command>`` a ``bash`` call when those tools
  are offered, so ``pi-tui --provider faux -p "hi"`` does something sensible offline.

The stream honours the contract of `pi_tui.ai.stream`: it never raises, emits ``start``, per-block
start/delta/end events, and ends with exactly one ``done`` or ``error`` event. Usage is estimated at
four characters per token.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_tui.ai.catalog import FAUX_PROVIDER, faux_model
from pi_tui.ai.stream import (
    AbortedError,
    Done,
    Error,
    LlmRequest,
    StreamEvent,
    StreamOptions,
    StreamStart,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from pi_tui.ai.tokens import estimate_tokens
from pi_tui.ai.types import (
    AssistantMessage,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_text,
)
from pi_tui.util.json_types import JsonObject

__all__ = [
    "FAUX_API",
    "FAUX_PROVIDER",
    "FAUX_MODEL",
    "FauxBlock",
    "FauxCall",
    "FauxResponse",
    "FauxStep",
    "FauxScript",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "faux_reply",
    "faux_error",
    "set_faux_script",
    "get_faux_script",
    "default_faux_response",
    "stream_faux",
    "estimate_tokens",
]

FAUX_API = "faux"
FAUX_MODEL = faux_model()
"""The faux provider's model, the catalog's entry (one context window, one place)."""

ABORTED_TEXT = "Operation aborted"

FauxBlock = TextContent | ThinkingContent | ToolCall


def _new_call_id() -> str:
    """A tool-call id no other call of the session has, on any branch and after a restart."""
    return f"faux_call_{secrets.token_hex(6)}"


@dataclass(slots=True)
class FauxResponse:
    """One scripted answer.

    Attributes:
        content: The blocks to stream, in order.
        stop_reason: Defaults to ``toolUse`` when there are tool calls, else ``stop``; ``error`` when
            ``error_message`` is set.
        error_message: Ends the stream with an ``error`` event after streaming ``content``.
        usage: Reported usage; by default estimated at 4 characters per token.
        chunk_size: Characters per delta; by default each block is split into about three deltas.
        delay: Seconds to wait before each delta (abortable), to make a slow model.
        retry_after_ms: Attached to an error message as the provider's retry hint.
    """

    content: list[FauxBlock] = field(default_factory=list)
    stop_reason: StopReason | None = None
    error_message: str | None = None
    usage: Usage | None = None
    chunk_size: int | None = None
    delay: float = 0.0
    retry_after_ms: int | None = None


@dataclass(frozen=True, slots=True)
class FauxCall:
    """What a callable script step receives."""

    model: Model
    request: LlmRequest
    options: StreamOptions
    index: int
    """0-based number of this request on the script."""


FauxStep = FauxResponse | Callable[[FauxCall], FauxResponse | Awaitable[FauxResponse]]


def faux_text(text: str) -> TextContent:
    return TextContent(text=text)


def faux_thinking(thinking: str) -> ThinkingContent:
    return ThinkingContent(thinking=thinking)


def faux_tool_call(name: str, arguments: JsonObject | None = None, *, id: str | None = None) -> ToolCall:
    """A tool call block; without ``id`` a fresh, unique ``faux_call_…`` id is used."""
    return ToolCall(id=id or _new_call_id(), name=name, arguments=dict(arguments or {}))


def faux_reply(*blocks: str | FauxBlock, **options: Any) -> FauxResponse:
    """A response from blocks; plain strings become text blocks. ``options`` are `FauxResponse` fields."""
    content: list[FauxBlock] = [faux_text(b) if isinstance(b, str) else b for b in blocks]
    return FauxResponse(content=content, **options)


def faux_error(
    message: str, *partial: str | FauxBlock, retry_after_ms: int | None = None, **options: Any
) -> FauxResponse:
    """A failed response: streams ``partial`` (if any), then ends with ``stop_reason="error"``."""
    response = faux_reply(*partial, **options)
    response.stop_reason = "error"
    response.error_message = message
    response.retry_after_ms = retry_after_ms
    return response


class FauxScript:
    """A queue of scripted responses, consumed one per request.

    ``script.stream`` is a `pi_tui.ai.stream.StreamFn`. When the queue is empty, a request ends with an
    error (``Faux script exhausted …``) so a test that under-scripts fails loudly.
    """

    def __init__(self, *steps: FauxStep) -> None:
        self._steps: deque[FauxStep] = deque(steps)
        self.requests: list[LlmRequest] = []
        self.options: list[StreamOptions] = []

    def add(self, *steps: FauxStep) -> FauxScript:
        self._steps.extend(steps)
        return self

    def replace(self, steps: Iterable[FauxStep]) -> None:
        self._steps = deque(steps)

    @property
    def pending(self) -> int:
        return len(self._steps)

    @property
    def call_count(self) -> int:
        return len(self.requests)

    async def next_response(self, model: Model, request: LlmRequest, options: StreamOptions) -> FauxResponse:
        index = len(self.requests)
        self.requests.append(request)
        self.options.append(options)
        if not self._steps:
            return faux_error(f"Faux script exhausted: no scripted response for request #{index + 1}")
        step = self._steps.popleft()
        if isinstance(step, FauxResponse):
            return step
        answer = step(FauxCall(model=model, request=request, options=options, index=index))
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    async def stream(
        self, model: Model, request: LlmRequest, options: StreamOptions
    ) -> AsyncIterator[StreamEvent]:
        try:
            response = await self.next_response(model, request, options)
        except Exception as exc:  # a failing responder must still end the stream properly
            response = faux_error(f"Faux responder failed: {exc}")
        async for event in _stream_response(model, request, options, response):
            yield event


_installed: FauxScript | None = None


def set_faux_script(script: FauxScript | None) -> FauxScript | None:
    """Install ``script`` for `stream_faux` (``None`` restores the default demo answers).

    Returns:
        The previously installed script, so a caller can restore it.
    """
    global _installed
    previous, _installed = _installed, script
    return previous


def get_faux_script() -> FauxScript | None:
    return _installed


async def stream_faux(
    model: Model, request: LlmRequest, options: StreamOptions
) -> AsyncIterator[StreamEvent]:
    """The ``faux`` provider's stream function.

    Answers from the installed `FauxScript`, or with `default_faux_response` when none is installed.
    """
    script = _installed
    if script is not None:
        async for event in script.stream(model, request, options):
            yield event
        return
    response = default_faux_response(model, request, options)
    async for event in _stream_response(model, request, options, response):
        yield event


# --- the default demo responder -------------------------------------------------------------------

_READ_RE = re.compile(r"^(?:please\s+)?(?:read|open|cat|show)\s+(?:the\s+file\s+)?(\S+)\s*$", re.IGNORECASE)
_RUN_RE = re.compile(r"^(?:please\s+)?(?:run|bash|exec)\s+(.+)$", re.IGNORECASE | re.DOTALL)
_PREVIEW_LINES = 10


# The tool the harness shows context panels under (`pi_tui.context.panels.PANEL_TOOL_NAME`). Panels placed
# after the conversation end the request with a call/result pair of it that no model asked for.
_PANEL_TOOL = "dynamic_panel"


def _is_panel_message(message: Any) -> bool:
    if isinstance(message, ToolResultMessage):
        return message.tool_name == _PANEL_TOOL
    if isinstance(message, AssistantMessage):
        calls = [block for block in message.content if isinstance(block, ToolCall)]
        return bool(calls) and all(call.name == _PANEL_TOOL for call in calls)
    return False


def _conversation(messages: list[Any]) -> list[Any]:
    """``messages`` without the panels shown after them: what the answer is about, as for a real model."""
    end = len(messages)
    while end and _is_panel_message(messages[end - 1]):
        end -= 1
    return messages[:end]


def default_faux_response(model: Model, request: LlmRequest, options: StreamOptions) -> FauxResponse:
    """The deterministic answer used when no script is installed (panels after the conversation are read
    past: the answer is to the last prompt or tool result, as a real model's is)."""
    messages = _conversation(list(request.messages))
    last = messages[-1] if messages else None
    tools = {t.name for t in request.tools}

    if isinstance(last, ToolResultMessage):
        return faux_reply(_summarize_tool_results(messages))

    prompt = message_text(last).strip() if isinstance(last, UserMessage) else ""
    blocks: list[FauxBlock] = []
    if options.thinking != "off" and model.reasoning:
        blocks.append(
            faux_thinking(f"The user wrote {_quote(prompt)}. I am the faux provider: a canned answer.")
        )

    read = _READ_RE.match(prompt)
    if read and "read" in tools:
        path = read.group(1).strip("'\"`")
        blocks += [faux_text(f"Reading {path}."), faux_tool_call("read", {"path": path})]
        return FauxResponse(content=blocks)
    run = _RUN_RE.match(prompt)
    if run and "bash" in tools:
        command = run.group(1).strip().strip("`")
        blocks += [
            faux_text("Running it."),
            faux_tool_call("bash", {"command": command}),
        ]
        return FauxResponse(content=blocks)

    if not prompt:
        blocks.append(faux_text("Hello! I'm the faux provider, an offline stand-in model. Say something."))
        return FauxResponse(content=blocks)
    hints = []
    if "read" in tools:
        hints.append("“read <path>”")
    if "bash" in tools:
        hints.append("“run <command>”")
    hint = f" Try {' or '.join(hints)} to see a tool call." if hints else ""
    text = (
        "Hello! I'm the faux provider, a scripted offline stand-in for a real model, so this answer is "
        f"canned. You said: {_quote(prompt)}.{hint}"
    )
    blocks.append(faux_text(text))
    return FauxResponse(content=blocks)


def _quote(text: str, limit: int = 200) -> str:
    one_line = " ".join(text.split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    return f"“{one_line}”"


def _summarize_tool_results(messages: list[Any]) -> str:
    results: list[ToolResultMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolResultMessage):
            break
        results.append(message)
    parts = []
    for result in reversed(results):
        text = message_text(result)
        if result.is_error:
            first = text.strip().splitlines()[0] if text.strip() else "(no message)"
            parts.append(f"The `{result.tool_name}` tool failed: {first}")
            continue
        lines = text.splitlines()
        preview = "\n".join(lines[:_PREVIEW_LINES])
        more = f"\n… ({len(lines) - _PREVIEW_LINES} more lines)" if len(lines) > _PREVIEW_LINES else ""
        noun = "line" if len(lines) == 1 else "lines"
        parts.append(
            f"The `{result.tool_name}` tool returned {len(lines)} {noun}:\n```\n{preview}{more}\n```"
        )
    return "\n\n".join(parts) + "\n\n(That was the faux provider; no real model looked at it.)"


# --- streaming ------------------------------------------------------------------------------------


def _request_chars(request: LlmRequest) -> int:
    total = len(request.system_prompt)
    for message in request.messages:
        content = message.content
        if isinstance(content, str):
            total += len(content)
            continue
        for block in content:
            if isinstance(block, TextContent):
                total += len(block.text)
            elif isinstance(block, ThinkingContent):
                total += len(block.thinking)
            elif isinstance(block, ToolCall):
                total += len(block.name) + len(json.dumps(block.arguments))
            elif isinstance(block, ImageContent):
                total += 4800  # an image counts as about 1200 tokens
    for tool in request.tools:
        total += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return total


def _output_chars(content: list[FauxBlock]) -> int:
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += len(block.text)
        elif isinstance(block, ThinkingContent):
            total += len(block.thinking)
        else:
            total += len(block.name) + len(json.dumps(block.arguments))
    return total


def _chunks(text: str, size: int | None) -> list[str]:
    if not text:
        return []
    if size is None or size <= 0:
        size = max(1, math.ceil(len(text) / 3))
    return [text[i : i + size] for i in range(0, len(text), size)]


async def _stream_response(
    model: Model, request: LlmRequest, options: StreamOptions, response: FauxResponse
) -> AsyncIterator[StreamEvent]:
    signal = options.signal
    partial = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
    input_tokens = math.ceil(_request_chars(request) / 4)

    def snapshot() -> AssistantMessage:
        return partial.model_copy(deep=True)

    def usage() -> Usage:
        if response.usage is not None:
            return response.usage.model_copy(deep=True)
        output = math.ceil(_output_chars(list(partial.content)) / 4)
        return Usage(input=input_tokens, output=output, total_tokens=input_tokens + output)

    def aborted() -> Error:
        partial.stop_reason = "aborted"
        partial.error_message = ABORTED_TEXT
        partial.usage = usage()
        return Error(reason="aborted", error=snapshot())

    async def pause() -> bool:
        """Wait the scripted delay; True when the request was aborted meanwhile."""
        if signal is None:
            if response.delay > 0:
                await asyncio.sleep(response.delay)
            return False
        try:
            await signal.sleep(response.delay)
        except AbortedError:
            return True
        return signal.aborted

    if signal is not None and signal.aborted:
        yield aborted()
        return
    yield StreamStart(partial=snapshot())

    for block in response.content:
        index = len(partial.content)
        if isinstance(block, TextContent):
            current = TextContent(text="")
            partial.content.append(current)
            yield TextStart(content_index=index, partial=snapshot())
            for piece in _chunks(block.text, response.chunk_size):
                if await pause():
                    yield aborted()
                    return
                current.text += piece
                yield TextDelta(content_index=index, delta=piece, partial=snapshot())
            yield TextEnd(content_index=index, content=current.text, partial=snapshot())
        elif isinstance(block, ThinkingContent):
            thinking = ThinkingContent(thinking="", thinking_signature=block.thinking_signature)
            partial.content.append(thinking)
            yield ThinkingStart(content_index=index, partial=snapshot())
            for piece in _chunks(block.thinking, response.chunk_size):
                if await pause():
                    yield aborted()
                    return
                thinking.thinking += piece
                yield ThinkingDelta(content_index=index, delta=piece, partial=snapshot())
            yield ThinkingEnd(content_index=index, content=thinking.thinking, partial=snapshot())
        else:
            call = ToolCall(id=block.id, name=block.name, arguments={})
            partial.content.append(call)
            yield ToolCallStart(content_index=index, partial=snapshot())
            for piece in _chunks(json.dumps(block.arguments), response.chunk_size):
                if await pause():
                    yield aborted()
                    return
                yield ToolCallDelta(content_index=index, delta=piece, partial=snapshot())
            call.arguments = json.loads(json.dumps(block.arguments))
            yield ToolCallEnd(content_index=index, tool_call=call.model_copy(deep=True), partial=snapshot())

    if signal is not None and signal.aborted:
        yield aborted()
        return
    partial.usage = usage()
    if response.error_message is not None or response.stop_reason in ("error", "aborted"):
        partial.stop_reason = "aborted" if response.stop_reason == "aborted" else "error"
        partial.error_message = response.error_message or "Faux provider error"
        if response.retry_after_ms is not None:
            # An extra field (camelCase, like the rest of the message) the agent loop's auto-retry reads.
            setattr(partial, "retryAfterMs", response.retry_after_ms)  # noqa: B010
        reason: Literal["error", "aborted"] = "aborted" if partial.stop_reason == "aborted" else "error"
        yield Error(reason=reason, error=snapshot())
        return
    stop: StopReason = response.stop_reason or ("toolUse" if partial.tool_calls() else "stop")
    partial.stop_reason = stop
    done_reason = stop if stop in ("stop", "length", "toolUse") else "stop"
    yield Done(reason=done_reason, message=snapshot())
