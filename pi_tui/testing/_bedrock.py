"""Amazon Bedrock ``ConverseStream`` for the fake: authentication, validation, prompt flattening, the
binary event-stream answer and AWS-shaped errors.

- **Route**: ``POST …/model/{modelId}/converse-stream`` under any prefix (the model id percent-encoded).
- **Authentication**: with ``aws_credentials`` (access key id -> secret) the SigV4 signature is checked
  the way AWS does (same canonical request, scope, region from the credential scope) and a wrong one
  gets AWS's 403 ``InvalidSignatureException`` or ``UnrecognizedClientException``; a
  ``Bearer`` token must equal the fake's ``api_key``.
- **Validation** (rule ids ``bedrock.*``): ``required_field``, ``invalid_role``, ``empty_content``,
  ``empty_text``, ``invalid_block``, ``tool_result_missing``,
  ``tool_result_unexpected``, ``tool_name``, ``cache_point_limit``, ``thinking_signature``,
  ``max_tokens``, ``context_window``, ``invalid_json``; answered with 400 ``ValidationException``.
- **Prompt cache**: ``cachePoint`` blocks mark breakpoints on the block before them (Anthropic's rules:
  look-back, minimum, 5m or 1h TTL), reported as ``cacheReadInputTokens`` / ``cacheWriteInputTokens``.
- **Answer**: ``messageStart``, text and reasoning deltas (the signature in its own delta), ``toolUse``
  start plus JSON input deltas, ``contentBlockStop``s, ``messageStop``, ``metadata`` with usage.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from pi_tui.ai.providers._aws_eventstream import encode_message
from pi_tui.ai.providers._sigv4 import canonical_request, signature_for
from pi_tui.util.json_types import JsonObject

from ._limits import ModelLimits
from ._plan import Plan, json_plan
from ._records import Violation
from ._render_common import RenderContext, split_json, split_text
from ._script import Fault, Reply, TextPart, ThinkingPart, ToolCallPart
from ._tokens import (
    BLOCK_OVERHEAD,
    IMAGE_TOKENS,
    TOOL_OVERHEAD,
    Segment,
    canonical_json,
    with_message_boundary,
)

__all__ = [
    "BEDROCK_ROUTE",
    "bedrock_auth_error",
    "bedrock_error",
    "bedrock_fault_plan",
    "bedrock_frames",
    "bedrock_segments",
    "bedrock_stream_error_frame",
    "validate_bedrock",
]

BEDROCK_ROUTE = re.compile(r"^(?P<prefix>.*?)/model/(?P<model>[^/]+)/converse-stream$")
STOP_REASONS = {
    "end_turn": "end_turn",
    "stop_sequence": "stop_sequence",
    "pause_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "model_context_window_exceeded",
    "refusal": "content_filtered",
}
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$"
)
_ERROR_NAMESPACE = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
_BLOCK_KEYS = {
    "user": {"text", "image", "toolResult", "cachePoint", "document"},
    "assistant": {"text", "toolUse", "reasoningContent", "cachePoint"},
}
_MAX_CACHE_POINTS = 4


# --- errors -----------------------------------------------------------------------------------------


def bedrock_error(
    status: int, name: str, message: str, seq: int, headers: dict[str, str] | None = None
) -> Plan:
    """An AWS JSON-protocol error: ``x-amzn-ErrorType`` names the exception, the body has ``message``."""
    extra = {
        "x-amzn-ErrorType": f"{name}{_ERROR_NAMESPACE}",
        "x-amzn-RequestId": f"fake-{seq:04d}-0000-0000-0000-000000000000",
        **(headers or {}),
    }
    return json_plan(status, {"message": message}, extra, seq)


def exception_for_status(status: int) -> str:
    """The exception name Bedrock uses for an HTTP status."""
    return {
        403: "AccessDeniedException",
        404: "ResourceNotFoundException",
        429: "ThrottlingException",
        503: "ServiceUnavailableException",
    }.get(status, "InternalServerException" if status >= 500 else "ValidationException")


_FAULTS: dict[str, tuple[int, str, str]] = {
    "rate_limit": (
        429,
        "ThrottlingException",
        "Too many requests, please wait before trying your request again.",
    ),
    "overloaded": (503, "ServiceUnavailableException", "Bedrock is unable to process your request."),
    "api_error": (500, "InternalServerException", "The server encountered an internal error."),
    "auth": (
        403,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    ),
    "request_too_large": (413, "ValidationException", "Input is too long for requested model."),
}


def bedrock_fault_plan(fault: Fault, seq: int, *, prompt_tokens: int, window: int) -> Plan:
    """The answer to an HTTP fault turn, as Bedrock words it."""
    kind = fault.kind
    if kind == "context_overflow":
        tokens = fault.tokens if fault.tokens is not None else max(prompt_tokens, window + 1)
        message = fault.message or (
            f"The model returned the following errors: prompt is too long: {tokens} tokens > {window} maximum"
        )
        return bedrock_error(fault.status or 400, "ValidationException", message, seq)
    if kind == "stream_error":
        kind = "rate_limit" if (fault.error_type or "") == "rate_limit_error" else "overloaded"
    status, name, message = _FAULTS[kind]
    headers = {}
    if kind in ("rate_limit", "overloaded", "api_error") and fault.retry_after_ms is not None:
        headers["retry-after"] = str(max(0, fault.retry_after_ms) / 1000)
    return bedrock_error(fault.status or status, name, fault.message or message, seq, headers)


def bedrock_stream_error_frame(fault: Fault) -> bytes:
    """The in-stream exception a ``stream_error`` fault sends."""
    kind = fault.error_type or "overloaded_error"
    name, default = {
        "rate_limit_error": ("throttlingException", _FAULTS["rate_limit"][2]),
        "api_error": ("internalServerException", _FAULTS["api_error"][2]),
        "validation_error": ("validationException", "The model returned an invalid response."),
    }.get(kind, ("modelStreamErrorException", "The model stream was interrupted."))
    return encode_message(
        {":exception-type": name, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": fault.message or default}).encode(),
    )


# --- authentication ---------------------------------------------------------------------------------


def _sigv4_problem(
    method: str, path: str, headers: Mapping[str, str], raw: bytes, credentials: Mapping[str, str]
) -> tuple[int, str, str] | None:
    match = _AUTH.match(headers.get("authorization", ""))
    if match is None:
        return 403, "IncompleteSignatureException", "Authorization header requires a valid SigV4 signature."
    key_id, day, region, service, signed, signature = match.groups()
    secret = credentials.get(key_id)
    if secret is None:
        return 403, "UnrecognizedClientException", "The security token included in the request is invalid."
    amz_date = headers.get("x-amz-date", "")
    names = signed.split(";")
    if service != "bedrock" or not amz_date.startswith(day) or any(n not in headers for n in names):
        return 403, "InvalidSignatureException", "Credential should be scoped to correct service: 'bedrock'."
    parts = urlsplit(path)
    text = canonical_request(method, parts.path, parts.query, dict(headers), names, raw)
    if signature_for(secret, amz_date, region, service, text) != signature:
        return (
            403,
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. Check your AWS "
            "Secret Access Key and signing method. Consult the service documentation for details.",
        )
    return None


def bedrock_auth_error(
    method: str,
    path: str,
    headers: Mapping[str, str],
    raw: bytes,
    *,
    credentials: Mapping[str, str] | None,
    api_key: str | None,
    seq: int,
) -> Plan | None:
    """The 403 for a request the fake's configured credentials do not authenticate (None: accepted)."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        if api_key is not None and auth[7:].strip() != api_key:
            return bedrock_error(
                403,
                "UnrecognizedClientException",
                "Invalid API Key format: Must start with pre-defined prefix",
                seq,
            )
        return None
    if credentials is None:
        return None
    problem = _sigv4_problem(method, path, headers, raw, credentials)
    return None if problem is None else bedrock_error(problem[0], problem[1], problem[2], seq)


# --- flattening -------------------------------------------------------------------------------------


def _cache_control(point: Any) -> JsonObject:
    ttl = point.get("ttl") if isinstance(point, dict) else None
    return {"type": "ephemeral", "ttl": "1h" if ttl == "1h" else "5m"}


def _block_segment(role: str, block: JsonObject) -> Segment:
    if "text" in block:
        text = str(block.get("text", ""))
        return Segment("messages", f"{role}:text", text, BLOCK_OVERHEAD, cacheable=bool(text))
    if "image" in block:
        return Segment(
            "messages", f"{role}:image:{hash_of(block['image'])}", "", BLOCK_OVERHEAD, IMAGE_TOKENS
        )
    if "toolUse" in block:
        use = block["toolUse"] if isinstance(block["toolUse"], dict) else {}
        text = f"{use.get('name', '')} {canonical_json(use.get('input', {}))}"
        return Segment("messages", f"{role}:tool_use:{use.get('toolUseId', '')}", text, BLOCK_OVERHEAD)
    if "toolResult" in block:
        result = _dict(block["toolResult"])
        content = _list(result.get("content"))
        text = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        images = IMAGE_TOKENS * sum(1 for c in content if isinstance(c, dict) and "image" in c)
        header = f"{role}:tool_result:{result.get('toolUseId', '')}:{result.get('status', '')}"
        return Segment("messages", header, text, BLOCK_OVERHEAD, images)
    if "reasoningContent" in block:
        reasoning = _dict(block["reasoningContent"])
        body = _dict(reasoning.get("reasoningText"))
        header = f"{role}:reasoning:{body.get('signature', '')}:{hash_of(reasoning.get('redactedContent'))}"
        return Segment("messages", header, str(body.get("text", "")), BLOCK_OVERHEAD, cacheable=False)
    return Segment("messages", f"{role}:other", canonical_json(block), BLOCK_OVERHEAD)


def _dict(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def hash_of(value: Any) -> str:
    import hashlib

    return hashlib.sha1(canonical_json(value).encode()).hexdigest()[:16]


def _with_points(blocks: list[Any], make: Callable[[JsonObject], Segment]) -> list[Segment]:
    """Segments for blocks; a ``cachePoint`` marks the segment before it instead of adding one."""
    out: list[Segment] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if "cachePoint" in block:
            if out:
                out[-1].cache_control = _cache_control(block["cachePoint"])
            continue
        out.append(make(block))
    return out


def bedrock_segments(body: JsonObject) -> list[Segment]:
    """Flatten a Converse request: each tool spec -> each system block -> each message block."""
    segments: list[Segment] = []
    tools = _list(_dict(body.get("toolConfig")).get("tools"))
    segments.extend(
        _with_points(
            tools,
            lambda t: Segment("tools", "tool", canonical_json(t.get("toolSpec", t)), TOOL_OVERHEAD),
        )
    )
    system = _list(body.get("system"))
    system_segments = _with_points(
        system, lambda b: Segment("system", "system:text", str(b.get("text", "")), BLOCK_OVERHEAD)
    )
    if system and isinstance(system[0], dict) and "cachePoint" in system[0] and segments:
        segments[-1].cache_control = _cache_control(system[0]["cachePoint"])
    segments.extend(system_segments)
    for index, message in enumerate(_list(body.get("messages"))):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        blocks = _with_points(_list(message.get("content")), functools.partial(_block_segment, role))
        segments.extend(with_message_boundary(blocks, role, index))
    return segments


# --- validation -------------------------------------------------------------------------------------


def validate_bedrock(
    body: JsonObject,
    *,
    seq: int,
    prompt_tokens: int,
    limits: ModelLimits,
    signature_ok: Callable[[str, str], bool],
) -> list[Violation]:
    """Bedrock's rules for a Converse request, in the order the service checks them."""
    found: list[Violation] = []

    def bad(rule: str, message: str) -> None:
        found.append(Violation(f"bedrock.{rule}", message, "bedrock", seq))

    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        bad(
            "required_field",
            "1 validation error detected: Value at 'messages' failed to satisfy constraint: Member must not be null",
        )
        return found
    tools: set[str] = set()
    config = body.get("toolConfig")
    if isinstance(config, dict):
        for tool in config.get("tools") or []:
            spec = tool.get("toolSpec") if isinstance(tool, dict) else None
            name = spec.get("name") if isinstance(spec, dict) else None
            if not isinstance(name, str) or not _TOOL_NAME.match(name):
                bad("tool_name", f"The tool name {name!r} is invalid: it must match [a-zA-Z0-9_-]{{1,64}}.")
            else:
                tools.add(name)
    points = sum(1 for b in body.get("system") or [] if isinstance(b, dict) and "cachePoint" in b)
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            bad(
                "invalid_role",
                f"Value at 'messages.{index + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]",
            )
            continue
        content = message.get("content")
        if not isinstance(content, list) or not content:
            bad(
                "empty_content",
                f"The content field in the Message object at messages.{index} is empty. Add a ContentBlock object to the content field and try again.",
            )
            continue
        answered: list[str] = []
        for block in content:
            if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in _BLOCK_KEYS[role]:
                bad(
                    "invalid_block",
                    f"messages.{index}.content holds a block Bedrock does not accept for role {role}: {str(block)[:80]}",
                )
                continue
            kind, value = next(iter(block.items()))
            if kind == "cachePoint":
                points += 1
            elif kind == "text" and not str(value).strip():
                bad(
                    "empty_text",
                    "The text field in the ContentBlock object is blank. Add text to the text field, and try again.",
                )
            elif kind == "toolUse":
                pending.append(str(value.get("toolUseId", "")))
            elif kind == "toolResult":
                answered.append(str(value.get("toolUseId", "")))
            elif kind == "reasoningContent":
                text_block = value.get("reasoningText") if isinstance(value, dict) else None
                if isinstance(text_block, dict) and "signature" in text_block:
                    if not signature_ok(str(text_block.get("text", "")), str(text_block.get("signature"))):
                        bad(
                            "thinking_signature",
                            f"The model returned the following errors: messages.{index}.content: Invalid `signature` in `thinking` block",
                        )
        if role == "user":
            missing = [i for i in pending if i not in answered]
            unexpected = [i for i in answered if i not in pending]
            if missing:
                bad(
                    "tool_result_missing",
                    f"Expected toolResult blocks at messages.{index}.content for the following Ids: {', '.join(missing)}",
                )
            if unexpected:
                bad(
                    "tool_result_unexpected",
                    f"The toolResult blocks at messages.{index}.content contain ids not found in the previous toolUse: {', '.join(unexpected)}",
                )
            pending = []
    if points > _MAX_CACHE_POINTS:
        bad(
            "cache_point_limit",
            f"The number of cache points ({points}) exceeds the maximum of {_MAX_CACHE_POINTS}.",
        )
    inference = body.get("inferenceConfig")
    max_tokens = inference.get("maxTokens") if isinstance(inference, dict) else None
    if isinstance(max_tokens, int) and limits.max_output_tokens and max_tokens > limits.max_output_tokens:
        bad(
            "max_tokens",
            f"The maximum tokens you requested exceeds the model limit of {limits.max_output_tokens}. Try again with a maximum tokens value that is lower than {limits.max_output_tokens}.",
        )
    window = limits.context_window
    if window and prompt_tokens > window:
        bad(
            "context_window",
            f"The model returned the following errors: prompt is too long: {prompt_tokens} tokens > {window} maximum",
        )
    return found


# --- the answer -------------------------------------------------------------------------------------


def _event(event_type: str, payload: JsonObject) -> bytes:
    return encode_message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"},
        json.dumps({**payload, "p": "abcdefghij"[: 1 + len(event_type) % 10]}, ensure_ascii=False).encode(),
    )


def bedrock_frames(reply: Reply, ctx: RenderContext, stop_reason: str) -> list[bytes]:
    """The event-stream frames of a scripted answer."""
    frames = [_event("messageStart", {"role": "assistant"})]
    index = 0
    for part in reply.part_list:
        if isinstance(part, TextPart):
            for piece in split_text(part.text, reply.chunk) or [""]:
                frames.append(
                    _event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
                )
        elif isinstance(part, ThinkingPart):
            if part.redacted:
                data = base64.b64encode(part.thinking.encode()).decode()
                frames.append(
                    _event(
                        "contentBlockDelta",
                        {
                            "contentBlockIndex": index,
                            "delta": {"reasoningContent": {"redactedContent": data}},
                        },
                    )
                )
            else:
                for piece in split_text(part.thinking, reply.chunk) or [""]:
                    frames.append(
                        _event(
                            "contentBlockDelta",
                            {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}},
                        )
                    )
                frames.append(
                    _event(
                        "contentBlockDelta",
                        {
                            "contentBlockIndex": index,
                            "delta": {"reasoningContent": {"signature": ctx.signature(part)}},
                        },
                    )
                )
        else:
            assert isinstance(part, ToolCallPart)
            call_id = ctx.call_id(part, "tooluse_fake_")
            frames.append(
                _event(
                    "contentBlockStart",
                    {
                        "contentBlockIndex": index,
                        "start": {"toolUse": {"toolUseId": call_id, "name": part.name}},
                    },
                )
            )
            for piece in split_json(part.arguments(), reply.chunk):
                frames.append(
                    _event(
                        "contentBlockDelta",
                        {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}},
                    )
                )
        frames.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    frames.append(_event("messageStop", {"stopReason": stop_reason}))
    u = ctx.usage
    usage: JsonObject = {
        "inputTokens": u["input"],
        "outputTokens": u["output"],
        "totalTokens": u["input"] + u["output"] + u["cache_read"] + u["cache_write"],
    }
    if u["cache_read"]:
        usage["cacheReadInputTokens"] = u["cache_read"]
    if u["cache_write"]:
        usage["cacheWriteInputTokens"] = u["cache_write"]
        details = [
            {"ttl": ttl, "inputTokens": u[key]}
            for ttl, key in (("5m", "cache_write_5m"), ("1h", "cache_write_1h"))
            if u.get(key)
        ]
        if details:
            usage["cacheDetails"] = details
    frames.append(_event("metadata", {"usage": usage, "metrics": {"latencyMs": 42}}))
    return frames


def model_from_path(path: str) -> str | None:
    match = BEDROCK_ROUTE.match(path.partition("?")[0])
    return unquote(match.group("model")) if match else None
