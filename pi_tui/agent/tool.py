"""The tool contract between the agent loop and whatever implements a tool (built-ins, extensions).

A tool's ``execute`` returns a `ToolResult` on success and *raises* to signal an error (pi's rule): the
loop turns the exception's message into an ``is_error`` tool result. Tools must respect the abort
signal and truncate their own output.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import ImageContent, TextContent, ToolDefinition, ToolResultMessage
from pi_tui.util.json_types import JsonObject

__all__ = [
    "PREFER_STRICT_SCHEMA",
    "ToolResult",
    "AgentTool",
    "ToolUpdateFn",
    "ToolExecuteFn",
    "ToolError",
    "text_result",
    "result_text",
]

PREFER_STRICT_SCHEMA: JsonObject = {"type": "json_schema", "strict": "prefer"}
"""What pi's read, bash, edit and write tools ask for: a strict schema where the model supports one."""


@dataclass(slots=True)
class ToolResult:
    content: list[TextContent | ImageContent]
    details: Any = None


def result_text(result: ToolResult | ToolResultMessage) -> str:
    """The text blocks of a tool's result (a `ToolResult` or the `ToolResultMessage` made of it), joined."""
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


ToolUpdateFn = Callable[[ToolResult], None]
"""Streams partial output while a tool runs (the accumulated result so far, not a delta)."""

ToolExecuteFn = Callable[[str, JsonObject, AbortSignal, ToolUpdateFn | None], Awaitable[ToolResult]]
"""``execute(tool_call_id, params, signal, on_update) -> ToolResult``; raise to report an error."""


class ToolError(Exception):
    """A tool failure whose message is shown to the model verbatim.

    ``details`` is kept on the error tool result (e.g. bash's truncation info and full output path).
    """

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


@dataclass(slots=True)
class AgentTool:
    """A tool the agent can call.

    Attributes:
        name: The name the model calls it by (``^[a-zA-Z0-9_-]{1,64}$``).
        label: A human label for the UI.
        description: What the model reads about the tool.
        parameters: JSON schema (``type: object``) of the arguments.
        execute: The implementation.
        prompt_snippet: One line for the system prompt's "Available tools" list (defaults to the description).
        prompt_guidelines: Bullets appended to the system prompt's guidelines while the tool is active.
        prepare_arguments: Optional shim run on raw arguments before validation.
        constrained_sampling: pi's ``constrainedSampling`` (e.g. ``{"type": "json_schema", "strict":
            "prefer"}``): providers whose models support strict tool schemas send this tool's schema in
            the strict form (Gemini 3 today).
    """

    name: str
    label: str
    description: str
    parameters: JsonObject
    execute: ToolExecuteFn
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    prepare_arguments: Callable[[JsonObject], JsonObject] | None = None
    constrained_sampling: JsonObject | None = None

    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            constrained_sampling=dict(self.constrained_sampling) if self.constrained_sampling else None,
        )


def text_result(text: str, details: Any = None) -> ToolResult:
    return ToolResult(content=[TextContent(text=text)], details=details)
