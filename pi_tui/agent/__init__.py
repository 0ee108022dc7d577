"""The agent loop layer: `Agent`, its events, hooks, the tool contract and message conversion."""

from __future__ import annotations

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
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from .hooks import (
    QueueMode,
    RetryConfig,
    ToolCallContext,
    ToolCallDecision,
    ToolResultContext,
    ToolResultPatch,
    chain_after_tool_call,
    chain_before_tool_call,
)
from .loop import Agent, AgentBusyError, AgentStateError
from .tool import AgentTool, ToolError, ToolResult, text_result
from .validate import ToolArgumentsError, validate_arguments

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentStateError",
    "AgentTool",
    "ToolError",
    "ToolResult",
    "text_result",
    "RetryConfig",
    "QueueMode",
    "ToolCallContext",
    "ToolCallDecision",
    "ToolResultContext",
    "ToolResultPatch",
    "chain_before_tool_call",
    "chain_after_tool_call",
    "convert_to_llm",
    "transform_messages",
    "validate_arguments",
    "ToolArgumentsError",
    "AgentEvent",
    "AgentStart",
    "AgentEnd",
    "TurnStart",
    "TurnEnd",
    "MessageStart",
    "MessageUpdate",
    "MessageEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolExecutionEnd",
    "AutoRetryStart",
    "AutoRetryEnd",
]
