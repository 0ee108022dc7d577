"""How an OpenAI-compatible server wants its Chat Completions request: pi's ``compat`` flags.

Each flag has a default detected from the provider name and base URL (as pi 0.87.1's ``detectCompat``
does: DeepSeek, Z.AI, Together, Moonshot, OpenRouter, NVIDIA, Cerebras, xAI, Cloudflare, Ant Ling, …);
a model's own ``compat`` (from the catalog or models.json) overrides a flag one key at a time. The
flags decide the field for the output limit, whether ``store`` and the ``developer`` role are sent, how
thinking is asked for (``thinkingFormat``), strict tools, Anthropic-style cache markers, session
affinity headers and routing preferences. The history conversion reads a few of them too.
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable
from typing import Any

from pi_tui.util.json_types import JsonObject

from ..thinking import level_map
from ..types import AssistantMessage, LlmMessage, Model

__all__ = [
    "affinity_headers",
    "apply_cache_control",
    "cache_control",
    "detect_compat",
    "add_thinking",
    "resolve_compat",
    "routing_fields",
    "capped_max_tokens",
    "context_room",
    "default_max_tokens",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def detect_compat(model: Model) -> JsonObject:
    """The flags pi infers for ``model`` from its provider and base URL alone."""
    provider = model.provider
    url = model.base_url or DEFAULT_BASE_URL
    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in url or "open.bigmodel.cn" in url
    is_together = provider == "together" or "api.together.ai" in url or "api.together.xyz" in url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in url
    is_ant_ling = provider == "ant-ling" or "api.ant-ling.com" in url
    is_cerebras = provider == "cerebras" or "cerebras.ai" in url
    is_deepseek = provider == "deepseek" or "deepseek.com" in url.lower()
    is_grok = provider == "xai" or "api.x.ai" in url
    is_chutes = "chutes.ai" in url
    non_standard = (
        is_nvidia
        or is_cerebras
        or is_grok
        or is_together
        or is_chutes
        or is_deepseek
        or is_zai
        or is_moonshot
        or provider == "opencode"
        or "opencode.ai" in url
        or is_cf_workers
        or is_cf_gateway
        or is_ant_ling
    )
    use_max_tokens = is_chutes or is_deepseek or is_moonshot or is_cf_gateway or is_together or is_nvidia
    use_max_tokens = use_max_tokens or is_ant_ling or is_zai
    developer_role_model = is_openrouter and model.id.startswith(("anthropic/", "openai/"))
    if is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif is_together:
        thinking_format = "together"
    elif is_ant_ling:
        thinking_format = "ant-ling"
    elif is_openrouter:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"
    no_effort = is_grok or is_zai or is_moonshot or is_together or is_cf_gateway or is_nvidia or is_ant_ling
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": developer_role_model or (not non_standard and not is_openrouter),
        "supportsReasoningEffort": not no_effort,
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking_format,
        "openRouterRouting": {},
        "vercelGatewayRouting": {},
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        # OpenAI compatibility alone does not mean the server takes strict JSON-schema tools
        "supportsStrictMode": False,
        "supportsMidConvoSystemMessages": False,
        "cacheControlFormat": "anthropic"
        if provider == "openrouter" and model.id.startswith("anthropic/")
        else None,
        "sendSessionAffinityHeaders": is_openrouter,
        "sessionAffinityFormat": "openrouter" if is_openrouter else "openai",
        "supportsLongCacheRetention": not (
            is_together or is_cf_workers or is_cf_gateway or is_nvidia or is_ant_ling
        ),
    }


def resolve_compat(model: Model) -> JsonObject:
    """pi's resolved ``OpenAICompletionsCompat`` for ``model``: detected defaults, then the model's own
    ``compat`` key by key (a ``null`` value keeps the default, as pi's ``??`` does). Two pi-tui keys
    join them: ``reasoningEffortMap`` (an older models.json spelling of ``thinkingLevelMap``) and
    ``supportsPromptCacheKey`` (false: never send ``prompt_cache_key``)."""
    resolved = detect_compat(model)
    resolved["reasoningEffortMap"] = {}
    resolved["supportsPromptCacheKey"] = True
    for key, value in (model.compat or {}).items():
        if value is not None:
            resolved[key] = value
    return resolved


def _mapped(model: Model, level: str) -> str | None:
    """``thinkingLevelMap[level] ?? level`` (pi): a level mapped to ``null`` falls back to its name."""
    mapping = level_map(model)
    value = mapping.get(level) if mapping is not None else None
    if value is None:
        legacy = (model.compat or {}).get("reasoningEffortMap")
        if isinstance(legacy, dict) and isinstance(legacy.get(level), str):
            return str(legacy[level])
    return value if isinstance(value, str) else level


def _exact(model: Model, level: str) -> tuple[bool, str | None]:
    """(whether the map names ``level`` at all, its value): pi's ``mapped === undefined`` checks."""
    mapping = level_map(model)
    if mapping is None or level not in mapping:
        return False, None
    return True, mapping[level]


def _off_value(model: Model) -> tuple[bool, str | None]:
    return _exact(model, "off")


def _template_values(model: Model, level: str | None, values: JsonObject) -> JsonObject | None:
    """``chatTemplateKwargs``/``chatTemplateArgs`` with their ``$var`` entries filled in (pi's rules)."""
    resolved: JsonObject = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            resolved[key] = value
            continue
        if level is None and value.get("omitWhenOff"):
            continue
        var = value.get("$var")
        if var == "thinking.enabled":
            resolved[key] = level is not None
            continue
        if var == "thinking.budget":
            continue  # token budgets for chat templates are not sent by pi-tui yet
        named, mapped = _exact(model, level or "off")
        if not named:
            if level is not None:
                resolved[key] = level
        elif isinstance(mapped, str):
            resolved[key] = mapped
    return resolved or None


def add_thinking(body: JsonObject, model: Model, thinking: str, compat: JsonObject) -> None:
    """Ask for (or turn off) reasoning the way ``compat["thinkingFormat"]`` says; ``thinking`` is the
    level already fitted to the model (``off`` = no reasoning)."""
    if not model.reasoning:
        return
    level = None if thinking == "off" else thinking
    style = compat["thinkingFormat"]
    effort_ok = bool(compat["supportsReasoningEffort"])
    if style == "zai":
        body["thinking"] = {"type": "enabled", "clear_thinking": False} if level else {"type": "disabled"}
        if level and effort_ok:
            named, mapped = _exact(model, level)
            effort = mapped if named else level
            if isinstance(effort, str):
                body["reasoning_effort"] = effort
    elif style == "qwen":
        body["enable_thinking"] = level is not None
        if level and effort_ok:
            body["reasoning_effort"] = _mapped(model, level)
    elif style == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": level is not None, "preserve_thinking": True}
    elif style == "chat-template":
        kwargs = _template_values(model, level, compat.get("chatTemplateKwargs") or {})
        if kwargs:
            body["chat_template_kwargs"] = kwargs
    elif style == "baseten":
        args = _template_values(model, level, compat.get("chatTemplateArgs") or {})
        if args:
            body["chat_template_args"] = args
        if effort_ok:
            named, mapped = _exact(model, level or "off")
            effort = mapped if named else level
            if isinstance(effort, str):
                body["reasoning_effort"] = effort
    elif style == "deepseek":
        named, off = _off_value(model)
        if level:
            body["thinking"] = {"type": "enabled"}
        elif not (named and off is None):
            body["thinking"] = {"type": "disabled"}
        if level and effort_ok:
            body["reasoning_effort"] = _mapped(model, level)
    elif style == "openrouter":
        named, off = _off_value(model)
        if level:
            body["reasoning"] = {"effort": _mapped(model, level)}
        elif not (named and off is None):
            body["reasoning"] = {"effort": off if isinstance(off, str) else "none"}
    elif style == "ant-ling":
        if level:
            named, mapped = _exact(model, level)
            if isinstance(mapped, str):
                body["reasoning"] = {"effort": mapped}
    elif style == "together":
        body["reasoning"] = {"enabled": level is not None}
        if level and effort_ok:
            body["reasoning_effort"] = _mapped(model, level)
    elif style == "string-thinking":
        named, off = _off_value(model)
        if level:
            body["thinking"] = _mapped(model, level)
        elif not (named and off is None):
            body["thinking"] = off if isinstance(off, str) else "none"
    elif effort_ok:
        if level:
            body["reasoning_effort"] = _mapped(model, level)
        else:
            named, off = _off_value(model)
            if isinstance(off, str):
                body["reasoning_effort"] = off


def cache_control(compat: JsonObject, retention: str) -> dict[str, str] | None:
    """The Anthropic-style marker for servers that pass it through (``cacheControlFormat: anthropic``,
    e.g. OpenRouter's ``anthropic/*`` models); None when the server does not take one or caching is off."""
    if compat.get("cacheControlFormat") != "anthropic" or retention == "none":
        return None
    control = {"type": "ephemeral"}
    if retention == "long" and compat["supportsLongCacheRetention"]:
        control["ttl"] = "1h"
    return control


def _mark_text(message: JsonObject, control: dict[str, str]) -> JsonObject | None:
    """A copy of ``message`` with ``control`` on its last text (a string content becomes one text part);
    None when it has no text to carry the marker."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(control)}]}
    if not isinstance(content, list):
        return None
    for index in range(len(content) - 1, -1, -1):
        part = content[index]
        if isinstance(part, dict) and part.get("type") == "text":
            parts = list(content)
            parts[index] = {**part, "cache_control": dict(control)}
            return {**message, "content": parts}
    return None


def apply_cache_control(body: JsonObject, control: dict[str, str]) -> None:
    """Put ``control`` on the instructions, the last tool and the last message with text, as pi does.
    The messages changed are replaced by copies: the converted history is shared between requests."""
    messages: list[JsonObject] = list(body["messages"])
    for index, message in enumerate(messages):
        if message.get("role") in ("system", "developer"):
            marked = _mark_text(message, control)
            if marked is not None:
                messages[index] = marked
            break
    tools = body.get("tools")
    if tools:
        body["tools"] = [*tools[:-1], {**tools[-1], "cache_control": dict(control)}]
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") in ("user", "assistant", "tool"):
            marked = _mark_text(messages[index], control)
            if marked is not None:
                messages[index] = marked
                break
    body["messages"] = messages


def affinity_headers(compat: JsonObject, session_id: str | None) -> dict[str, str]:
    """Headers that keep a session on one backend (and its cache), for servers that route by them."""
    if not session_id or not compat.get("sendSessionAffinityHeaders"):
        return {}
    style = compat.get("sessionAffinityFormat")
    if style == "openrouter":
        return {"x-session-id": session_id}
    headers = {"session_id": session_id} if style == "openai" else {}
    return {**headers, "x-client-request-id": session_id, "x-session-affinity": session_id}


def routing_fields(model: Model) -> JsonObject:
    """OpenRouter's ``provider`` and Vercel AI Gateway's ``providerOptions`` routing preferences."""
    compat = model.compat or {}
    fields: JsonObject = {}
    if compat.get("openRouterRouting") is not None:  # pi sends even an empty object
        fields["provider"] = compat["openRouterRouting"]
    routing = compat.get("vercelGatewayRouting") or {}
    if isinstance(routing, dict) and (routing.get("only") or routing.get("order")):
        gateway = {key: routing[key] for key in ("only", "order") if routing.get(key)}
        fields["providerOptions"] = {"gateway": gateway}
    return fields


_timestamp = operator.attrgetter("timestamp")

_CONTEXT_SAFETY_TOKENS = 4096  # pi keeps this much of the window free of the answer


NewestBefore = Callable[[list[LlmMessage], int], float]
"""The newest timestamp of ``messages[:index]`` (-inf for none), given (messages, index)."""


def _newest_before(messages: list[LlmMessage], index: int) -> float:
    return max(map(_timestamp, messages[:index]), default=float("-inf"))


def _estimated_context(messages: list[LlmMessage], newest_before: NewestBefore = _newest_before) -> int:
    """pi's estimate of the tokens a history fills: the last usable answer's reported total, plus
    about a token per four characters of each message after it (all of them when none reported)."""
    from ..tokens import count_message_tokens

    # The answer that counts is the last usable one not older than any message before it, found from
    # the end (usually within the last few messages). Its age test needs the newest timestamp before
    # it (``newest_before``: a provider's conversion may know it already); should that first candidate
    # be older than an earlier message (a clock that went back), the running maximum of every
    # timestamp, made once.
    running: list[float] | None = None  # running[i]: the newest timestamp of messages[:i]
    last = -1
    reported = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("aborted", "error"):
            continue
        usage = message.usage
        total = usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write
        if total <= 0:
            continue
        if running is None:
            if message.timestamp >= newest_before(messages, index):
                last, reported = index, total
                break
            stamps = [m.timestamp for m in messages]
            running = list(itertools.accumulate(stamps, max, initial=float("-inf")))
        elif message.timestamp >= running[index]:
            last, reported = index, total
            break
    return reported + sum(count_message_tokens(m) for m in messages[last + 1 :])


def default_max_tokens(
    model: Model, messages: list[LlmMessage], requested: int | None, instructions: str = "", tools: Any = None
) -> int:
    """The output cap pi sends when none was set: the model's maximum, cut to what the context window
    has left (window - estimated instructions, tools and history - 4096), at least 1. The estimate is pi's
    (a token per four characters after the last reported usage), so the cap matches pi's where the model's
    maximum is below the room left, and comes within the size of the prompts' different words elsewhere."""
    return capped_max_tokens(
        requested or model.max_tokens, context_room(model, messages, instructions, tools)
    )


def context_room(
    model: Model,
    messages: list[LlmMessage],
    instructions: str = "",
    tools: Any = None,
    newest_before: NewestBefore = _newest_before,
) -> int | None:
    """What the context window leaves for the answer by pi's estimate (`default_max_tokens`), or None
    when the model's window is unknown. A request that caps twice (Anthropic's thinking budget) asks
    once: the estimate reads the whole history (``newest_before``: see `_estimated_context`)."""
    from ..tokens import estimate_tokens

    if model.context_window <= 0:
        return None
    estimate = _estimated_context(messages, newest_before)
    if instructions:
        estimate += estimate_tokens(instructions)
    if tools:
        estimate += estimate_tokens(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))
    return model.context_window - estimate - _CONTEXT_SAFETY_TOKENS


def capped_max_tokens(wanted: int, room: int | None) -> int:
    """``wanted`` cut to the ``room`` `context_room` found (at least 1)."""
    return max(1, wanted) if room is None else min(wanted, max(1, room))
