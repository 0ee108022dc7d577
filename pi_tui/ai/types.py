"""Provider-neutral message, content, usage and model types.

These are the shapes pi writes into its session files (camelCase on the wire, snake_case in Python),
so a message read from a pi session round-trips through `Message.model_dump(by_alias=True)`.

Use `dump_message()` / `load_message()` to cross the JSON boundary.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal, TypeAlias

from pi_tui.util.json_types import JsonObject, JsonValue
from pi_tui.util.record import Record, Validator, field

__all__ = [
    "message_content",
    "message_role",
    "WireModel",
    "TextContent",
    "ThinkingContent",
    "ImageContent",
    "ToolCall",
    "Cost",
    "Usage",
    "StopReason",
    "NOT_REPLAYED",
    "UserMessage",
    "AssistantMessage",
    "ToolResultMessage",
    "BashExecutionMessage",
    "CustomMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "Message",
    "LlmMessage",
    "UserContent",
    "AssistantContent",
    "ToolResultContent",
    "CostTier",
    "ModelCost",
    "Model",
    "ThinkingLevel",
    "THINKING_LEVELS",
    "ToolDefinition",
    "now_ms",
    "load_message",
    "dump_message",
    "dump_messages",
    "load_messages",
    "message_text",
]

Api: TypeAlias = str  # "anthropic-messages" | "openai-completions" | "openai-responses" | "faux" | ...
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
StopReason = Literal["stop", "length", "toolUse", "error", "aborted", "deferred"]
"""Why an answer ended. ``deferred`` (pi 0.87): the provider took the request to finish asynchronously and
the message holds only a handle (its ``deferred`` field), no answer; like ``error`` and ``aborted`` it is
kept in the session but never sent back to a model."""

NOT_REPLAYED: frozenset[str] = frozenset({"error", "aborted", "deferred"})
"""Stop reasons of assistant messages that stay out of the model's context (pi's ``isContextMessage``)."""


def now_ms() -> int:
    """Milliseconds since the epoch, the timestamp unit pi uses inside messages."""
    return int(time.time() * 1000)


class WireModel(Record):
    """Base for everything that crosses a JSON boundary in pi's camelCase shape.

    Built on `Record` (not pydantic: see `pi_tui.util.record`). Construction takes snake_case names or
    camelCase keys; unknown fields are kept under their own names so data written by a newer pi
    survives a round trip; ``to_json_dict()`` is what pi writes.
    """

    camel_case = True
    dump_by_alias = True


# --- content blocks -------------------------------------------------------------------------------


class TextContent(WireModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(WireModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(WireModel):
    type: Literal["image"] = "image"
    data: str  # base64
    mime_type: str


class ToolCall(WireModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)
    thought_signature: str | None = None


# Tagged unions: a dict is validated as the class its ``type`` names (see `pi_tui.util.record`).
UserContent: TypeAlias = TextContent | ImageContent
ToolResultContent: TypeAlias = UserContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


# --- usage ----------------------------------------------------------------------------------------


class Cost(WireModel):
    """Dollars, per usage bucket."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


class Usage(WireModel):
    """Token usage normalised to pi's shape: ``input`` is the non-cached part of the prompt.

    ``reasoning``: the part of ``output`` the model spent thinking, where the provider reports it (None:
    not reported, and not written). ``cache_write_1h``: the part of ``cache_write`` written with a 1-hour
    TTL (Anthropic, Bedrock), as pi records it.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None
    total_tokens: int = 0
    cost: Cost = field(default_factory=Cost)
    cache_write_1h: int | None = None


# --- messages -------------------------------------------------------------------------------------


class UserMessage(WireModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int = field(default_factory=now_ms)


class AssistantMessage(WireModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = field(default_factory=now_ms)
    response_id: str | None = None
    """The provider's id for this answer (pi 0.83 ``responseId``); None when the provider sent none."""
    raw_stop_reason: str | None = None
    """The provider's own stop reason before mapping to `StopReason` (pi 0.83 ``rawStopReason``)."""

    def tool_calls(self) -> list[ToolCall]:
        return [c for c in self.content if isinstance(c, ToolCall)]

    def text(self) -> str:
        return "".join(c.text for c in self.content if isinstance(c, TextContent))


class ToolResultMessage(WireModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent] = field(default_factory=list)
    details: JsonValue = None
    is_error: bool = False
    timestamp: int = field(default_factory=now_ms)


class BashExecutionMessage(WireModel):
    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: int = field(default_factory=now_ms)


class CustomMessage(WireModel):
    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: JsonValue = None
    timestamp: int = field(default_factory=now_ms)


class BranchSummaryMessage(WireModel):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str = "root"
    timestamp: int = field(default_factory=now_ms)


class CompactionSummaryMessage(WireModel):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = 0
    timestamp: int = field(default_factory=now_ms)


Message: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)
"""Any message of the agent's history (pi's ``AgentMessage``); a dict is validated by its ``role``."""

LlmMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
"""What a provider receives after ``convert_to_llm``."""

_MESSAGE: Validator[Message] = Validator(Message, "message")
_MESSAGES: Validator[list[Message]] = Validator(list[Message], "messages")


def load_message(data: JsonObject) -> Message:
    """Validate a JSON dict (camelCase) into a message model.

    Raises:
        pi_tui.util.record.ValidationError: a ``ValueError`` naming the bad field's path.
    """
    return _MESSAGE.validate(data)


def load_messages(data: list[JsonObject]) -> list[Message]:
    return _MESSAGES.validate(data)


def dump_message(message: Record) -> JsonObject:
    """The JSON dict pi would write for this message."""
    return message.to_json_dict()


def dump_messages(messages: Sequence[Record]) -> list[JsonObject]:
    return [dump_message(m) for m in messages]


def message_role(message: object) -> str | None:
    """The ``role`` of a history message (`Message`); ``None`` for anything else."""
    if isinstance(message, Message):
        return message.role
    return None


def message_content(message: object) -> str | list[AssistantContent] | list[UserContent] | None:
    """The ``content`` of a message that has one (user, assistant, tool result, custom); else ``None``."""
    if isinstance(message, UserMessage | AssistantMessage | ToolResultMessage | CustomMessage):
        return message.content
    return None


def message_text(message: object) -> str:
    """Plain text of a message's text blocks (or its string content)."""
    content = message_content(message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.text for c in content if isinstance(c, TextContent))
    if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
        return message.summary
    if isinstance(message, BashExecutionMessage):
        return message.command
    return ""


# --- models and tools -----------------------------------------------------------------------------


class CostTier(WireModel):
    """Prices that replace a model's base prices once a request's prompt is larger than
    ``input_tokens_above`` tokens (input + cache read + cache write), e.g. GPT-5.4 above 272K."""

    input_tokens_above: int
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


class ModelCost(WireModel):
    """Prices in dollars per million tokens; ``tiers`` (pi 0.80.6) apply above a prompt size."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: list[CostTier] | None = None


def _text_input_only() -> list[Literal["text", "image"]]:
    return ["text"]


class Model(WireModel):
    """A model a provider serves, in pi's ``models.json`` shape."""

    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[Literal["text", "image"]] = field(default_factory=_text_input_only)
    cost: ModelCost = field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: JsonObject | None = None
    thinking_level_map: dict[str, str | None] | None = None
    """pi 0.72+: the value sent for each thinking level (``off`` … ``max``); ``null`` means the model does
    not offer that level. Absent: the level's own name is sent."""
    input_limits: JsonObject | None = None
    prompt_cache: JsonObject | None = None
    sampling_params: JsonObject | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.id}"


class ToolDefinition(WireModel):
    """What the model sees of a tool: name, description and JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: JsonObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    constrained_sampling: JsonObject | None = None
    """pi's ``constrainedSampling`` (``{"type": "json_schema", "strict": "prefer" | "require"}``): where the
    model supports strict tool schemas, the provider sends this tool's schema in the strict form."""
