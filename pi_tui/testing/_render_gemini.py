"""Neutral reply parts → Gemini ``GenerateContentResponse`` chunks (SSE or JSON) and Google error bodies.

What the fake sends, as Gemini does:

- one part per chunk: thought summaries (``thought: true``, only when the request asked for them with
  ``includeThoughts``), text deltas, and whole ``functionCall`` parts (Gemini does not stream arguments);
- thought signatures (base64, as the API sends them): on the last chunk of each thought, on the first
  function call of an answer, and, for an answer without calls, on a final empty text part. Gemini 3
  models always sign; older ones only when the answer thought. Every signature sent is remembered so a
  replayed one can be checked;
- call ids on Gemini 3 models (or when the script names one);
- ``usageMetadata`` on every chunk (prompt counts), complete on the last one with ``finishReason``:
  ``promptTokenCount`` includes ``cachedContentTokenCount``; ``thoughtsTokenCount`` is separate from
  ``candidatesTokenCount``.
"""

from __future__ import annotations

import base64
import hashlib
import json

from pi_tui.util.json_types import JsonObject

from ._plan import Plan, json_plan
from ._render_common import RenderContext, split_text
from ._script import Fault, Reply, TextPart, ThinkingPart, ToolCallPart
from ._validate_gemini import gemini_major

__all__ = [
    "FINISH_REASONS",
    "STATUS_NAMES",
    "gemini_error",
    "gemini_fault_plan",
    "gemini_frames",
    "gemini_response",
    "gemini_signature",
    "gemini_stream_error_frame",
    "sse_crlf",
]

FINISH_REASONS = {
    "end_turn": "STOP",
    "stop_sequence": "STOP",
    "pause_turn": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
    "model_context_window_exceeded": "MAX_TOKENS",
    "refusal": "SAFETY",
}
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
CALL_ID_PREFIX = "call_fake_"


def gemini_signature(text: str) -> str:
    """The thought signature the fake issues for a text: base64 (the API's bytes type), 40 characters."""
    return base64.b64encode(hashlib.sha256(b"gemini\0" + text.encode()).digest()[:30]).decode()


def sse_crlf(data: JsonObject) -> bytes:
    """A Gemini SSE frame: ``data: <json>`` ended by CRLF CRLF, as Google's servers send them."""
    return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\r\n\r\n"


def _wants_thoughts(body: JsonObject) -> bool:
    config = body.get("generationConfig")
    thinking = config.get("thinkingConfig") if isinstance(config, dict) else None
    # Proto JSON accepts a field's original (snake_case) name too, as the Python SDK sends this one.
    if not isinstance(thinking, dict):
        return False
    return thinking.get("includeThoughts", thinking.get("include_thoughts")) is True


def _usage(ctx: RenderContext, final: bool) -> JsonObject:
    u = ctx.usage
    prompt = u["input"] + u["cache_read"] + u["cache_write"]
    usage: JsonObject = {"promptTokenCount": prompt}
    if final:
        thoughts = min(u["reasoning"], u["output"])
        usage["candidatesTokenCount"] = u["output"] - thoughts
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        usage["totalTokenCount"] = prompt + u["output"]
    else:
        usage["totalTokenCount"] = prompt
    if u["cache_read"]:
        usage["cachedContentTokenCount"] = u["cache_read"]
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if u["cache_read"]:
        usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": u["cache_read"]}]
    return usage


def _parts(reply: Reply, ctx: RenderContext) -> list[JsonObject]:
    """The parts of the answer, one per chunk."""
    major = gemini_major(ctx.model)
    always_sign = major is not None and major >= 3
    sign = always_sign or any(isinstance(p, ThinkingPart) for p in reply.part_list)
    thoughts = _wants_thoughts(ctx.body)
    parts: list[JsonObject] = []
    call_signed = False
    answer_text: list[str] = []
    for part in reply.part_list:
        if isinstance(part, ThinkingPart):
            if part.redacted or not thoughts:
                continue
            pieces = split_text(part.thinking, reply.chunk) or [""]
            signature = part.signature if part.signature is not None else gemini_signature(part.thinking)
            ctx.remember_signature(signature, part.thinking)
            for k, piece in enumerate(pieces):
                chunk: JsonObject = {"text": piece, "thought": True}
                if k == len(pieces) - 1:
                    chunk["thoughtSignature"] = signature
                parts.append(chunk)
        elif isinstance(part, TextPart):
            answer_text.append(part.text)
            parts.extend({"text": piece} for piece in split_text(part.text, reply.chunk))
        elif isinstance(part, ToolCallPart):
            call: JsonObject = {"name": part.name, "args": part.parsed_input()}
            if part.id is not None or always_sign:
                call["id"] = ctx.call_id(part, CALL_ID_PREFIX)
            wire: JsonObject = {"functionCall": call}
            if sign and not call_signed:
                signature = gemini_signature(f"call\0{part.name}\0{part.arguments()}")
                ctx.remember_signature(signature, part.name)
                wire["thoughtSignature"] = signature
                call_signed = True
            parts.append(wire)
    if sign and not call_signed and answer_text:
        signature = gemini_signature("text\0" + "".join(answer_text))
        ctx.remember_signature(signature, "".join(answer_text))
        parts.append({"text": "", "thoughtSignature": signature})
    return parts


def _chunk(ctx: RenderContext, parts: list[JsonObject], finish: str | None) -> JsonObject:
    candidate: JsonObject = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(ctx, final=finish is not None),
        "modelVersion": ctx.model,
        "responseId": f"fake-gemini-{ctx.seq:04d}",
    }


def _chunks(reply: Reply, ctx: RenderContext) -> list[JsonObject]:
    parts = _parts(reply, ctx) or [{"text": ""}]
    finish = FINISH_REASONS[reply.resolved_stop_reason()]
    last = len(parts) - 1
    return [_chunk(ctx, [part], finish if i == last else None) for i, part in enumerate(parts)]


def gemini_frames(reply: Reply, ctx: RenderContext, *, sse: bool = True) -> list[bytes]:
    """The streamed answer: SSE frames, or (without ``alt=sse``) the pieces of one JSON array."""
    chunks = _chunks(reply, ctx)
    if sse:
        return [sse_crlf(c) for c in chunks]
    texts = [json.dumps(c, ensure_ascii=False).encode() for c in chunks]
    return [(b"[" if i == 0 else b",\r\n") + t for i, t in enumerate(texts)] + [b"]"]


def gemini_response(reply: Reply, ctx: RenderContext) -> JsonObject:
    """The non-streamed ``generateContent`` answer."""
    parts = _parts(reply, ctx) or [{"text": ""}]
    return _chunk(ctx, parts, FINISH_REASONS[reply.resolved_stop_reason()])


def gemini_error(
    status: int,
    message: str,
    seq: int,
    *,
    details: list[JsonObject] | None = None,
    headers: dict[str, str] | None = None,
) -> Plan:
    """A Google API error answer: ``{"error": {code, message, status, details?}}``."""
    error: JsonObject = {
        "code": status,
        "message": message,
        "status": STATUS_NAMES.get(status, "UNKNOWN"),
    }
    if details:
        error["details"] = details
    rid = f"req_fake_{seq:04d}"
    return json_plan(status, {"error": error}, {"x-request-id": rid, **(headers or {})}, seq)


_FAULTS: dict[str, tuple[int, str]] = {
    "rate_limit": (429, "Resource has been exhausted (e.g. check quota)."),
    "overloaded": (503, "The model is overloaded. Please try again later."),
    "api_error": (
        500,
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
    "auth": (400, "API key not valid. Please pass a valid API key."),
    "request_too_large": (400, "Request payload size exceeds the limit: 20971520 bytes."),
}


def api_key_details() -> list[JsonObject]:
    return [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        }
    ]


def _retry_details(milliseconds: int | None) -> list[JsonObject] | None:
    if milliseconds is None:
        return None
    return [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{milliseconds / 1000:g}s"}]


def gemini_fault_plan(fault: Fault, seq: int, *, prompt_tokens: int, window: int) -> Plan:
    """The answer to an HTTP fault turn, as the Gemini API words it."""
    kind = fault.kind
    if kind == "context_overflow":
        tokens = fault.tokens if fault.tokens is not None else max(prompt_tokens, window + 1)
        message = fault.message or (
            f"The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window})."
        )
        return gemini_error(fault.status or 400, message, seq)
    if kind == "stream_error":  # on a non-streamed request: its HTTP twin
        kind = "rate_limit" if (fault.error_type or "") == "rate_limit_error" else "overloaded"
    status, message = _FAULTS[kind]
    details: list[JsonObject] | None = None
    if kind == "auth":
        details = api_key_details()
    elif kind in ("rate_limit", "overloaded", "api_error"):
        details = _retry_details(fault.retry_after_ms)
    return gemini_error(fault.status or status, fault.message or message, seq, details=details)


def gemini_stream_error_frame(fault: Fault) -> bytes:
    """The in-stream error a ``stream_error`` fault sends (an ``{"error": …}`` chunk)."""
    status = 429 if (fault.error_type or "") == "rate_limit_error" else 503
    message = fault.message or _FAULTS["rate_limit" if status == 429 else "overloaded"][1]
    return sse_crlf({"error": {"code": status, "message": message, "status": STATUS_NAMES[status]}})
