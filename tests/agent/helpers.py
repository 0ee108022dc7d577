from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pi_tui.agent import Agent, AgentEvent, AgentTool, ToolResult, text_result
from pi_tui.ai.providers.faux import FAUX_MODEL, FauxScript
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import AssistantMessage, ToolResultMessage, UserMessage

OBJECT_WITH_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def make_tool(
    name: str,
    execute: Callable[[str, dict[str, Any], AbortSignal, Any], Awaitable[ToolResult]] | None = None,
    parameters: dict[str, Any] | None = None,
) -> AgentTool:
    async def echo(call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any) -> ToolResult:
        return text_result(f"{name}:{params.get('text', '')}")

    return AgentTool(
        name=name,
        label=name.title(),
        description=f"The {name} tool",
        parameters=parameters or OBJECT_WITH_TEXT,
        execute=execute or echo,
    )


class EventLog:
    """Records every event an agent emits."""

    def __init__(self, agent: Agent) -> None:
        self.events: list[AgentEvent] = []
        agent.subscribe(self.events.append)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def compact(self) -> list[str]:
        """Event types with the role of message events, without the streaming noise."""
        out = []
        for event in self.events:
            if event.type == "message_update":
                continue
            if event.type in ("message_start", "message_end"):
                out.append(f"{event.type}:{event.message.role}")
            else:
                out.append(event.type)
        return out

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def make_agent(script: FauxScript, **kwargs: Any) -> tuple[Agent, EventLog]:
    agent = Agent(model=FAUX_MODEL, stream_fn=script.stream, **kwargs)
    return agent, EventLog(agent)


def pairing_violations(messages: list[Any]) -> list[str]:
    """What a strict Anthropic/OpenAI server would reject in a request's message list."""
    problems: list[str] = []
    if not messages:
        return ["no messages"]
    if not isinstance(messages[0], UserMessage):
        problems.append(f"first message is {messages[0].role}, not user")
    if isinstance(messages[-1], AssistantMessage):
        problems.append("request ends with an assistant message")
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                problems.append(f"message {i}: {message.stop_reason} assistant message replayed")
            wanted = [c.id for c in message.tool_calls()]
            j = i + 1
            got: list[str] = []
            while j < len(messages) and isinstance(messages[j], ToolResultMessage):
                got.append(messages[j].tool_call_id)
                j += 1
            if sorted(got) != sorted(wanted):
                problems.append(f"message {i}: tool calls {wanted} answered by {got}")
            i = j
            continue
        if isinstance(message, ToolResultMessage):
            problems.append(f"message {i}: tool result {message.tool_call_id} without a preceding call")
        i += 1
    return problems
