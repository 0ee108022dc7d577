"""Neutral reply parts → Mistral chat chunks (``POST /v1/chat/completions``, streamed), and Mistral's
error bodies.

Mistral streams OpenAI-like chunks with its own details: thinking arrives as content chunks
``{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}``, a tool call comes whole in one
delta with a nine-character id, and usage rides on the last chunk (with ``num_cached_tokens`` next to
``prompt_tokens_details``). Errors are ``{"object": "error", "message", "type", "param", "code"}``; a bad
key gets ``{"message": "Unauthorized", "request_id"}``.
"""

from __future__ import annotations

from typing import Any

from pi_tui.util.json_types import JsonObject

from ._errors import base_headers, openai_status_fault, request_id
from ._plan import Plan, json_plan, sse_data
from ._render_common import RenderContext, split_text
from ._script import Fault, Reply, TextPart, ThinkingPart, ToolCallPart

__all__ = [
    "FINISH_REASONS",
    "mistral_error",
    "mistral_fault_plan",
    "mistral_frames",
    "mistral_stream_error_frame",
    "mistral_unauthorized",
]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "model_length",
    "tool_use": "tool_calls",
    "refusal": "error",
}
# status -> (type, code) of Mistral's error bodies
_KINDS = {
    400: ("invalid_request_message_error", "3230"),
    404: ("invalid_model", "1500"),
    413: ("invalid_request_message_error", "3051"),
    422: ("invalid_request_message_error", None),
    429: ("rate_limited", "1300"),
    500: ("internal_server_error", "1000"),
    503: ("service_unavailable", "1001"),
}
_FAULT_TEXT = {
    429: "Requests rate limit exceeded",
    503: "Service unavailable: the model is overloaded, please retry later",
    500: "Internal server error",
    413: "Request body too large",
}


def _usage(ctx: RenderContext) -> JsonObject:
    u = ctx.usage
    prompt = u["input"] + u["cache_read"] + u["cache_write"]
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + u["output"],
        "completion_tokens": u["output"],
        "num_cached_tokens": u["cache_read"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read"]},
    }


def mistral_call_id(number: int) -> str:
    """A nine-character tool-call id (letters and digits only, as Mistral's own)."""
    return f"fake{number:05d}"[-9:]


def mistral_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """The chunk sequence of a streamed answer, up to and including ``[DONE]``."""
    base = {"id": f"cmpl-fake-{ctx.seq:04d}", "object": "chat.completion.chunk", "created": ctx.created}
    base["model"] = ctx.model

    def chunk(delta: JsonObject, finish: str | None = None, usage: bool = False) -> bytes:
        data: JsonObject = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage:
            data["usage"] = _usage(ctx)
        return sse_data(data)

    frames = [chunk({"role": "assistant", "content": ""})]
    calls = 0
    for part in reply.part_list:
        if isinstance(part, TextPart):
            frames.extend(chunk({"content": t}) for t in split_text(part.text, reply.chunk))
        elif isinstance(part, ThinkingPart):
            if part.redacted:
                continue
            for t in split_text(part.thinking, reply.chunk):
                thought = {"type": "thinking", "thinking": [{"type": "text", "text": t}]}
                frames.append(chunk({"content": [thought]}))
        elif isinstance(part, ToolCallPart):
            call_id = part.id or mistral_call_id(ctx.next_tool_number())
            ctx.tool_ids.append(call_id)
            call = {
                "id": call_id,
                "function": {"name": part.name, "arguments": part.arguments()},
                "index": calls,
            }
            calls += 1
            frames.append(chunk({"tool_calls": [call]}))
    # The last chunk carries the finish reason and the usage (an empty text delta after text, as Mistral).
    closing: JsonObject = {} if calls else {"content": ""}
    frames.append(chunk(closing, FINISH_REASONS[reply.resolved_stop_reason()], usage=True))
    frames.append(sse_data("[DONE]"))
    return frames


def mistral_error(
    status: int, message: Any, seq: int, *, headers: dict[str, str] | None = None, code: str | None = None
) -> Plan:
    """A Mistral error answer (``message`` may be a string or the validation ``{"detail": [...]}``)."""
    if status == 401:
        return mistral_unauthorized(seq)
    kind, default_code = _KINDS.get(
        status, ("internal_server_error" if status >= 500 else "invalid_request_error", None)
    )
    payload = {
        "object": "error",
        "message": message,
        "type": kind,
        "param": None,
        "code": code or default_code,
    }
    return json_plan(status, payload, {**base_headers(seq), **(headers or {})}, seq)


def mistral_unauthorized(seq: int) -> Plan:
    """What Mistral answers a missing or wrong key with."""
    return json_plan(401, {"message": "Unauthorized", "request_id": request_id(seq)}, base_headers(seq), seq)


def mistral_fault_plan(fault: Fault, seq: int, *, prompt_tokens: int, window: int) -> Plan:
    """The answer to an HTTP fault turn."""
    if fault.kind == "context_overflow":
        tokens = fault.tokens if fault.tokens is not None else max(prompt_tokens, window + 1)
        text = fault.message or (
            f"Prompt contains {tokens} tokens and 0 draft tokens, too large for model with {window} maximum "
            "context length"
        )
        return mistral_error(fault.status or 400, text, seq, code="3051")
    _, status, retry_after_ms = openai_status_fault(fault)
    headers = {}
    if retry_after_ms is not None:
        headers["retry-after"] = f"{retry_after_ms / 1000:g}"
    return mistral_error(status, fault.message or _FAULT_TEXT.get(status, "Error"), seq, headers=headers)


def mistral_stream_error_frame(fault: Fault) -> bytes:
    """An error object sent in place of a chunk, as Mistral does when a stream fails part way."""
    message = fault.message or "Service unavailable: the model is overloaded, please retry later"
    payload = {
        "object": "error",
        "message": message,
        "type": "service_unavailable",
        "param": None,
        "code": "1001",
    }
    return sse_data(payload)
