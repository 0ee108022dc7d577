"""Neutral reply parts → Anthropic Messages: SSE events (llm-apis.md §1.2) or a non-stream message."""

from __future__ import annotations

from pi_tui.util.json_types import JsonObject

from ._plan import sse_event
from ._render_common import RenderContext, split_json, split_text
from ._script import Reply, TextPart, ThinkingPart, ToolCallPart

__all__ = ["anthropic_frames", "anthropic_message"]

TOOL_ID_PREFIX = "toolu_fake_"


def _usage(ctx: RenderContext, output: int) -> JsonObject:
    u = ctx.usage
    return {
        "input_tokens": u["input"],
        "cache_creation_input_tokens": u["cache_write"],
        "cache_read_input_tokens": u["cache_read"],
        "cache_creation": {
            "ephemeral_5m_input_tokens": u["cache_write_5m"],
            "ephemeral_1h_input_tokens": u["cache_write_1h"],
        },
        "output_tokens": output,
        "service_tier": "standard",
    }


def _stop_sequence(reply: Reply, ctx: RenderContext) -> str | None:
    if reply.resolved_stop_reason() != "stop_sequence":
        return None
    sequences = ctx.body.get("stop_sequences")
    return str(sequences[0]) if isinstance(sequences, list) and sequences else "\n\nHuman:"


def _shell(
    ctx: RenderContext, stop_reason: str | None, stop_sequence: str | None, output: int
) -> JsonObject:
    return {
        "id": f"msg_fake_{ctx.seq:04d}",
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": [],
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": _usage(ctx, output),
    }


def anthropic_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """The complete SSE event sequence for a streamed reply."""
    frames = [sse_event("message_start", {"type": "message_start", "message": _shell(ctx, None, None, 1)})]
    if reply.ping:
        frames.append(sse_event("ping", {"type": "ping"}))

    def block(index: int, shell: JsonObject, deltas: list[JsonObject]) -> None:
        frames.append(
            sse_event(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": shell}
            )
        )
        for delta in deltas:
            frames.append(
                sse_event(
                    "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
                )
            )
        frames.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": index}))

    for index, part in enumerate(reply.part_list):
        if isinstance(part, TextPart):
            deltas = [{"type": "text_delta", "text": t} for t in split_text(part.text, reply.chunk)]
            block(index, {"type": "text", "text": ""}, deltas)
        elif isinstance(part, ThinkingPart) and part.redacted:
            block(index, {"type": "redacted_thinking", "data": part.thinking}, [])
        elif isinstance(part, ThinkingPart):
            deltas = [
                {"type": "thinking_delta", "thinking": t} for t in split_text(part.thinking, reply.chunk)
            ]
            deltas.append({"type": "signature_delta", "signature": ctx.signature(part)})
            block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)
        elif isinstance(part, ToolCallPart):
            shell = {
                "type": "tool_use",
                "id": ctx.call_id(part, TOOL_ID_PREFIX),
                "name": part.name,
                "input": {},
            }
            pieces = ["", *split_json(part.arguments(), reply.chunk)]
            block(index, shell, [{"type": "input_json_delta", "partial_json": p} for p in pieces])

    usage = _usage(ctx, ctx.usage["output"])
    usage.pop("cache_creation")
    usage.pop("service_tier")
    delta = {"stop_reason": reply.resolved_stop_reason(), "stop_sequence": _stop_sequence(reply, ctx)}
    frames.append(sse_event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    frames.append(sse_event("message_stop", {"type": "message_stop"}))
    return frames


def anthropic_message(reply: Reply, ctx: RenderContext) -> JsonObject:
    """The non-stream ``Message`` for a reply."""
    message = _shell(ctx, reply.resolved_stop_reason(), _stop_sequence(reply, ctx), ctx.usage["output"])
    content: list[JsonObject] = message["content"]
    for part in reply.part_list:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart) and part.redacted:
            content.append({"type": "redacted_thinking", "data": part.thinking})
        elif isinstance(part, ThinkingPart):
            content.append({"type": "thinking", "thinking": part.thinking, "signature": ctx.signature(part)})
        elif isinstance(part, ToolCallPart):
            call_id = ctx.call_id(part, TOOL_ID_PREFIX)
            content.append(
                {"type": "tool_use", "id": call_id, "name": part.name, "input": part.parsed_input()}
            )
    return message
