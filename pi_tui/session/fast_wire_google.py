"""A plain history's Gemini ``contents``, built from the decoded records (see `pi_tui.session.fast_wire`).

What `pi_tui.ai.providers._google_request` gives for the typed history (the Gemini API's and Vertex AI's
bodies), byte for byte once encoded; tests compare them on every fixture session and the generated big
ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.ai.providers._history import sanitize_surrogates
from pi_tui.session.fast_context import JsonObject, SplitPath, calls_of
from pi_tui.session.fast_wire import (
    WireMessage,
    assistant_parts,
    content_list,
    optional_str,
    same_model,
    wire_prefix,
)

if TYPE_CHECKING:
    from pi_tui.ai.stream import WirePrefix
    from pi_tui.ai.types import Model

__all__ = ["google_history", "google_prefix"]


def google_history(
    messages: list[JsonObject], model: Model, inputs: list[object] | None = None
) -> list[WireMessage]:
    """The history's Gemini ``contents``, as `_google_request.convert_messages` makes them: the results
    of one model turn in one user content. ``inputs`` gets the function calls' arguments, in order (what
    encoding them checks)."""
    from pi_tui.ai.providers._google_request import pi_tool_call_id, requires_tool_call_id, valid_signature

    with_id = requires_tool_call_id(model.id)
    out: list[WireMessage] = []
    results: list[JsonObject] | None = None  # the parts of the last content when it holds results
    ids: dict[str, str] = {}  # another model's tool-call id -> the id sent for it
    for message in messages:
        role = message["role"]
        content = message["content"]
        if role == "toolResult":
            call_id = str(message["toolCallId"])
            text = "\n".join(str(part["text"]) for part in content_list(message))
            value = sanitize_surrogates(text) if text else ""
            response: JsonObject = {
                "name": message["toolName"],
                "response": {"error": value} if message.get("isError") else {"output": value},
            }
            if with_id:
                response["id"] = ids.get(call_id, call_id)
            if results is None:
                results = [{"functionResponse": response}]
                out.append({"parts": results, "role": "user"})
            else:
                results.append({"functionResponse": response})
            continue
        if role == "user":
            if type(content) is str:
                parts: list[JsonObject] = [{"text": sanitize_surrogates(content)}]
            else:
                parts = [{"text": sanitize_surrogates(str(block["text"]))} for block in content_list(message)]
            if parts:
                out.append({"parts": parts, "role": "user"})
                results = None
            continue
        same = same_model(message, model)
        if not same and with_id:
            for made in calls_of(message):
                renamed = pi_tool_call_id(str(made["id"]))
                if renamed != made["id"]:
                    ids[str(made["id"])] = renamed
        parts = []
        for block in content_list(message) if same else assistant_parts(message, model):
            kind = block["type"]
            if kind == "text":
                signature = optional_str(block.get("textSignature")) if same else None
                if not valid_signature(signature):
                    signature = None
                text = str(block["text"])
                if not text.strip() and not signature:
                    continue
                part: JsonObject = {"text": sanitize_surrogates(text)}
                if signature:
                    part["thoughtSignature"] = signature
                parts.append(part)
            elif kind == "thinking":  # the same model's only: another's became text
                if block.get("redacted"):
                    continue
                signature = optional_str(block.get("thinkingSignature"))
                if not valid_signature(signature):
                    signature = None
                thinking = str(block["thinking"])
                if not thinking.strip() and not signature:
                    continue
                part = {"text": sanitize_surrogates(thinking), "thought": True}
                if signature:
                    part["thoughtSignature"] = signature
                parts.append(part)
            else:
                call_id = str(block["id"])
                arguments = block.get("arguments") or {}
                call: JsonObject = {"args": arguments}
                if with_id:
                    call["id"] = ids.get(call_id, call_id)
                call["name"] = block["name"]
                wire: JsonObject = {"functionCall": call}
                thought = optional_str(block.get("thoughtSignature"))
                if same and valid_signature(thought):
                    wire["thoughtSignature"] = thought
                parts.append(wire)
                if inputs is not None:
                    inputs.append(arguments)
        if parts:
            out.append({"parts": parts, "role": "model"})
            results = None
    return out


def google_prefix(split: SplitPath, model: Model) -> WirePrefix | None:
    """The old part of a split path as Gemini ``contents`` for ``model`` (the Gemini API's or Vertex
    AI's), or None when there is nothing to send that way."""
    inputs: list[object] = []
    contents = google_history(split.prefix, model, inputs)
    return wire_prefix(split, model, contents, inputs) if contents else None
