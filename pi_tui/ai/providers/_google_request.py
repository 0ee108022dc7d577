"""The request both Gemini wire APIs send (``google-generative-ai`` and ``google-vertex``).

Both speak ``streamGenerateContent`` with ``alt=sse``: the same body (``contents``, ``systemInstruction``,
``tools``, ``toolConfig``, ``generationConfig``) and the same stream of ``GenerateContentResponse``
chunks. They differ only in the endpoint and the credential, which `google` and `google_vertex` own.

The body is built as pi 0.87.1 builds it (its ``google-shared.js`` through the ``@google/genai`` SDK):

- roles ``user`` and ``model``; text, images as ``inlineData``, thinking as ``{thought: true, text}``,
  tool calls as ``functionCall`` and tool results as ``functionResponse`` parts, the results of one turn
  merged into one user content;
- ``thoughtSignature`` replayed on text, thinking and tool-call parts, only to the model that issued it
  and only when it is valid base64 (Gemini rejects anything else);
- call ids only for models that need them (Gemini 3+, ``claude-*``, ``gpt-oss-*``);
- tools as ``functionDeclarations`` with ``parametersJsonSchema``, made strict (and the calling mode
  ``VALIDATED``) on Gemini 3+ for tools that ask for JSON-schema constrained sampling;
- thinking as ``thinkingLevel`` (Gemini 3 Pro/Flash, the ``-latest`` aliases, Gemma 4) or
  ``thinkingBudget`` (the others), with pi's budgets.
"""

from __future__ import annotations

import functools
import re

from pi_tui.util.json_types import JsonObject

from ..stream import LlmRequest, StreamOptions
from ..thinking import clamp_thinking_level, level_map
from ..types import (
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from ._history import (
    TOOL_IMAGE_PLACEHOLDER,
    USER_IMAGE_PLACEHOLDER,
    images_as_placeholders,
    prepare_messages,
    sanitize_surrogates,
)
from ._openai_compat import default_max_tokens
from ._strict_schema import strict_parameters
from ._wire_cache import ConversionCache, PrefixMemo, encode_body, json_plain

__all__ = [
    "CACHE",
    "build_request",
    "convert_messages",
    "convert_tools",
    "encode_request",
    "model_path",
    "pi_tool_call_id",
    "requires_tool_call_id",
    "thinking_config",
    "uses_thinking_level",
    "valid_signature",
]

# Budgets per level for budget-based models; the first id fragment that matches wins.
_BUDGETS: tuple[tuple[str, dict[str, int]], ...] = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
_VERTEX_BUDGETS = tuple(entry for entry in _BUDGETS if entry[0] != "2.5-flash-lite")
_LEVEL_MODEL = re.compile(r"gemini-3(?:\.\d+)?-(?:pro|flash)|gemma-?4")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
CACHE = ConversionCache()  # converted contents of the stored history, shared with the encoder
_MEMO = PrefixMemo()


# --- model traits ----------------------------------------------------------------------------------


def _gemini_major(model_id: str) -> int | None:
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def requires_tool_call_id(model_id: str) -> bool:
    """Whether calls and results carry their ``id`` (Gemini 3+, and Claude / gpt-oss behind Google)."""
    major = _gemini_major(model_id)
    return model_id.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def _multimodal_function_response(model_id: str) -> bool:
    """Gemini 3+ (and non-Gemini models) take a tool result's images inside ``functionResponse``."""
    major = _gemini_major(model_id)
    return major is None or major >= 3


def uses_thinking_level(model: Model) -> bool:
    """Whether the model takes ``thinkingLevel`` rather than a token ``thinkingBudget``."""
    model_id = model.id.lower()
    return bool(_LEVEL_MODEL.search(model_id)) or model_id in (
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    )


def valid_signature(signature: str | None) -> bool:
    """Whether a stored thought signature is one Gemini takes back (base64): others are left out."""
    return bool(signature) and len(signature or "") % 4 == 0 and bool(_BASE64.match(signature or ""))


# --- thinking ---------------------------------------------------------------------------------------


def _mapped_level(model: Model, level: str) -> str:
    """The Google level (lower case) a pi level maps to through the model's ``thinkingLevelMap``."""
    mapping = level_map(model)
    mapped = mapping.get(level) if mapping is not None else None
    resolved = mapped.lower() if isinstance(mapped, str) else level
    if resolved not in ("minimal", "low", "medium", "high"):
        from ._google_adc import SetupError

        raise SetupError(
            f"Unsupported Google thinking level mapping for {model.provider}/{model.id}: {level} -> {mapped}"
        )
    return resolved


def thinking_config(model: Model, options: StreamOptions, *, vertex: bool = False) -> JsonObject | None:
    """``generationConfig.thinkingConfig`` for the requested level (None for non-reasoning models)."""
    if not model.reasoning:
        return None
    # "off" is pi's disabled request even where the model cannot stop thinking (then: its lowest level).
    level = "off" if options.thinking == "off" else clamp_thinking_level(model, options.thinking)
    if level == "off":
        if not uses_thinking_level(model):
            return {"thinkingBudget": 0}
        # A model that cannot switch thinking off gets its lowest level instead.
        lowest = clamp_thinking_level(model, "off")
        if lowest == "off":
            return {"thinkingBudget": 0}
        return {"thinkingLevel": _mapped_level(model, lowest).upper()}
    resolved = _mapped_level(model, level)
    if uses_thinking_level(model):
        return {"includeThoughts": True, "thinkingLevel": resolved.upper()}
    return {"includeThoughts": True, "thinkingBudget": _budget(model, resolved, options, vertex)}


def _budget(model: Model, level: str, options: StreamOptions, vertex: bool) -> int:
    custom = options.thinking_budgets or {}
    if level in custom:
        return custom[level]
    for fragment, budgets in _VERTEX_BUDGETS if vertex else _BUDGETS:
        if fragment in model.id:
            return budgets[level]
    return -1  # dynamic: the model decides


# --- tools ------------------------------------------------------------------------------------------


def convert_tools(tools: list[ToolDefinition], model_id: str) -> tuple[list[JsonObject], bool]:
    """The ``tools`` field and whether any tool is strict (which asks for the ``VALIDATED`` mode)."""
    major = _gemini_major(model_id)
    supports_strict = major is not None and major >= 3
    declarations = []
    any_strict = False
    for tool in tools:
        strict = strict_parameters(tool, supports_strict)
        any_strict = any_strict or strict is not None
        declarations.append(
            {
                "name": tool.name,
                "description": tool.description,
                "parametersJsonSchema": strict if strict is not None else tool.parameters,
            }
        )
    return [{"functionDeclarations": declarations}], any_strict


# --- messages ---------------------------------------------------------------------------------------


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _inline(image: ImageContent) -> JsonObject:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _user_content(message: UserMessage, model: Model) -> list[JsonObject]:
    if isinstance(message.content, str):
        return [{"parts": [{"text": sanitize_surrogates(message.content)}], "role": "user"}]
    content = list(message.content)
    if "image" not in model.input:
        content = images_as_placeholders(content, USER_IMAGE_PLACEHOLDER)
    parts = [
        {"text": sanitize_surrogates(p.text)} if isinstance(p, TextContent) else _inline(p)
        for p in content
        if isinstance(p, TextContent | ImageContent)
    ]
    return [{"parts": parts, "role": "user"}] if parts else []


def _assistant_content(message: AssistantMessage, model: Model, ids: dict[str, str]) -> list[JsonObject]:
    same = _same_model(message, model)
    with_id = requires_tool_call_id(model.id)
    parts: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            signature = block.text_signature if same and valid_signature(block.text_signature) else None
            # An empty text is kept when signed: Gemini may sign an empty part and wants it back.
            if not block.text.strip() and not signature:
                continue
            text = sanitize_surrogates(block.text)
            parts.append({"text": text, **({"thoughtSignature": signature} if signature else {})})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                continue
            if same:
                signature = block.thinking_signature if valid_signature(block.thinking_signature) else None
                if not block.thinking.strip() and not signature:
                    continue
                part: JsonObject = {"text": sanitize_surrogates(block.thinking), "thought": True}
                if signature:
                    part["thoughtSignature"] = signature
                parts.append(part)
            elif block.thinking.strip():
                parts.append({"text": sanitize_surrogates(block.thinking)})  # another model's: plain words
        elif isinstance(block, ToolCall):
            call_id = ids.get(block.id, block.id)
            call: JsonObject = {"args": block.arguments or {}}
            if with_id:
                call["id"] = call_id
            call["name"] = block.name
            wire: JsonObject = {"functionCall": call}
            if same and valid_signature(block.thought_signature):
                wire["thoughtSignature"] = block.thought_signature
            parts.append(wire)
    return [{"parts": parts, "role": "model"}] if parts else []


def _tool_result_content(message: ToolResultMessage, model: Model, call_id: str) -> list[JsonObject]:
    """The ``functionResponse`` content (merged into the previous one by the caller), then, for models
    that cannot take images inside it, a separate user content with the images."""
    content = list(message.content)
    if "image" not in model.input:
        content = images_as_placeholders(content, TOOL_IMAGE_PLACEHOLDER)
    text = "\n".join(p.text for p in content if isinstance(p, TextContent))
    images = [_inline(p) for p in content if isinstance(p, ImageContent)] if "image" in model.input else []
    value = sanitize_surrogates(text) if text else "(see attached image)" if images else ""
    nested = _multimodal_function_response(model.id)
    response: JsonObject = {
        "name": message.tool_name,
        "response": {"error": value} if message.is_error else {"output": value},
    }
    if images and nested:
        response["parts"] = images
    if requires_tool_call_id(model.id):
        response["id"] = call_id
    out = [{"parts": [{"functionResponse": response}], "role": "user"}]
    if images and not nested:
        out.append({"parts": [{"text": "Tool result image:"}, *images], "role": "user"})
    return out


def pi_tool_call_id(call_id: str) -> str:
    """The id another API's tool call is sent under (characters Gemini rejects replaced, 64 at most)."""
    return _ID_CHARS.sub("_", call_id)[:64]


def _plain_model_turn(contents: list[JsonObject]) -> bool:
    """Whether a model turn's contents hold plain JSON values only (`json_plain`): everything but a
    function call's arguments is a string or a boolean."""
    return all(
        json_plain(part["functionCall"]["args"])
        for content in contents
        for part in content["parts"]
        if "functionCall" in part
    )


def _has_function_response(content: JsonObject) -> bool:
    return content["role"] == "user" and any("functionResponse" in p for p in content["parts"])


class _Converter:
    """The ``contents`` of a prepared history, as a fold that can be copied and extended.

    Contents already added are never modified: a tool result joining the previous results replaces
    that content with a new one.
    """

    __slots__ = ("model", "cache", "key", "out", "ids")

    def __init__(self, model: Model, cache: ConversionCache | None) -> None:
        self.model = model
        self.cache = cache
        self.key = (model.api, model.provider, model.id, tuple(model.input))
        self.out: list[JsonObject] = []
        self.ids: dict[str, str] = {}  # another model's tool-call id -> the id sent for it

    def copy(self) -> _Converter:
        twin = _Converter(self.model, self.cache)
        twin.out = list(self.out)
        twin.ids = dict(self.ids)
        return twin

    def _convert(self, message: LlmMessage) -> list[JsonObject]:
        model = self.model
        if isinstance(message, AssistantMessage):
            return _assistant_content(message, model, self.ids)
        if isinstance(message, ToolResultMessage):
            call_id = self.ids.get(message.tool_call_id, message.tool_call_id)
            return _tool_result_content(message, model, call_id)
        return _user_content(message, model)

    def feed(self, messages: list[LlmMessage], cached: bool) -> None:
        out, cache = self.out, self.cache
        for message in messages:
            if isinstance(message, AssistantMessage) and not _same_model(message, self.model):
                # Ids another API issued may hold characters Gemini rejects; results follow the rename.
                for block in message.content:
                    if isinstance(block, ToolCall) and requires_tool_call_id(self.model.id):
                        renamed = pi_tool_call_id(block.id)
                        if renamed != block.id:
                            self.ids[block.id] = renamed
            if cache is not None and cached and not self.ids:
                # Plain values only (the body's encoder writes long runs of them at once): a prompt's and
                # a result's contents are strings; a model turn's function arguments are checked.
                plain = _plain_model_turn if isinstance(message, AssistantMessage) else True
                contents = cache.parts(message, self.key, functools.partial(self._convert, message), plain)
            else:
                contents = self._convert(message)
            if not contents:
                continue
            if isinstance(message, ToolResultMessage) and out and _has_function_response(out[-1]):
                # One user turn holds all the results of a model turn, as pi sends them.
                first = contents[0]
                out[-1] = {"parts": [*out[-1]["parts"], *first["parts"]], "role": "user"}
                out.extend(contents[1:])
            else:
                out.extend(contents)

    def finish(self) -> list[JsonObject]:
        return list(self.out)


def convert_messages(messages: list[LlmMessage], model: Model) -> list[JsonObject]:
    """``contents`` for a prepared history (`prepare_messages`)."""
    converter = _Converter(model, None)
    converter.feed(messages, cached=False)
    return converter.finish()


def build_request(
    model: Model, request: LlmRequest, options: StreamOptions, *, vertex: bool = False
) -> JsonObject:
    """The JSON body of ``streamGenerateContent``, in the SDK's field order."""
    if options.on_payload is not None:
        # The hook may change the body in place: it gets freshly converted contents, nothing shared.
        messages, _ = prepare_messages(list(request.messages), model, request.cache_boundary)
        contents = convert_messages(messages, model)
    else:
        key = (model.api, model.provider, model.id, tuple(model.input))
        contents = _MEMO.convert(model, request, key, lambda: _Converter(model, CACHE), CACHE).finish()
    if request.wire_prefix is not None:
        # The history's old part already in wire shape (a resumed session's first request): it goes
        # first; the request's messages start with a user prompt, so no results join across the cut.
        prefix = request.wire_prefix.sendable(model, options)
        contents = [*prefix, *contents]
        CACHE.lead_items, CACHE.lead_json = prefix, request.wire_prefix.json
    body: JsonObject = {"contents": contents}
    if request.system_prompt:
        system = sanitize_surrogates(request.system_prompt)
        body["systemInstruction"] = {"parts": [{"text": system}], "role": "user"}
    if request.tools:
        tools, strict = convert_tools(request.tools, model.id)
        body["tools"] = tools
        if strict:
            body["toolConfig"] = {"functionCallingConfig": {"mode": "VALIDATED"}}
    generation: JsonObject = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    # pi's cap: the requested one or the model's maximum, cut to the room the context window has left.
    declared = [
        {"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools
    ]
    generation["maxOutputTokens"] = default_max_tokens(
        model, request.messages, options.max_tokens, request.system_prompt, declared
    )
    config = thinking_config(model, options, vertex=vertex)
    if config is not None:
        generation["thinkingConfig"] = config
    body["generationConfig"] = generation
    return body


def model_path(model_id: str, *, vertex: bool) -> str:
    """The model's resource name in the URL, as the SDK forms it."""
    if not vertex:
        return model_id if model_id.startswith(("models/", "tunedModels/")) else f"models/{model_id}"
    if model_id.startswith(("publishers/", "projects/", "models/")):
        return model_id
    if "/" in model_id:
        publisher, _, name = model_id.partition("/")
        return f"publishers/{publisher}/models/{name}"
    return f"publishers/google/models/{model_id}"


def encode_request(body: JsonObject) -> bytes:
    """The body as sent (Gemini API and Vertex AI): the stored history's contents spliced from the
    conversion cache `build_request` filled."""
    return encode_body(body, "contents", CACHE)
