"""A plain history's Mistral chat messages, built from the decoded records (see `pi_tui.session.fast_wire`).

What `pi_tui.ai.providers.mistral` gives for the typed history, byte for byte once encoded, for a history
whose tool calls are all the model's own: Mistral sends another model's call ids under nine-character ids
chosen so that none collide over the whole conversation, a choice the request's own messages would have to
continue; such a history is left to the typed path. Tests compare them on every fixture session and the
generated big ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.ai.providers._history import sanitize_surrogates
from pi_tui.session.fast_context import JsonObject, SplitPath, calls_of
from pi_tui.session.fast_wire import WireMessage, assistant_parts, content_list, same_model, wire_prefix

if TYPE_CHECKING:
    from pi_tui.ai.stream import WirePrefix
    from pi_tui.ai.types import Model

__all__ = ["mistral_history", "mistral_prefix"]


def mistral_history(messages: list[JsonObject], model: Model) -> list[WireMessage] | None:
    """The history's Mistral chat messages (after the system message), as `mistral.convert_messages`
    makes them; None when another model's turn holds a tool call (see the module docstring)."""
    from pi_tui.ai.providers._common import json_stringify

    out: list[WireMessage] = []
    for message in messages:
        role = message["role"]
        content = message["content"]
        if role == "user":
            if type(content) is str:
                out.append({"role": "user", "content": sanitize_surrogates(content)})
                continue
            parts = [
                {"type": "text", "text": sanitize_surrogates(str(block["text"]))}
                for block in content_list(message)
            ]
            if parts:
                out.append({"role": "user", "content": parts})
        elif role == "toolResult":
            text = "\n".join(
                sanitize_surrogates(str(block["text"])) for block in content_list(message)
            ).strip()
            prefix = "[tool error] " if message.get("isError") else ""
            out.append(
                {
                    "role": "tool",
                    "name": message["toolName"],
                    "content": [{"type": "text", "text": f"{prefix}{text or '(no tool output)'}"}],
                    "tool_call_id": message["toolCallId"],
                }
            )
        else:
            same = same_model(message, model)
            if not same and calls_of(message):
                return None
            blocks = content_list(message) if same else assistant_parts(message, model)
            turn: list[JsonObject] = []
            calls: list[JsonObject] = []
            for block in blocks:
                kind = block["type"]
                if kind == "text":
                    text = str(block["text"])
                    if text.strip():
                        turn.append({"type": "text", "text": sanitize_surrogates(text)})
                elif kind == "thinking":
                    thinking = str(block["thinking"])
                    if thinking.strip():
                        turn.append(
                            {
                                "type": "thinking",
                                "thinking": [{"type": "text", "text": sanitize_surrogates(thinking)}],
                            }
                        )
                else:
                    function = {
                        "name": block["name"],
                        "arguments": json_stringify(block.get("arguments") or {}),
                    }
                    calls.append({"id": block["id"], "type": "function", "function": function, "index": 0})
            if not turn and not calls:
                continue
            converted: WireMessage = {"role": "assistant", "prefix": False}
            if turn:
                converted["content"] = turn
            if calls:
                converted["tool_calls"] = calls
            out.append(converted)
    return out


def mistral_prefix(split: SplitPath, model: Model) -> WirePrefix | None:
    """The old part of a split path as Mistral chat messages for ``model`` (sent after the system
    message), or None when this module leaves it to the typed path."""
    messages = mistral_history(split.prefix, model)
    return wire_prefix(split, model, messages, []) if messages else None
