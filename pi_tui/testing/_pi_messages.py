"""pi's own message protocol (``pi-messages``, the Radius gateway's): request rules, answers and errors.

A request is ``POST …/messages`` with ``{"model", "context": {"messages": [...]}, "options"}``, where the
messages are pi's transcript (a leading ``system`` message with ``toolsAdded``, then ``user``,
``assistant`` and ``toolResult`` messages in pi's camelCase shape). The answer is server-sent events
whose ``data:`` lines are pi's stream events, ended by ``done`` (``reason``, ``usage`` with its cost,
``responseId``) or ``error`` (``errorMessage``). An HTTP error is ``{"error": {"message", "code"}}``.
The fake serves it under ``FakeServer.pi_messages_base_url`` (``…/pi/v1``), apart from Anthropic's
``/v1/messages``.
"""

from __future__ import annotations

from typing import Any

from pi_tui.util.json_types import JsonObject

from ._errors import base_headers, openai_status_fault
from ._limits import ModelLimits
from ._plan import Plan, json_plan, sse_data
from ._records import Violation
from ._render_common import RenderContext, split_json, split_text
from ._script import Fault, Reply, TextPart, ThinkingPart, ToolCallPart
from ._tokens import BLOCK_OVERHEAD, Segment, canonical_json

__all__ = [
    "STOP_REASONS",
    "pi_messages_error",
    "pi_messages_fault_plan",
    "pi_messages_frames",
    "pi_messages_segments",
    "pi_messages_stream_error_frame",
    "validate_pi_messages",
]

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
}
_ROLES = frozenset({"system", "user", "assistant", "toolResult"})
_FAULT_TEXT = {
    429: ("Rate limit exceeded, retry later", "rate_limited"),
    503: ("The model is overloaded, retry later", "overloaded"),
    500: ("Internal server error", "internal_error"),
    401: ("Invalid or expired API key", "unauthorized"),
    413: ("Request body too large", "request_too_large"),
}


def _usage(ctx: RenderContext) -> JsonObject:
    u = ctx.usage
    total = u["input"] + u["output"] + u["cache_read"] + u["cache_write"]
    return {
        "input": u["input"],
        "output": u["output"],
        "cacheRead": u["cache_read"],
        "cacheWrite": u["cache_write"],
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def pi_messages_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """The events of one answer, up to and including ``done``."""
    frames = [sse_data({"type": "start"})]
    for index, part in enumerate(reply.part_list):
        if isinstance(part, TextPart):
            frames.append(sse_data({"type": "text_start", "contentIndex": index}))
            frames.extend(
                sse_data({"type": "text_delta", "contentIndex": index, "delta": t})
                for t in split_text(part.text, reply.chunk)
            )
            frames.append(sse_data({"type": "text_end", "contentIndex": index, "content": part.text}))
        elif isinstance(part, ThinkingPart):
            shown = "" if part.redacted else part.thinking
            frames.append(sse_data({"type": "thinking_start", "contentIndex": index}))
            frames.extend(
                sse_data({"type": "thinking_delta", "contentIndex": index, "delta": t})
                for t in split_text(shown, reply.chunk)
            )
            end: JsonObject = {
                "type": "thinking_end",
                "contentIndex": index,
                "content": shown,
                "contentSignature": ctx.signature(part),
            }
            if part.redacted:
                end["redacted"] = True
            frames.append(sse_data(end))
        elif isinstance(part, ToolCallPart):
            call_id = ctx.call_id(part, "call_")
            frames.append(
                sse_data(
                    {"type": "toolcall_start", "contentIndex": index, "id": call_id, "toolName": part.name}
                )
            )
            frames.extend(
                sse_data({"type": "toolcall_delta", "contentIndex": index, "delta": piece})
                for piece in split_json(part.arguments(), reply.chunk)
            )
            call = {"type": "toolCall", "id": call_id, "name": part.name, "arguments": part.parsed_input()}
            frames.append(sse_data({"type": "toolcall_end", "contentIndex": index, "toolCall": call}))
    done = {
        "type": "done",
        "reason": STOP_REASONS[reply.resolved_stop_reason()],
        "usage": _usage(ctx),
        "responseId": f"resp_fake_{ctx.seq:04d}",
    }
    frames.append(sse_data(done))
    return frames


def pi_messages_error(
    status: int, message: str, seq: int, *, headers: dict[str, str] | None = None, code: str | None = None
) -> Plan:
    """An error answer: ``{"error": {"message", "code"}}``."""
    default = _FAULT_TEXT.get(status, ("", "internal_error" if status >= 500 else "invalid_request"))[1]
    payload = {"error": {"message": message, "code": code or default}}
    return json_plan(status, payload, {**base_headers(seq), **(headers or {})}, seq)


def pi_messages_fault_plan(fault: Fault, seq: int, *, prompt_tokens: int, window: int) -> Plan:
    """The answer to an HTTP fault turn."""
    if fault.kind == "context_overflow":
        tokens = fault.tokens if fault.tokens is not None else max(prompt_tokens, window + 1)
        text = fault.message or f"prompt is too long: {tokens} tokens > {window} maximum"
        return pi_messages_error(fault.status or 400, text, seq, code="context_length_exceeded")
    _, status, retry_after_ms = openai_status_fault(fault)
    headers = {}
    if retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    text, code = _FAULT_TEXT.get(status, ("Error", "error"))
    return pi_messages_error(status, fault.message or text, seq, headers=headers, code=code)


def pi_messages_stream_error_frame(fault: Fault) -> bytes:
    """The terminal ``error`` event a failing answer ends with."""
    usage: JsonObject = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    message = fault.message or "The upstream model is overloaded, retry later"
    return sse_data({"type": "error", "reason": "error", "errorMessage": message, "usage": usage})


# --- requests ------------------------------------------------------------------------------------


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def pi_messages_segments(body: JsonObject) -> list[Segment]:
    """Flatten a request for token counting: the tools, then each message's blocks."""
    context = body.get("context")
    messages = context.get("messages") if isinstance(context, dict) else None
    segments: list[Segment] = []
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        for tool in message.get("toolsAdded") or []:
            segments.append(Segment("tools", "tool", canonical_json(tool), BLOCK_OVERHEAD))
        for block in _blocks(message.get("content")):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = str(block.get("text", ""))
            elif kind == "thinking":
                text = str(block.get("thinking", ""))
            elif kind == "toolCall":
                text = f"{block.get('name', '')} {canonical_json(block.get('arguments', {}))}"
            else:
                text = canonical_json(block)
            segments.append(Segment("messages", f"{role}:{kind}", text, BLOCK_OVERHEAD, message_index=index))
    return segments


def validate_pi_messages(
    body: JsonObject, *, seq: int, prompt_tokens: int, limits: ModelLimits
) -> list[Violation]:
    """Check a request: the fields, the roles, and that every tool call is answered by its result
    (and no result answers a call that was not made) before the conversation goes on."""
    found: list[Violation] = []

    def add(rule: str, message: str, status: int = 400) -> None:
        found.append(Violation(f"pi-messages.{rule}", message, "pi-messages", seq, status, None, None))

    context = body.get("context")
    messages = context.get("messages") if isinstance(context, dict) else None
    if not isinstance(body.get("model"), str) or not body["model"]:
        add("required_field", "model: a model id is required")
    if not isinstance(messages, list):
        add("required_field", "context.messages: a list of messages is required")
    if "options" in body and not isinstance(body["options"], dict):
        add("required_field", "options: must be an object")
    if found or not isinstance(messages, list):
        return found
    open_calls: dict[str, str] = {}
    for index, message in enumerate(messages):
        where = f"context.messages.{index}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            add("invalid_role", f"{where}.role: unknown role {role!r}")
            continue
        assert isinstance(message, dict)
        if role in ("user", "assistant") and open_calls:
            add("tool_result_missing", f"{where}: tool calls {sorted(open_calls)} have no results before it")
            open_calls.clear()
        if role == "assistant":
            for block in _blocks(message.get("content")):
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    open_calls[str(block.get("id"))] = str(block.get("name"))
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            if not isinstance(call_id, str) or call_id not in open_calls:
                add("tool_result_unexpected", f"{where}.toolCallId: {call_id!r} answers no open tool call")
            else:
                del open_calls[call_id]
        if "timestamp" not in message:
            add("required_field", f"{where}.timestamp: required")
    window = limits.context_window
    if window and prompt_tokens > window:
        add("context_window", f"prompt is too long: {prompt_tokens} tokens > {window} maximum")
    return found
