"""Mistral chat request rules, answered as Mistral does (400 for conversation errors, 422 for fields the
schema does not know or values of the wrong kind)."""

from __future__ import annotations

import re
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._limits import ModelLimits
from ._records import Violation

__all__ = ["validate_mistral"]

_TOOL_CALL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,256}$")
_FIELDS = frozenset(
    {
        "model", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "metadata", "messages",
        "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction",
        "parallel_tool_calls", "prompt_mode", "reasoning_effort", "safe_prompt", "prompt_cache_key", "guardrails",
    }
)  # fmt: skip
_MESSAGE_FIELDS = {
    "system": frozenset({"role", "content"}),
    "user": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "prefix"}),
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
}
_CHUNK_TYPES = {
    "system": frozenset({"text", "thinking"}),
    "user": frozenset({"text", "image_url", "document_url", "input_audio", "file"}),
    "assistant": frozenset({"text", "thinking", "image_url"}),
    "tool": frozenset({"text", "image_url", "document_url", "file"}),
}


class _Issues:
    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.found: list[Violation] = []

    def add(self, rule: str, message: str, status: int = 400, param: str | None = None) -> None:
        self.found.append(Violation(f"mistral.{rule}", message, "mistral", self.seq, status, param, None))


def validate_mistral(
    body: JsonObject, *, seq: int, prompt_tokens: int, limits: ModelLimits
) -> list[Violation]:
    """Check a Mistral chat request body; returns every rule it breaks."""
    issues = _Issues(seq)
    for name in ("model", "messages"):
        if body.get(name) is None:
            issues.add("required_field", f"Field required: body.{name}", 422, name)
    if issues.found:
        return issues.found
    for name in body:
        if name not in _FIELDS:
            issues.add("extra_field", f"Extra inputs are not permitted: body.{name}", 422, name)
    if body.get("reasoning_effort") not in (None, "none", "high"):
        issues.add("reasoning_effort", "Input should be 'none' or 'high': body.reasoning_effort", 422)
    if body.get("prompt_mode") not in (None, "reasoning"):
        issues.add("prompt_mode", "Input should be 'reasoning': body.prompt_mode", 422)
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 0):
        issues.add("max_tokens", "Input should be greater than or equal to 0: body.max_tokens", 422)
    _tools(body.get("tools"), issues)
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        issues.add("messages", "Input should be a non-empty list: body.messages", 422)
        return issues.found
    _conversation(messages, issues)
    window = limits.context_window or 0
    if window and prompt_tokens > window:
        issues.add(
            "context_length",
            f"Prompt contains {prompt_tokens} tokens and 0 draft tokens, too large for model with {window} "
            "maximum context length",
        )
    return issues.found


def _tools(tools: Any, issues: _Issues) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        issues.add("tools", "Input should be a valid list: body.tools", 422)
        return
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type", "function") != "function":
            issues.add("tools", f"Field required: body.tools.{i}.function", 422)
            continue
        name = function.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            issues.add("tool_name", f"Function name was {name} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 256.")  # fmt: skip
        if not isinstance(function.get("parameters", {}), dict):
            issues.add(
                "tools", f"Input should be a valid dictionary: body.tools.{i}.function.parameters", 422
            )
        if not isinstance(function.get("strict", False), bool):
            issues.add("tools", f"Input should be a valid boolean: body.tools.{i}.function.strict", 422)


def _content(role: str, content: Any, where: str, issues: _Issues) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        issues.add("content", f"Input should be a valid string or list: {where}.content", 422)
        return
    for j, chunk in enumerate(content):
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind not in _CHUNK_TYPES[role]:
            issues.add("chunk_type", f"Input tag '{kind}' found using 'type' does not match any of the expected tags: {where}.content.{j}", 422)  # fmt: skip
            continue
        if kind == "image_url":
            image = chunk.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            if not isinstance(url, str) or not (url.startswith("data:image/") or url.startswith("http")):
                issues.add(
                    "image_url", f"Image URL must be a URL or a base64 data URL: {where}.content.{j}", 422
                )
        elif kind == "thinking":
            parts = chunk.get("thinking")
            if not isinstance(parts, list) or not all(
                isinstance(p, dict) and p.get("type") == "text" for p in parts
            ):
                issues.add(
                    "thinking", f"Input should be a list of text chunks: {where}.content.{j}.thinking", 422
                )
        elif kind == "text" and not isinstance(chunk.get("text"), str):
            issues.add("text", f"Input should be a valid string: {where}.content.{j}.text", 422)


def _conversation(messages: list[Any], issues: _Issues) -> None:
    pending: list[str] = []  # calls of the last assistant message not answered yet
    for i, message in enumerate(messages):
        where = f"body.messages.{i}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _MESSAGE_FIELDS:
            issues.add("role", f"Input tag '{role}' found using 'role' does not match any of the expected tags: {where}", 422)  # fmt: skip
            continue
        for name in message:
            if name not in _MESSAGE_FIELDS[role]:
                issues.add("extra_field", f"Extra inputs are not permitted: {where}.{name}", 422)
        _content(role, message.get("content"), where, issues)
        if role != "tool" and pending:
            issues.add("tool_results", "Not the same number of function calls and responses")
            pending = []
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if not message.get("content") and not calls:
                issues.add("assistant_empty", "Assistant message must have either content or tool_calls, but not none.")  # fmt: skip
            for call in calls:
                call_id = call.get("id") if isinstance(call, dict) else None
                if not isinstance(call_id, str) or not _TOOL_CALL_ID.match(call_id):
                    issues.add("tool_call_id", f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9.")  # fmt: skip
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("arguments"), str | dict):
                    issues.add("tool_call", f"Field required: {where}.tool_calls.function", 422)
                pending.append(str(call_id))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                issues.add("tool_result_unmatched", f"Unexpected tool call id {call_id} in tool results")
            else:
                pending.remove(call_id)
    if pending:
        issues.add("tool_results", "Not the same number of function calls and responses")
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    if last.get("role") not in ("user", "tool") and not (
        last.get("role") == "assistant" and last.get("prefix")
    ):
        issues.add(
            "last_role",
            f"Expected last role User or Tool (or Assistant with prefix True) for serving but got {last.get('role')}",
        )
