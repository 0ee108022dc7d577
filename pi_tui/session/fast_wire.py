"""A plain history's messages in a provider's wire shape, built from the decoded records.

The second half of `pi_tui.session.fast_context` (which reads and cuts the path): for the plain shapes
only, these builders give what `pi_tui.ai.providers.anthropic`, `openai_completions`
and `openai_responses` give for the typed history (same-model and other-model turns, the compat flags of
Chat Completions), byte for byte once encoded (`encode_wire`); tests compare them on every fixture
session and the generated big ones. Gemini's builder is in `pi_tui.session.fast_wire_google`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import chain
from typing import TYPE_CHECKING, cast

from pi_tui.ai.providers._history import sanitize_surrogates
from pi_tui.session.fast_context import JsonObject, SplitPath, calls_of

if TYPE_CHECKING:
    from pi_tui.ai.stream import WirePrefix
    from pi_tui.ai.types import Model

__all__ = [
    "WireMessage",
    "anthropic_history",
    "anthropic_prefix",
    "assistant_parts",
    "chat_history",
    "chat_prefix",
    "content_list",
    "encode_messages",
    "encode_wire",
    "optional_str",
    "prefix_builder",
    "responses_history",
    "responses_prefix",
    "same_model",
    "wire_prefix",
]

WireMessage = dict[str, object]


def same_model(message: Mapping[str, object], model: Model) -> bool:
    """Whether an assistant record was answered by ``model`` (its provider, API and id)."""
    return (
        message.get("provider", "") == model.provider
        and message.get("api", "") == model.api
        and message.get("model", "") == model.id
    )


def content_list(message: Mapping[str, object]) -> list[JsonObject]:
    """A record's ``content`` blocks (a message whose content the plain checks found to be a list)."""
    content = message["content"]
    assert type(content) is list
    return content


def assistant_parts(message: Mapping[str, object], model: Model) -> list[JsonObject]:
    """The turn's blocks as `prepare_messages` leaves them: another model's thinking becomes text."""
    blocks = content_list(message)
    if same_model(message, model):
        return blocks
    parts: list[JsonObject] = []
    for block in blocks:
        if block["type"] == "thinking":
            thinking = block["thinking"]
            assert type(thinking) is str
            if block.get("redacted") or not thinking.strip():
                continue
            parts.append({"type": "text", "text": thinking})
        else:
            parts.append(block)
    return parts


def anthropic_history(
    messages: list[JsonObject], model: Model, inputs: list[object] | None = None
) -> list[WireMessage] | None:
    """The history's Anthropic Messages wire messages, as `anthropic.convert_messages` makes them
    before the cache marker is placed; None for a shape this module leaves to the typed path.
    ``inputs`` gets the tool calls' inputs, in order (what encoding them checks).

    One pass with no call per message but the ones a message needs (this runs over every message
    of a big session before its first request is written): texts known to be plain JSON strings are
    sanitized only when not ASCII, and a result's ``tool_use_id`` is the one its call got just before.
    """
    from pi_tui.ai.providers.anthropic import tool_use_id

    if (model.compat or {}).get("allowEmptySignature") is True:
        return None
    out: list[WireMessage] = []
    provider, api, model_id = model.provider, model.api, model.id
    # the tool_result blocks of the last wire message when it is made of them, which the next result joins
    results: list[JsonObject] | None = None
    sent_ids: dict[str, str] = {}  # the last turn's call ids -> the ids sent for them
    for message in messages:
        role = message["role"]
        content = message["content"]
        if role == "toolResult":
            parts = cast(list[JsonObject], content)
            text = (
                cast(str, parts[0]["text"])
                if len(parts) == 1
                else "\n".join(cast(str, part["text"]) for part in parts)
            )
            call_id = cast(str, message["toolCallId"])
            block: JsonObject = {
                "type": "tool_result",
                "tool_use_id": sent_ids.get(call_id) or tool_use_id(call_id),
                "content": text if text.isascii() else sanitize_surrogates(text),
                "is_error": bool(message.get("isError", False)),
            }
            if results is None:
                results = [block]
                out.append({"role": "user", "content": results})
            else:
                results.append(block)
            continue
        if role == "user":
            if type(content) is str:
                text = content if content.isascii() else sanitize_surrogates(content)
                if text.strip():
                    out.append({"role": "user", "content": text})
                    results = None
                continue
            blocks: list[JsonObject] = []
            for block in cast(list[JsonObject], content):
                text = cast(str, block["text"])
                if not text.isascii():
                    text = sanitize_surrogates(text)
                if text.strip():
                    blocks.append({"type": "text", "text": text})
            if blocks:
                out.append({"role": "user", "content": blocks})
                results = None
            continue
        same = (
            message.get("provider", "") == provider
            and message.get("api", "") == api
            and message.get("model", "") == model_id
        )
        blocks = []
        sent_ids = {}
        for block in cast(list[JsonObject], content) if same else assistant_parts(message, model):
            kind = block["type"]
            if kind == "toolCall":
                arguments = block.get("arguments", {})
                call_id = cast(str, block["id"])
                wire_id = sent_ids[call_id] = tool_use_id(call_id)
                blocks.append({"type": "tool_use", "id": wire_id, "name": block["name"], "input": arguments})
                if inputs is not None:
                    inputs.append(arguments)
            elif kind == "text":
                text = cast(str, block["text"])
                if text.strip():
                    blocks.append(
                        {"type": "text", "text": text if text.isascii() else sanitize_surrogates(text)}
                    )
            else:
                signature = block.get("thinkingSignature")
                thinking = cast(str, block["thinking"])
                if block.get("redacted"):
                    if signature:
                        blocks.append({"type": "redacted_thinking", "data": signature})
                elif type(signature) is str and signature.strip():
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": thinking if thinking.isascii() else sanitize_surrogates(thinking),
                            "signature": signature,
                        }
                    )
                elif thinking.strip():
                    blocks.append(
                        {
                            "type": "text",
                            "text": thinking if thinking.isascii() else sanitize_surrogates(thinking),
                        }
                    )
        if blocks:
            out.append({"role": "assistant", "content": blocks})
            results = None
    return out


def chat_history(
    messages: list[JsonObject], model: Model, compat: Mapping[str, object]
) -> list[WireMessage] | None:
    """The history's Chat Completions wire messages (after the system message), as
    `openai_completions.convert_messages` makes them; ``compat`` is the model's resolved compat."""
    helpers = _ChatHelpers()
    foreign_call_id = helpers.foreign_call_id
    out: list[WireMessage] = []
    ids: dict[str, str] = {}  # tool-call ids of other models' turns -> the ids sent

    def append_user(user: WireMessage) -> None:
        if compat["requiresAssistantAfterToolResult"] and out and out[-1]["role"] == "tool":
            out.append({"role": "assistant", "content": "I have processed the tool results."})
        out.append(user)

    for message in messages:
        role = message["role"]
        content = message["content"]
        if role == "user":
            if type(content) is str:
                append_user({"role": "user", "content": sanitize_surrogates(content)})
                continue
            parts = [
                {"type": "text", "text": sanitize_surrogates(str(block["text"]))}
                for block in content_list(message)
                if block["text"]
            ]
            if parts:
                append_user({"role": "user", "content": parts})
        elif role == "assistant":
            same = same_model(message, model)
            if not same:
                for call in calls_of(message):
                    ids[str(call["id"])] = foreign_call_id(str(call["id"]), model)
            converted = _chat_assistant(message, model, compat, same, helpers)
            if converted is not None:
                out.append(converted)
        else:
            call_id = str(message["toolCallId"])
            text = "\n".join(str(part["text"]) for part in content_list(message))
            tool: WireMessage = {
                "role": "tool",
                "content": sanitize_surrogates(text or "(no tool output)"),
                "tool_call_id": ids.get(call_id, call_id),
            }
            if compat["requiresToolResultName"]:
                tool["name"] = message["toolName"]
            out.append(tool)
    return out


class _ChatHelpers:
    """The Chat Completions provider's helpers, imported once for a whole history."""

    def __init__(self) -> None:
        from pi_tui.ai.providers._common import json_stringify
        from pi_tui.ai.providers.openai_completions import REASONING_FIELDS, foreign_call_id

        self.json_stringify = json_stringify
        self.reasoning_fields = REASONING_FIELDS
        self.foreign_call_id = foreign_call_id


def _chat_assistant(
    message: Mapping[str, object],
    model: Model,
    compat: Mapping[str, object],
    same: bool,
    helpers: _ChatHelpers,
) -> WireMessage | None:
    json_stringify, foreign_call_id = helpers.json_stringify, helpers.foreign_call_id
    REASONING_FIELDS = helpers.reasoning_fields  # noqa: N806 (the provider's constant, under its name)

    parts = assistant_parts(message, model)
    texts = [
        sanitize_surrogates(str(p["text"])) for p in parts if p["type"] == "text" and str(p["text"]).strip()
    ]
    thoughts = [p for p in parts if p["type"] == "thinking" and str(p["thinking"]).strip()]
    calls = [p for p in parts if p["type"] == "toolCall"]
    text = "".join(texts)
    converted: WireMessage = {
        "role": "assistant",
        "content": "" if compat["requiresAssistantAfterToolResult"] else None,
    }
    if thoughts and compat["requiresThinkingAsText"]:
        joined = "\n\n".join(sanitize_surrogates(str(p["thinking"])) for p in thoughts)
        converted["content"] = [
            {"type": "text", "text": joined},
            *({"type": "text", "text": t} for t in texts),
        ]
    else:
        if text:
            converted["content"] = text
        field = thoughts[0].get("thinkingSignature") if thoughts else None
        if field == "reasoning" and model.provider == "opencode-go":
            field = "reasoning_content"
        if field in REASONING_FIELDS:
            converted[str(field)] = "\n".join(str(p["thinking"]) for p in thoughts)
    if calls:
        converted["tool_calls"] = [
            {
                "id": call["id"] if same else foreign_call_id(str(call["id"]), model),
                "type": "function",
                "function": {"name": call["name"], "arguments": json_stringify(call.get("arguments", {}))},
            }
            for call in calls
        ]
    if not converted["content"] and not calls:
        return None
    if (
        compat.get("requiresReasoningContentOnAssistantMessages")
        and model.reasoning
        and "reasoning_content" not in converted
    ):
        converted["reasoning_content"] = ""
    return converted


def responses_history(
    messages: list[JsonObject], model: Model, stored: list[object] | None = None
) -> tuple[list[WireMessage], int]:
    """The history's Responses input items (after the instructions), as `openai_responses.convert_input`
    makes them, and how many messages became items (what the ids of texts without one count).
    ``stored`` gets the reasoning items replayed from thinking signatures (the server's JSON, not
    known to be plain values)."""
    turns = _ResponsesTurns(model, stored)
    items: list[WireMessage] = []
    emitted = 0
    ids: dict[str, str] = {}  # tool-call ids of other models' turns -> the ids sent
    for message in messages:
        role = message["role"]
        content = message["content"]
        if role == "user":
            if type(content) is str:
                parts = [{"type": "input_text", "text": sanitize_surrogates(content)}]
            else:
                parts = [
                    {"type": "input_text", "text": sanitize_surrogates(str(block["text"]))}
                    for block in content_list(message)
                ]
            if parts:
                items.append({"role": "user", "content": parts})
                emitted += 1
        elif role == "toolResult":
            call_id = str(message["toolCallId"])
            call_id = ids.get(call_id, call_id)
            text = "\n".join(str(block["text"]) for block in content_list(message))
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id.split("|", 1)[0],
                    "output": sanitize_surrogates(text or "(no tool output)"),
                }
            )
            emitted += 1
        else:
            converted = turns.items(message, emitted, ids)
            if converted:
                items.extend(converted)
                emitted += 1
    return items, emitted


class _ResponsesTurns:
    """`openai_responses._assistant_items` of turns as `prepare_messages` leaves them (another model's
    thinking as text, its texts and calls without their signatures); the provider's helpers are
    imported once for a whole history."""

    def __init__(self, model: Model, stored: list[object] | None) -> None:
        from pi_tui.ai.providers._common import json_stringify
        from pi_tui.ai.providers._history import short_hash
        from pi_tui.ai.providers.openai_responses import foreign_call_id, reasoning_item, text_signature

        self.model = model
        self.stored = stored
        self.json_stringify = json_stringify
        self.short_hash = short_hash
        self.foreign_call_id = foreign_call_id
        self.reasoning_item = reasoning_item
        self.text_signature = text_signature

    def items(self, message: Mapping[str, object], index: int, ids: dict[str, str]) -> list[WireMessage]:
        """The turn's items (``index``: the messages before it that became items); ``ids`` gets the ids
        sent for another model's calls, which its results answer."""
        model = self.model
        provider, api = str(message.get("provider", "")), str(message.get("api", ""))
        same = provider == model.provider and api == model.api and message.get("model", "") == model.id
        other_model = provider == model.provider and api == model.api and not same
        items: list[WireMessage] = []
        texts = 0
        for block in content_list(message) if same else assistant_parts(message, model):
            kind = block["type"]
            if kind == "thinking":  # only the same model's: another's became text
                reasoning = self.reasoning_item(optional_str(block.get("thinkingSignature")))
                if reasoning is not None:
                    items.append(reasoning)
                    if self.stored is not None:
                        self.stored.append(reasoning)
            elif kind == "text":
                signature = optional_str(block.get("textSignature")) if same else None
                item_id, phase = self.text_signature(signature) if signature else (None, None)
                if not item_id:
                    item_id = f"msg_pi_{index}" if texts == 0 else f"msg_pi_{index}_{texts}"
                elif len(item_id) > 64:
                    item_id = f"msg_{self.short_hash(item_id)}"
                texts += 1
                item: WireMessage = {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": sanitize_surrogates(str(block["text"])),
                            "annotations": [],
                        }
                    ],
                    "status": "completed",
                    "id": item_id,
                }
                if phase is not None:
                    item["phase"] = phase
                items.append(item)
            else:
                call_id = str(block["id"])
                if same:
                    full_id = call_id
                else:
                    full_id = ids[call_id] = self.foreign_call_id(call_id, model, provider, api)
                wire_id, _, rest = full_id.partition("|")
                item_id = rest.split("|", 1)[0]
                call: WireMessage = {"type": "function_call"}
                if item_id.startswith("fc_") and not other_model:
                    call["id"] = item_id
                call.update(
                    call_id=wire_id,
                    name=block["name"],
                    arguments=self.json_stringify(block.get("arguments", {})),
                )
                items.append(call)
        return items


def optional_str(value: object) -> str | None:
    """A field the plain checks let be a string or missing (or null)."""
    return value if type(value) is str else None


def encode_wire(messages: list[WireMessage]) -> bytes:
    """The messages' JSON as the provider's encoder writes it (`encode_body`), comma-joined without
    brackets: by orjson at once when every value is plain (`json_plain`: what it writes byte for byte
    as the stdlib does), else message by message by the stdlib."""
    return encode_messages(messages, _tool_inputs(messages))


def encode_messages(messages: list[WireMessage], inputs: list[object]) -> bytes:
    """`encode_wire`, given the messages' tool-call inputs."""
    from pi_tui.ai.providers._wire_cache import dumps

    if _inputs_plain(inputs):
        import orjson

        try:
            return orjson.dumps(messages)[1:-1]
        except TypeError:  # a value orjson refuses (a lone surrogate in tool arguments)
            pass
    return b",".join(dumps(message).encode() for message in messages)


def _tool_inputs(messages: list[WireMessage]) -> list[object]:
    """The inputs of the messages' tool calls (Anthropic): the only values the builders do not write
    as strings, booleans or nulls."""
    return [
        block["input"]
        for message in messages
        if message["role"] == "assistant" and type(message["content"]) is list
        for block in cast(list[JsonObject], message["content"])
        if block["type"] == "tool_use"
    ]


def _inputs_plain(inputs: list[object]) -> bool:
    """Whether `json_plain` holds for every input, with the inputs' keys and top-level values checked
    all at once by C iterators: most inputs are flat objects of strings, and only what is not a plain
    scalar is looked into."""
    from pi_tui.ai.providers._wire_cache import json_plain

    objects = cast(list[JsonObject], [value for value in inputs if type(value) is dict])
    if len(objects) != len(inputs) and not all(
        json_plain(value) for value in inputs if type(value) is not dict
    ):
        return False
    if not set(map(type, chain.from_iterable(objects))) <= _STRING_ONLY:
        return False  # a key that is not a string
    values = list(chain.from_iterable(map(dict.values, objects)))
    return set(map(type, values)) <= _SCALARS or all(map(json_plain, values))


_STRING_ONLY = frozenset({str})
_SCALARS = frozenset({str, bool, int, type(None)})


def wire_prefix(
    split: SplitPath, model: Model, messages: list[WireMessage], inputs: list[object], converted: int = 0
) -> WirePrefix:
    """The `WirePrefix` of ``messages``, the old part of ``split`` in ``model``'s wire shape: their JSON
    encoded once (``inputs``: their tool-call inputs, `encode_messages`), and whether that part holds
    tool results."""
    from pi_tui.ai.stream import WirePrefix

    tools = any(message["role"] == "toolResult" for message in split.prefix)
    return WirePrefix(
        api=model.api,
        messages=messages,
        json=encode_messages(messages, inputs),
        has_tool_history=tools,
        converted=converted,
    )


def anthropic_prefix(split: SplitPath, model: Model) -> WirePrefix | None:
    """The old part of a split path as an Anthropic Messages `WirePrefix` for ``model``, or None when
    this module leaves its shapes to the typed path."""
    inputs: list[object] = []
    messages = anthropic_history(split.prefix, model, inputs)
    return wire_prefix(split, model, messages, inputs) if messages else None


def chat_prefix(split: SplitPath, model: Model) -> WirePrefix | None:
    """The old part of a split path as a Chat Completions `WirePrefix` for ``model`` (sent after the
    instructions), or None when this module leaves it to the typed path: a history ending in a tool
    result where the server wants an assistant turn between it and the next prompt (the converter
    adds that turn only when it sees both)."""
    from pi_tui.ai.providers._openai_compat import resolve_compat

    compat = resolve_compat(model)
    messages = chat_history(split.prefix, model, compat)
    if not messages or (compat["requiresAssistantAfterToolResult"] and messages[-1]["role"] == "tool"):
        return None
    return wire_prefix(split, model, messages, [])


def responses_prefix(split: SplitPath, model: Model) -> WirePrefix | None:
    """The old part of a split path as a Responses `WirePrefix` for ``model`` (sent after the
    instructions), or None when there is nothing to send that way."""
    stored: list[object] = []
    items, emitted = responses_history(split.prefix, model, stored)
    return wire_prefix(split, model, items, stored, emitted) if items else None


def prefix_builder(api: str) -> Callable[[SplitPath, Model], WirePrefix | None] | None:
    """The builder of a first request's old history in ``api``'s wire shape, from the file's records
    (None: an API whose first request is built from the typed history)."""
    from .fast_wire_bedrock import bedrock_prefix
    from .fast_wire_google import google_prefix
    from .fast_wire_mistral import mistral_prefix

    return {
        "anthropic-messages": anthropic_prefix,
        "openai-completions": chat_prefix,
        # Azure's and Codex's Responses APIs send OpenAI's Responses input items
        "openai-responses": responses_prefix,
        "azure-openai-responses": responses_prefix,
        "openai-codex-responses": responses_prefix,
        "google-generative-ai": google_prefix,
        "google-vertex": google_prefix,
        "mistral-conversations": mistral_prefix,
        "bedrock-converse-stream": bedrock_prefix,
    }.get(api)
