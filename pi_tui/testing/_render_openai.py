"""Neutral reply parts → OpenAI Chat Completions chunks and Responses events (llm-apis.md §2.1, §2.3)."""

from __future__ import annotations

from typing import Any

from pi_tui.util.json_types import JsonObject

from ._plan import sse_data, sse_event
from ._render_common import RenderContext, split_json, split_text
from ._script import Reply, TextPart, ThinkingPart, ToolCallPart

__all__ = ["chat_completion", "chat_frames", "responses_frames", "responses_object", "FINISH_REASONS"]

CALL_ID_PREFIX = "call_fake_"
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


# ---------------------------------------------------------------------------------------------------
# Chat Completions
# ---------------------------------------------------------------------------------------------------


def _chat_usage(ctx: RenderContext) -> JsonObject:
    u = ctx.usage
    prompt = u["input"] + u["cache_read"] + u["cache_write"]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u["output"],
        "total_tokens": prompt + u["output"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read"], "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u["reasoning"], "audio_tokens": 0},
    }


def chat_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """The chunk sequence of a streamed chat completion, up to and including ``[DONE]``."""
    options = ctx.body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    base: JsonObject = {
        "id": f"chatcmpl-fake-{ctx.seq:04d}",
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_fake",
    }
    if include_usage:
        base["usage"] = None

    def chunk(delta: JsonObject, finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return sse_data({**base, "choices": [choice]})

    frames = [chunk({"role": "assistant", "content": ""})]
    calls: list[list[JsonObject]] = []
    for part in reply.part_list:
        if isinstance(part, TextPart):
            frames.extend(chunk({"content": t}) for t in split_text(part.text, reply.chunk))
        elif isinstance(part, ThinkingPart):
            if ctx.reasoning_field and not part.redacted:
                frames.extend(chunk({ctx.reasoning_field: t}) for t in split_text(part.thinking, reply.chunk))
        elif isinstance(part, ToolCallPart):
            k = len(calls)
            opening = {
                "index": k,
                "id": ctx.call_id(part, CALL_ID_PREFIX),
                "type": "function",
                "function": {"name": part.name, "arguments": ""},
            }
            fragments = [
                {"index": k, "function": {"arguments": a}} for a in split_json(part.arguments(), reply.chunk)
            ]
            calls.append([opening, *fragments])
            if not reply.interleave_tool_calls:
                frames.extend(chunk({"tool_calls": [d]}) for d in calls[-1])
    if reply.interleave_tool_calls:
        # Round-robin over the calls: index 0, 1, 0, 1, … as parallel calls arrive from real servers.
        while any(calls):
            for queue in calls:
                if queue:
                    frames.append(chunk({"tool_calls": [queue.pop(0)]}))
    frames.append(chunk({}, FINISH_REASONS[reply.resolved_stop_reason()]))
    if include_usage:
        frames.append(sse_data({**base, "choices": [], "usage": _chat_usage(ctx)}))
    frames.append(sse_data("[DONE]"))
    return frames


def chat_completion(reply: Reply, ctx: RenderContext) -> JsonObject:
    """The non-stream ``ChatCompletion`` for a reply."""
    texts = [p.text for p in reply.part_list if isinstance(p, TextPart)]
    message: JsonObject = {
        "role": "assistant",
        "content": "".join(texts) if texts else None,
        "refusal": None,
    }
    thoughts = [p.thinking for p in reply.part_list if isinstance(p, ThinkingPart) and not p.redacted]
    if thoughts and ctx.reasoning_field:
        message[ctx.reasoning_field] = "".join(thoughts)
    calls = [
        {
            "id": ctx.call_id(p, CALL_ID_PREFIX),
            "type": "function",
            "function": {"name": p.name, "arguments": p.arguments()},
        }
        for p in reply.part_list
        if isinstance(p, ToolCallPart)
    ]
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-fake-{ctx.seq:04d}",
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": FINISH_REASONS[reply.resolved_stop_reason()],
                "logprobs": None,
            }
        ],
        "usage": _chat_usage(ctx),
    }


# ---------------------------------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------------------------------


def _responses_usage(ctx: RenderContext) -> JsonObject:
    u = ctx.usage
    prompt = u["input"] + u["cache_read"] + u["cache_write"]
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": u["cache_read"], "cache_write_tokens": u["cache_write"]},
        "output_tokens": u["output"],
        "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
        "total_tokens": prompt + u["output"],
    }


def _echo_tools(body: JsonObject) -> list[JsonObject]:
    tools = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("name"), str):
            keys = ("type", "name", "description", "parameters", "strict")
            tools.append({k: tool.get(k) for k in keys})
    return tools


def _status(reply: Reply) -> tuple[str, dict[str, str] | None]:
    reason = reply.resolved_stop_reason()
    if reason in ("max_tokens", "model_context_window_exceeded"):
        return "incomplete", {"reason": "max_output_tokens"}
    if reason == "refusal":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def _response(ctx: RenderContext, status: str, output: list[JsonObject], **extra: Any) -> JsonObject:
    choice = ctx.body.get("tool_choice", "auto")
    return {
        "id": f"resp_fake_{ctx.seq:04d}",
        "object": "response",
        "created_at": ctx.created,
        "model": ctx.model,
        "status": status,
        "output": output,
        "parallel_tool_calls": bool(ctx.body.get("parallel_tool_calls", True)),
        "tool_choice": choice if isinstance(choice, str | dict) else "auto",
        "tools": _echo_tools(ctx.body),
        "instructions": ctx.body.get("instructions")
        if isinstance(ctx.body.get("instructions"), str)
        else None,
        "error": None,
        "incomplete_details": None,
        "usage": None,
        **extra,
    }


def _wants_encrypted(ctx: RenderContext) -> bool:
    include = ctx.body.get("include")
    return isinstance(include, list) and "reasoning.encrypted_content" in include


def _items(reply: Reply, ctx: RenderContext) -> list[tuple[JsonObject, list[tuple[str, JsonObject]]]]:
    """Each output item in its final form, with the events that stream its content."""
    items: list[tuple[JsonObject, list[tuple[str, JsonObject]]]] = []
    for i, part in enumerate(reply.part_list):
        if isinstance(part, ThinkingPart):
            item: JsonObject = {"type": "reasoning", "id": f"rs_fake_{ctx.seq:04d}_{i}", "summary": []}
            events: list[tuple[str, JsonObject]] = []
            if part.redacted:
                item["encrypted_content"] = part.thinking
            else:
                if _wants_encrypted(ctx):
                    item["encrypted_content"] = ctx.signature(part)
                item["summary"] = [{"type": "summary_text", "text": part.thinking}]
                ids = {"item_id": item["id"], "summary_index": 0}
                empty = {"type": "summary_text", "text": ""}
                events.append(("response.reasoning_summary_part.added", {**ids, "part": empty}))
                for t in split_text(part.thinking, reply.chunk):
                    events.append(("response.reasoning_summary_text.delta", {**ids, "delta": t}))
                events.append(("response.reasoning_summary_text.done", {**ids, "text": part.thinking}))
                events.append(("response.reasoning_summary_part.done", {**ids, "part": item["summary"][0]}))
            items.append((item, events))
        elif isinstance(part, TextPart):
            item_id = f"msg_fake_{ctx.seq:04d}_{i}"
            final_part = {"type": "output_text", "text": part.text, "annotations": []}
            item = {
                "type": "message",
                "id": item_id,
                "status": "completed",
                "role": "assistant",
                "content": [final_part],
            }
            ids = {"item_id": item_id, "content_index": 0}
            events = [("response.content_part.added", {**ids, "part": {**final_part, "text": ""}})]
            for t in split_text(part.text, reply.chunk):
                events.append(("response.output_text.delta", {**ids, "delta": t, "logprobs": []}))
            events.append(("response.output_text.done", {**ids, "text": part.text, "logprobs": []}))
            events.append(("response.content_part.done", {**ids, "part": final_part}))
            items.append((item, events))
        elif isinstance(part, ToolCallPart):
            call_id = ctx.call_id(part, CALL_ID_PREFIX)
            item_id = "fc_fake_" + call_id.removeprefix(CALL_ID_PREFIX)
            arguments = part.arguments()
            item = {
                "type": "function_call",
                "id": item_id,
                "call_id": call_id,
                "name": part.name,
                "arguments": arguments,
                "status": "completed",
            }
            events = [
                ("response.function_call_arguments.delta", {"item_id": item_id, "delta": a})
                for a in split_json(arguments, reply.chunk)
            ]
            events.append(
                (
                    "response.function_call_arguments.done",
                    {"item_id": item_id, "arguments": arguments, "name": part.name},
                )
            )
            items.append((item, events))
    return items


def _opening(item: JsonObject) -> JsonObject:
    """The item as announced by ``output_item.added``: empty content, in progress."""
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    if item["type"] == "function_call":
        return {**item, "status": "in_progress", "arguments": ""}
    return {**item, "summary": []}


def responses_frames(reply: Reply, ctx: RenderContext) -> list[bytes]:
    """The event sequence of a streamed response, ending with ``response.completed`` / ``.incomplete``."""
    frames: list[bytes] = []

    def emit(event: str, data: JsonObject) -> None:
        frames.append(sse_event(event, {"type": event, **data, "sequence_number": len(frames)}))

    emit("response.created", {"response": _response(ctx, "in_progress", [])})
    emit("response.in_progress", {"response": _response(ctx, "in_progress", [])})
    output: list[JsonObject] = []
    for index, (item, events) in enumerate(_items(reply, ctx)):
        emit("response.output_item.added", {"output_index": index, "item": _opening(item)})
        for event, data in events:
            emit(event, {"output_index": index, **data})
        emit("response.output_item.done", {"output_index": index, "item": item})
        output.append(item)
    status, details = _status(reply)
    final = _response(ctx, status, output, usage=_responses_usage(ctx), incomplete_details=details)
    emit("response.completed" if status == "completed" else "response.incomplete", {"response": final})
    return frames


def responses_object(reply: Reply, ctx: RenderContext) -> JsonObject:
    """The non-stream ``Response`` for a reply."""
    status, details = _status(reply)
    output = [item for item, _ in _items(reply, ctx)]
    return _response(ctx, status, output, usage=_responses_usage(ctx), incomplete_details=details)
