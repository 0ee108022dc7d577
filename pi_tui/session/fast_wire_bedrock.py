"""A plain history's Bedrock ``ConverseStream`` messages, built from the decoded records (see
`pi_tui.session.fast_wire`).

What `pi_tui.ai.providers._bedrock_request` gives for the typed history before its cache point (which
goes on the request's last user message, never in this part), byte for byte once encoded; tests compare
them on every fixture session and the generated big ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.ai.providers._history import sanitize_surrogates
from pi_tui.session.fast_context import JsonObject, SplitPath
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

__all__ = ["bedrock_history", "bedrock_prefix"]


def bedrock_history(
    messages: list[JsonObject], model: Model, inputs: list[object] | None = None
) -> list[WireMessage]:
    """The history's Bedrock messages, as `_bedrock_request.convert_messages` makes them without the
    cache point: the results of one turn in one user message. ``inputs`` gets the tool calls' inputs, in
    order (what encoding them checks)."""
    from pi_tui.ai.providers._bedrock_request import (
        EMPTY_TEXT,
        is_claude,
        smithy_document,
        text_block,
        tool_use_id,
    )

    claude = is_claude(model)
    out: list[WireMessage] = []
    results: list[JsonObject] | None = None  # the blocks of the last message when it holds results
    for message in messages:
        role = message["role"]
        content = message["content"]
        if role == "toolResult":
            blocks = [block for part in content_list(message) if (block := text_block(str(part["text"])))]
            result: JsonObject = {
                "toolResult": {
                    "toolUseId": tool_use_id(str(message["toolCallId"])),
                    "content": blocks or [{"text": EMPTY_TEXT}],
                    "status": "error" if message.get("isError") else "success",
                }
            }
            if results is None:
                results = [result]
                out.append({"role": "user", "content": results})
            else:
                results.append(result)
            continue
        if role == "user":
            if type(content) is str:
                blocks = [text_block(content) or {"text": EMPTY_TEXT}]
            else:
                blocks = [block for part in content_list(message) if (block := text_block(str(part["text"])))]
            out.append({"role": "user", "content": blocks or [{"text": EMPTY_TEXT}]})
            results = None
            continue
        turn: list[JsonObject] = []
        for part in content_list(message) if same_model(message, model) else assistant_parts(message, model):
            kind = part["type"]
            if kind == "text":
                block = text_block(str(part["text"]))
                if block is not None:
                    turn.append(block)
            elif kind == "toolCall":
                document = smithy_document(part.get("arguments") or {})
                turn.append(
                    {
                        "toolUse": {
                            "toolUseId": tool_use_id(str(part["id"])),
                            "name": part["name"],
                            "input": document,
                        }
                    }
                )
                if inputs is not None:
                    inputs.append(document)
            else:
                signature = optional_str(part.get("thinkingSignature"))
                if part.get("redacted"):
                    if signature:
                        turn.append({"reasoningContent": {"redactedContent": signature}})
                    continue
                thinking = sanitize_surrogates(str(part["thinking"]))
                if not thinking.strip():
                    continue
                if not claude:
                    turn.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
                elif not (signature or "").strip():
                    turn.append({"text": thinking})
                else:
                    turn.append(
                        {"reasoningContent": {"reasoningText": {"text": thinking, "signature": signature}}}
                    )
        if turn:
            out.append({"role": "assistant", "content": turn})
            results = None
    return out


def bedrock_prefix(split: SplitPath, model: Model) -> WirePrefix | None:
    """The old part of a split path as Bedrock messages for ``model``, or None when there is nothing to
    send that way."""
    inputs: list[object] = []
    messages = bedrock_history(split.prefix, model, inputs)
    return wire_prefix(split, model, messages, inputs) if messages else None
