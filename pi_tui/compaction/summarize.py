"""The summarisation call: through the session's own model, key and stream function.

**Prefix form** (default). The request is the session's current request — its system prompt, tools and
cached messages exactly as the last request sent them — plus one user message asking for the checkpoint
(`pi_tui.compaction.prompts.prefix_request_text`). Everything but that message is a prefix the provider
has just cached, so the summary costs little more than its own output.

**Standalone form** (pi's). A summariser system prompt and the serialised conversation in
``<conversation>`` tags. Used only when the prefix form would not fit the context window (after an
overflow, typically), or when the provider rejects the prefix form as too long.

A split turn gets two summaries — the history and the early part of the turn — requested in parallel and
joined as pi does. File lists are appended to the result.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.agent.convert import convert_to_llm
from pi_tui.agent.serialize import describe_message, message_parts, part_count
from pi_tui.ai.errors import is_context_overflow
from pi_tui.ai.stream import AbortSignal, Done, Error, LlmRequest, StreamFn, StreamOptions
from pi_tui.ai.tokens import count_message_tokens, estimate_tokens
from pi_tui.ai.types import (
    AssistantMessage,
    LlmMessage,
    Message,
    Model,
    TextContent,
    ThinkingLevel,
    UserMessage,
)

from .errors import CompactionCancelled, CompactionError
from .file_ops import compute_file_lists, format_file_lists
from .prepare import CompactionPreparation
from .prompts import (
    CHECKPOINT_HEADING,
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    SUMMARIZER_SYSTEM_PROMPT,
    TURN_CHECKPOINT_HEADING,
    history_instructions,
    prefix_request_text,
    standalone_prompt,
    turn_prefix_instructions,
)

__all__ = [
    "SummaryBackend",
    "SummaryCall",
    "SummaryOutcome",
    "SummarizationFailed",
    "MIN_SUMMARY_TOKENS",
    "complete_text",
    "conversation_budget",
    "estimate_request_tokens",
    "summarize_compaction",
    "fit_conversation",
    "fit_messages",
]

log = logging.getLogger(__name__)

MIN_SUMMARY_TOKENS = 1024
"""The prefix form may shrink the output budget to fit the window, but not below this."""

_STANDALONE_SOURCE = "the conversation in <conversation> tags"
_PREFIX_SOURCE = "the conversation above"
_OMITTED = "[... {n} earlier parts of the conversation omitted to fit the summariser's context window ...]"


class SummarizationFailed(CompactionError):
    """The provider answered the summary request with an error; ``response`` is that answer."""

    def __init__(self, message: str, response: AssistantMessage | None = None) -> None:
        super().__init__(message)
        self.response = response


@dataclass(slots=True)
class SummaryBackend:
    """How to reach the session's model.

    Attributes:
        model: the session's model.
        stream_fn: the session's provider entry point.
        api_key: the key the session uses for ``model``.
        thinking: the session's thinking level (kept, so the provider cache still matches).
        session_id: sent like the session's own requests (OpenAI routes its prompt cache by it).
        base_request: the session's request without its request-only tail, as the provider last saw it;
            None forces the standalone form.
        prefix_tokens: the measured size of ``base_request`` (None: estimated from its text).
        count: a message's estimate; the session's remembering counter, so the messages the
            preparation already counted are not counted again for the request's size.
    """

    model: Model
    stream_fn: StreamFn
    api_key: str | None = None
    thinking: ThinkingLevel = "off"
    session_id: str | None = None
    base_request: LlmRequest | None = None
    prefix_tokens: int | None = None
    count: Callable[[Message], int] = count_message_tokens


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """One summarisation request: which form, what for, and the provider's answer (with its usage)."""

    purpose: str  # "history" | "turn_prefix" | "branch"
    form: str  # "prefix" | "standalone"
    response: AssistantMessage


@dataclass(slots=True)
class SummaryOutcome:
    summary: str
    read_files: list[str]
    modified_files: list[str]
    calls: list[SummaryCall] = field(default_factory=list)


def estimate_request_tokens(request: LlmRequest, count: Callable[[Message], int] = count_message_tokens) -> int:
    """chars/4 over the system prompt, the tool definitions and the messages (``count``: a message's)."""
    tools = sum(estimate_tokens(json.dumps(t.to_json_dict())) for t in request.tools)
    return estimate_tokens(request.system_prompt) + tools + sum(map(count, request.messages))


async def complete_text(
    backend: SummaryBackend,
    request: LlmRequest,
    *,
    max_tokens: int,
    signal: AbortSignal | None,
    what: str = "Summarization",
) -> AssistantMessage:
    """Stream one request to completion and return the final assistant message.

    Raises:
        CompactionCancelled: ``signal`` was aborted (or the provider reported an abort).
        SummarizationFailed: the provider answered with an error, or with no text.
    """
    if signal is not None and signal.aborted:
        raise CompactionCancelled()
    options = StreamOptions(
        api_key=backend.api_key,
        thinking=backend.thinking,
        max_tokens=max_tokens,
        session_id=backend.session_id,
        signal=signal,
    )
    final: AssistantMessage | None = None
    produced: Any = backend.stream_fn(backend.model, request, options)
    if inspect.isawaitable(produced):
        produced = await produced
    async for event in produced:
        if isinstance(event, Done):
            final = event.message
        elif isinstance(event, Error):
            final = event.error
    if (signal is not None and signal.aborted) or (final is not None and final.stop_reason == "aborted"):
        raise CompactionCancelled()
    if final is None:
        raise SummarizationFailed(f"{what} failed: the provider stream ended without an answer")
    if final.stop_reason == "error":
        raise SummarizationFailed(f"{what} failed: {final.error_message or 'unknown error'}", final)
    if not _text(final).strip():
        raise SummarizationFailed(f"{what} failed: the model returned no summary text", final)
    return final


def _text(message: AssistantMessage) -> str:
    return "\n".join(b.text for b in message.content if isinstance(b, TextContent))


def conversation_budget(window: int, max_tokens: int, template: str) -> int:
    """Tokens the serialised conversation may take in a standalone request: the window less the answer's
    ``max_tokens``, the summariser's system prompt, the rest of the user message (``template``, the
    prompt with its ``{conversation}`` placeholder) and a margin for the provider's framing."""
    fixed = estimate_tokens(SUMMARIZER_SYSTEM_PROMPT) + estimate_tokens(template) + 64
    return max(0, window - max_tokens - fixed)


def fit_conversation(parts: Sequence[str], budget_tokens: int) -> str:
    """Join serialised parts, dropping the oldest until the text fits ``budget_tokens`` (chars/4)."""
    sizes = [estimate_tokens(p) + 1 for p in parts]
    total = sum(sizes)
    start = 0
    while total > budget_tokens and start < len(parts) - 1:
        total -= sizes[start]
        start += 1
    kept = list(parts[start:])
    if start:
        kept.insert(0, _OMITTED.format(n=start))
    return "\n\n".join(kept)


def fit_messages(llm_messages: Sequence[LlmMessage], budget_tokens: int) -> str:
    """`fit_conversation` of the serialised ``llm_messages`` (after `convert_to_llm`), the same text, but
    only the newest parts that fit are serialised: the older ones are counted for the note, not made
    (a 20k-message history whose last few hundred fit cost ~0.1 s to serialise whole)."""
    kept: list[str] = []  # newest first
    total = 0
    index = len(llm_messages) - 1
    dropped = 0
    while index >= 0:
        parts = message_parts(llm_messages[index])
        for n in range(len(parts) - 1, -1, -1):
            size = estimate_tokens(parts[n]) + 1
            if kept and total + size > budget_tokens:
                dropped = n + 1  # this part and the ones before it in the same message
                break
            kept.append(parts[n])
            total += size
        else:
            index -= 1
            continue
        break
    if index >= 0:
        dropped += sum(map(part_count, llm_messages[:index]))
    kept.reverse()
    if dropped:
        kept.insert(0, _OMITTED.format(n=dropped))
    return "\n\n".join(kept)


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


class _Planner:
    """Builds and sends the requests of one compaction, choosing the form per request."""

    def __init__(self, backend: SummaryBackend, signal: AbortSignal | None) -> None:
        self.backend = backend
        self.signal = signal
        self.calls: list[SummaryCall] = []
        base = backend.base_request
        self.boundary = 0
        if base is not None:
            self.boundary = len(base.messages) if base.cache_boundary is None else base.cache_boundary
        # The estimate of the cached prefix, counted as far as a decision needs: the sum so far and how
        # many of its messages it holds (None: the system prompt and tools are not counted yet).
        self._estimate: int | None = None
        self._counted = 0

    def _prefix_tokens(self, limit: int) -> int:
        """The prefix's size: the measured one (usage) is the better figure, but never trust less than
        the estimate. Exact up to ``limit``; above it, some figure above ``limit`` (the estimate stops
        counting there: a prefix that cannot fit need not be counted to its end)."""
        measured = self.backend.prefix_tokens or 0
        base = self.backend.base_request
        if measured > limit or base is None:
            return measured
        if self._estimate is None:
            tools = sum(estimate_tokens(json.dumps(t.to_json_dict())) for t in base.tools)
            self._estimate = estimate_tokens(base.system_prompt) + tools
        count, messages = self.backend.count, base.messages
        while self._estimate <= limit and self._counted < self.boundary:
            end = min(self.boundary, self._counted + 512)
            self._estimate += sum(map(count, messages[self._counted : end]))
            self._counted = end
        return max(measured, self._estimate)

    def prefix_budget(self, instruction: str, max_tokens: int) -> int | None:
        """The output budget the prefix form can have, or None when it does not fit the window."""
        if self.backend.base_request is None:
            return None
        floor = min(max_tokens, MIN_SUMMARY_TOKENS)
        fixed = estimate_tokens(instruction) + 16
        window = self.backend.model.context_window
        room = window - self._prefix_tokens(window - fixed - floor) - fixed
        if room >= max_tokens:
            return max_tokens
        return room if room >= floor else None

    async def run(
        self,
        purpose: str,
        prefix_text: str,
        standalone_text: str,
        standalone_messages: Callable[[], Sequence[LlmMessage]],
        max_tokens: int,
    ) -> str:
        """One summary request: the prefix form (the session's own request plus the instruction, read
        from the prompt cache) when it fits, else the standalone form, whose conversation text is made
        only then, from ``standalone_messages`` (provider messages), of the newest that fit."""
        budget = self.prefix_budget(prefix_text, max_tokens)
        if budget is not None:
            base = self.backend.base_request
            assert base is not None
            request = LlmRequest(
                system_prompt=base.system_prompt,
                messages=[*base.messages[: self.boundary], _user(prefix_text)],
                tools=list(base.tools),
                cache_boundary=self.boundary,
            )
            try:
                response = await complete_text(self.backend, request, max_tokens=budget, signal=self.signal)
                self.calls.append(SummaryCall(purpose, "prefix", response))
                return _text(response)
            except SummarizationFailed as exc:
                window = self.backend.model.context_window
                if exc.response is None or not is_context_overflow(exc.response, window):
                    raise
                log.info("prefix-form summary overflowed; retrying in the standalone form")
        return await self._standalone(purpose, standalone_text, standalone_messages(), max_tokens)

    async def _standalone(
        self, purpose: str, instructions: str, messages: Sequence[LlmMessage], max_tokens: int
    ) -> str:
        budget = conversation_budget(self.backend.model.context_window, max_tokens, instructions)
        text = instructions.replace("{conversation}", fit_messages(messages, budget), 1)
        request = LlmRequest(system_prompt=SUMMARIZER_SYSTEM_PROMPT, messages=[_user(text)], tools=[])
        response = await complete_text(self.backend, request, max_tokens=max_tokens, signal=self.signal)
        self.calls.append(SummaryCall(purpose, "standalone", response))
        return _text(response)


async def _both(first: Awaitable[str], second: Awaitable[str]) -> tuple[str, str]:
    """Run two summaries in parallel; the first failure cancels the other and is raised."""
    tasks = [asyncio.ensure_future(first), asyncio.ensure_future(second)]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    failed = [error for t in done if not t.cancelled() and (error := t.exception()) is not None]
    if failed:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        raise failed[0]
    return tasks[0].result(), tasks[1].result()


def _converted(messages: Sequence[Message]) -> list[LlmMessage]:
    return convert_to_llm(list(messages))


def _kept_note(prep: CompactionPreparation) -> str:
    if not prep.kept_messages:
        return "The whole conversation above will be replaced by your checkpoint."
    first = describe_message(prep.kept_messages[0])
    return (
        f'Everything before the message "{first}" will be replaced by your checkpoint; that message and '
        "everything after it stay in the context word for word, so concentrate on the older part."
    )


async def summarize_compaction(
    prep: CompactionPreparation,
    backend: SummaryBackend,
    *,
    signal: AbortSignal | None = None,
    custom_instructions: str | None = None,
) -> SummaryOutcome:
    """Produce the summary text for ``prep`` (file lists included).

    Raises:
        CompactionCancelled: aborted.
        SummarizationFailed: the provider failed (``"Summarization failed: …"``).
    """
    reserve = prep.settings.reserve_tokens
    history_max = max(1, math.floor(0.8 * reserve))
    prefix_max = max(1, math.floor(0.5 * reserve))
    planner = _Planner(backend, signal)
    previous = prep.previous_summary
    update = bool(previous)

    async def history() -> str:
        if not prep.messages_to_summarize:
            return previous or NO_PRIOR_HISTORY
        if prep.is_split_turn and prep.turn_prefix_messages:
            turn_start = describe_message(prep.turn_prefix_messages[0])
            scope = (
                f'The current turn, which starts with the request "{turn_start}", is summarised separately. '
                "Your checkpoint covers everything before that request."
            )
        else:
            scope = _kept_note(prep)
        prefix_text = prefix_request_text(
            heading=CHECKPOINT_HEADING,
            scope=scope,
            instructions=history_instructions(
                update=update, source=_PREFIX_SOURCE, custom_instructions=custom_instructions
            ),
            previous_summary=previous,
        )
        standalone = standalone_prompt(
            "{conversation}",
            history_instructions(
                update=update, source=_STANDALONE_SOURCE, custom_instructions=custom_instructions
            ),
            previous,
        )
        return await planner.run(
            "history", prefix_text, standalone, lambda: _converted(prep.messages_to_summarize), history_max
        )

    async def turn_prefix() -> str:
        turn_start = describe_message(prep.turn_prefix_messages[0])
        scope = f'The current turn starts with the request "{turn_start}". ' + _kept_note(prep)
        prefix_text = prefix_request_text(
            heading=TURN_CHECKPOINT_HEADING,
            scope=scope,
            instructions=turn_prefix_instructions(_PREFIX_SOURCE),
        )
        standalone = standalone_prompt("{conversation}", turn_prefix_instructions(_STANDALONE_SOURCE))
        return await planner.run(
            "turn_prefix", prefix_text, standalone, lambda: _converted(prep.turn_prefix_messages), prefix_max
        )

    if prep.is_split_turn and prep.turn_prefix_messages:
        history_text, prefix_text = await _both(history(), turn_prefix())
        summary = f"{history_text}{SPLIT_TURN_SEPARATOR}{prefix_text}"
    else:
        summary = await history()
    read_files, modified_files = compute_file_lists(prep.file_ops)
    summary += format_file_lists(read_files, modified_files)
    return SummaryOutcome(summary, read_files, modified_files, planner.calls)
