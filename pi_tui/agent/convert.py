"""From the agent's history to what a provider may receive.

Two steps, both run before every provider request:

1. `convert_to_llm` maps every history message to a user/assistant/toolResult message, the way pi's
   ``convertToLlm`` does (custom, bash, summary messages become user text with pi's exact wrappers).
2. `transform_messages` makes the list replayable: errored/aborted assistant messages are dropped, and
   tool calls and tool results are paired the way the Anthropic and OpenAI APIs insist on (a synthetic
   ``No result provided`` error result for a call that has none; results that answer no call are dropped).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pi_tui.ai.types import (
    NOT_REPLAYED,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    LlmMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "IMAGES_BLOCKED_TEXT",
    "NO_RESULT_TEXT",
    "bash_execution_to_text",
    "convert_to_llm",
    "reaches_model",
    "transform_messages",
]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
IMAGES_BLOCKED_TEXT = "Image reading is disabled."
NO_RESULT_TEXT = "No result provided"


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """The user text pi sends for a ``!command`` the user ran."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code is not None and message.exit_code != 0:
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def _user_text(text: str, timestamp: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def _block_images(message: LlmMessage) -> LlmMessage:
    content = message.content
    if isinstance(content, str) or not any(isinstance(c, ImageContent) for c in content):
        return message
    replaced = [TextContent(text=IMAGES_BLOCKED_TEXT) if isinstance(c, ImageContent) else c for c in content]
    return message.model_copy(update={"content": replaced})


def reaches_model(message: object) -> bool:
    """Whether `convert_to_llm` sends ``message``: every history message but a user's shell command kept
    out of context (``!!cmd``, RPC ``bash`` with ``excludeFromContext``)."""
    return not (isinstance(message, BashExecutionMessage) and message.exclude_from_context)


# A tuple, not a union: `isinstance` with a tuple of classes is the faster test (once per history message).
_PASSED_THROUGH = (UserMessage, AssistantMessage, ToolResultMessage)


def convert_to_llm(messages: Iterable[object], *, block_images: bool = False) -> list[LlmMessage]:
    """Map history messages to provider messages (pi's ``convertToLlm``).

    Args:
        messages: Any history messages (`pi_tui.ai.types.Message`).
        block_images: Replace every image with the text ``Image reading is disabled.``
            (pi's ``images.blockImages`` setting).

    Returns:
        User, assistant and tool-result messages. user/assistant/toolResult messages are passed
        through as the same objects; bash executions marked ``exclude_from_context`` are dropped.
    """
    out: list[LlmMessage] = []
    for message in messages:
        converted: LlmMessage | None
        if isinstance(message, _PASSED_THROUGH):
            converted = message
        elif isinstance(message, BashExecutionMessage):
            converted = (
                _user_text(bash_execution_to_text(message), message.timestamp)
                if reaches_model(message)
                else None
            )
        elif isinstance(message, CustomMessage):
            content = (
                [TextContent(text=message.content)] if isinstance(message.content, str) else message.content
            )
            converted = UserMessage(content=list(content), timestamp=message.timestamp)
        elif isinstance(message, BranchSummaryMessage):
            converted = _user_text(
                BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX, message.timestamp
            )
        elif isinstance(message, CompactionSummaryMessage):
            converted = _user_text(
                COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX, message.timestamp
            )
        else:
            raise TypeError(f"convert_to_llm: not a history message: {type(message).__name__}")
        if converted is not None:
            if block_images and not isinstance(converted, AssistantMessage):
                converted = _block_images(converted)
            out.append(converted)
    return out


def _synthetic_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=NO_RESULT_TEXT)],
        is_error=True,
    )


def transform_messages(messages: Sequence[LlmMessage]) -> list[LlmMessage]:
    """Make a converted message list valid for any provider's tool-pairing rules.

    - Assistant messages with ``stop_reason`` ``error`` or ``aborted`` are dropped: they are incomplete
      turns (partial text, half-streamed tool calls) that must not be replayed.
    - Every tool call of a kept assistant message gets exactly one result right after it. A call without
      one gets a synthetic ``No result provided`` error result, inserted where the tool flow is
      interrupted (by the next user or assistant message, or the end of the list).
    - A tool result that answers no call of the immediately preceding assistant message (for example a
      result of a dropped aborted message, or a duplicate) is dropped.
    """
    out: list[LlmMessage] = []
    append = out.append
    # The open tool flow: the last kept assistant message (its calls, in order, give the synthetic
    # results) and the ids of its calls still awaiting a result (a set made once per message).
    opened: AssistantMessage | None = None
    unanswered: set[str] = set()
    for message in messages:
        if isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if call_id in unanswered:
                unanswered.discard(call_id)
                append(message)
            continue
        if unanswered:  # the flow is interrupted: each call left gets its synthetic result here
            out.extend(_synthetic_results(opened, unanswered))
            unanswered = set()
        if isinstance(message, AssistantMessage):
            if message.stop_reason in NOT_REPLAYED:
                continue
            opened = message
            unanswered = {part.id for part in message.content if isinstance(part, ToolCall)}
        append(message)
    if unanswered:
        out.extend(_synthetic_results(opened, unanswered))
    return out


def _synthetic_results(message: AssistantMessage | None, unanswered: set[str]) -> list[ToolResultMessage]:
    """The synthetic results of ``message``'s calls whose id is in ``unanswered``, in call order, one per
    id (a second call with the same id gets none: a provider takes one result per id)."""
    calls = message.tool_calls() if message is not None else []
    out: list[ToolResultMessage] = []
    for call in calls:
        if call.id in unanswered:
            unanswered.discard(call.id)
            out.append(_synthetic_result(call))
    return out
