"""OpenAI Chat Completions and Responses request rules (llm-apis.md §2.4), with OpenAI's error shape.

Texts marked "[real]" are quoted from real API responses; the others follow OpenAI's wording style.
"""

from __future__ import annotations

import re
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._limits import ModelLimits
from ._records import Violation

__all__ = ["validate_chat", "validate_responses"]

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_RESPONSES_ROLES = ("system", "developer", "user", "assistant")


class _Issues:
    def __init__(self, api: str, prefix: str, seq: int) -> None:
        self.api, self.prefix, self.seq = api, prefix, seq
        self.found: list[Violation] = []

    def add(self, rule: str, message: str, param: str | None = None, code: str | None = None) -> None:
        self.found.append(Violation(f"{self.prefix}.{rule}", message, self.api, self.seq, 400, param, code))


def _required(body: JsonObject, fields: tuple[str, ...], issues: _Issues) -> bool:
    ok = True
    for name in fields:
        if body.get(name) is None:
            # [real]
            issues.add(
                "required_field", f"Missing required parameter: '{name}'.", name, "missing_required_parameter"
            )
            ok = False
    return ok


def _tool_names(tools: Any, issues: _Issues, nested: bool) -> None:
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            continue
        name = (tool.get("function") or {}).get("name") if nested else tool.get("name")
        where = f"tools[{i}].function.name" if nested else f"tools[{i}].name"
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            # [real]
            issues.add(
                "tool_name",
                f"Invalid '{where}': string does not match pattern. Expected a string that matches the pattern "
                "'^[a-zA-Z0-9_-]+$'.",
                where,
                "invalid_value",
            )


def validate_chat(
    body: JsonObject, *, seq: int, prompt_tokens: int, limits: ModelLimits
) -> list[Violation]:
    """Check a Chat Completions request body; returns every rule it breaks."""
    issues = _Issues("openai-chat", "openai", seq)
    if not _required(body, ("model", "messages"), issues):
        return issues.found
    messages = body["messages"]
    if not isinstance(messages, list):
        issues.add(
            "required_field", "Invalid type for 'messages': expected an array.", "messages", "invalid_type"
        )
        return issues.found
    if body.get("stream_options") is not None and not body.get("stream"):
        # [real]
        issues.add(
            "stream_options",
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
            "invalid_value",
        )
    _tool_names(body.get("tools"), issues, nested=True)
    pending: list[str] = []  # tool_call ids of the last assistant message still awaiting answers
    offered: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            issues.add(
                "invalid_role", f"Invalid type for 'messages[{i}]': expected an object.", f"messages[{i}]"
            )
            continue
        role = message.get("role")
        if role not in _CHAT_ROLES:
            # [real]
            issues.add(
                "invalid_role",
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', "
                "'tool', and 'developer'.",
                f"messages[{i}].role",
                "invalid_value",
            )
            continue
        if role != "tool" and pending:
            _missing_tool_responses(pending, issues)
            pending = []
        if role == "assistant":
            calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            if message.get("content") is None and not calls and message.get("function_call") is None:
                issues.add(
                    "assistant_empty",
                    "Invalid value for 'content': expected a string, got null.",
                    f"messages.[{i}].content",
                )
            pending = [str(c.get("id")) for c in calls]
            offered = set(pending)
            for c in calls:
                name = (c.get("function") or {}).get("name")
                if not isinstance(name, str) or not _TOOL_NAME.match(name):
                    issues.add(
                        "tool_name",
                        f"Invalid 'messages[{i}].tool_calls.function.name': string does not match pattern. "
                        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                        f"messages[{i}].tool_calls.function.name",
                        "invalid_value",
                    )
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in offered:
                # [real, sic "preceeding"]
                issues.add(
                    "tool_message_orphan",
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
                    "'tool_calls'.",
                    f"messages.[{i}].role",
                )
            elif call_id in pending:
                pending.remove(call_id)
        else:
            offered = set()
    if pending:
        _missing_tool_responses(pending, issues)
    window = limits.context_window
    if window is not None and prompt_tokens > window:
        # [real]
        issues.add(
            "context_window",
            f"This model's maximum context length is {window} tokens. However, your messages resulted in "
            f"{prompt_tokens} tokens. Please reduce the length of the messages.",
            "messages",
            "context_length_exceeded",
        )
    return issues.found


def _missing_tool_responses(pending: list[str], issues: _Issues) -> None:
    # [real]
    issues.add(
        "tool_response_missing",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}",
        "messages",
    )


def validate_responses(
    body: JsonObject, *, seq: int, prompt_tokens: int, limits: ModelLimits
) -> list[Violation]:
    """Check a Responses request body; returns every rule it breaks."""
    issues = _Issues("openai-responses", "responses", seq)
    if not _required(body, ("model",), issues):
        return issues.found
    _tool_names(body.get("tools"), issues, nested=False)
    items = body.get("input")
    calls: set[str] = set()
    answered: set[str] = set()
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") not in _RESPONSES_ROLES:
            issues.add(
                "invalid_role",
                f"Invalid value: '{item.get('role')}'. Supported values are: 'assistant', 'system', 'developer', "
                "and 'user'.",
                f"input[{i}].role",
                "invalid_value",
            )
        elif kind == "function_call":
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                # [real]
                issues.add(
                    "call_id_unknown",
                    f"No tool call found for function call output with call_id {call_id}.",
                    "input",
                )
            answered.add(call_id)
    if body.get("previous_response_id") is None:
        for call_id in sorted(calls - answered):
            # [real]
            issues.add("call_output_missing", f"No tool output found for function call {call_id}.", "input")
    window = limits.context_window
    if window is not None and prompt_tokens > window:
        # [real]
        issues.add(
            "context_window",
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "input",
            "context_length_exceeded",
        )
    return issues.found
