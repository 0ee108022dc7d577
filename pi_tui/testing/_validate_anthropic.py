"""Anthropic Messages request rules (llm-apis.md §1.5), each answered with the API's own error text.

Texts marked "[real]" are quoted from real API responses; the others are the fake's wording for rules
whose exact text is not known, kept in the same style.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._cache import TTL_SECONDS, breakpoints
from ._limits import ModelLimits
from ._records import Violation
from ._tokens import Segment

__all__ = ["validate_anthropic", "TOOL_NAME_PATTERN"]

TOOL_NAME_PATTERN = "^[a-zA-Z0-9_-]{1,64}$"
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_MAX_BREAKPOINTS = 4
_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


class _Issues:
    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.found: list[Violation] = []

    def add(self, rule: str, message: str, status: int = 400) -> None:
        self.found.append(Violation(f"anthropic.{rule}", message, "anthropic", self.seq, status))


def validate_anthropic(
    body: JsonObject,
    *,
    seq: int,
    segments: list[Segment],
    prompt_tokens: int,
    limits: ModelLimits,
    signature_ok: Callable[[str, str], bool],
    count_only: bool = False,
) -> list[Violation]:
    """Check a Messages (or count_tokens) request body; returns every rule it breaks."""
    issues = _Issues(seq)
    if not _required(body, issues, count_only):
        return issues.found
    messages: list[Any] = body["messages"]
    if not count_only:
        _max_tokens(body, limits, issues)
    tool_names = _tools(body, issues)
    _tool_choice(body, tool_names, issues)
    if not _messages_shape(messages, issues):
        return issues.found
    _text_blocks(body, messages, issues)
    _tool_pairing(messages, issues)
    _thinking(body, messages, issues, signature_ok, count_only)
    _cache_control(body, segments, issues)
    if not count_only and limits.context_window is not None and prompt_tokens > limits.context_window:
        # [real] "prompt is too long: 213462 tokens > 200000 maximum"
        issues.add(
            "context_window", f"prompt is too long: {prompt_tokens} tokens > {limits.context_window} maximum"
        )
    return issues.found


def _required(body: JsonObject, issues: _Issues, count_only: bool) -> bool:
    ok = True
    fields: list[tuple[str, type, str]] = [("model", str, "string"), ("messages", list, "list")]
    if not count_only:
        fields.insert(1, ("max_tokens", int, "integer"))
    for name, kind, label in fields:
        if name not in body:
            issues.add("required_field", f"{name}: Field required")
            ok = False
        elif not isinstance(body[name], kind) or isinstance(body[name], bool):
            issues.add("required_field", f"{name}: Input should be a valid {label}")
            ok = False
    return ok


def _max_tokens(body: JsonObject, limits: ModelLimits, issues: _Issues) -> None:
    max_tokens = body["max_tokens"]
    if max_tokens < 0:
        issues.add("max_tokens", "max_tokens: Input should be greater than or equal to 0")
    elif limits.max_output_tokens is not None and max_tokens > limits.max_output_tokens:
        issues.add(
            "max_tokens",
            f"max_tokens: {max_tokens} > {limits.max_output_tokens}, which is the maximum allowed number of "
            f"output tokens for {body['model']}",
        )


def _tools(body: JsonObject, issues: _Issues) -> set[str]:
    names: set[str] = set()
    tools = body.get("tools")
    if tools is None:
        return names
    if not isinstance(tools, list):
        issues.add("required_field", "tools: Input should be a valid list")
        return names
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            issues.add("required_field", f"tools.{i}: Input should be a valid dictionary")
            continue
        name = tool.get("name")
        if tool.get("type") not in (None, "custom"):
            if isinstance(name, str):
                names.add(name)
            continue  # server tools have their own shapes
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            issues.add(
                "tool_name", f"tools.{i}.custom.name: String should match pattern '{TOOL_NAME_PATTERN}'"
            )
        elif name in names:
            issues.add("tool_name", "tools: Tool names must be unique.")
        else:
            names.add(name)
        if "input_schema" not in tool:
            issues.add("required_field", f"tools.{i}.custom.input_schema: Field required")
    return names


def _tool_choice(body: JsonObject, tool_names: set[str], issues: _Issues) -> None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name") not in tool_names:
        issues.add(
            "tool_choice_unknown", f"tool_choice.name: Tool '{choice.get('name')}' not found in `tools`."
        )


def _messages_shape(messages: list[Any], issues: _Issues) -> bool:
    ok = True
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            issues.add("required_field", f"messages.{i}: Input should be a valid dictionary")
            ok = False
            continue
        role = message.get("role")
        if role == "system":
            # [real]
            issues.add(
                "invalid_role",
                'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, '
                'not "system" as an input message role.',
            )
        elif role not in ("user", "assistant"):
            issues.add("invalid_role", f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if "content" not in message:
            issues.add("required_field", f"messages.{i}.content: Field required")
            ok = False
        elif not isinstance(message["content"], str | list):
            issues.add("required_field", f"messages.{i}.content: Input should be a valid list")
            ok = False
    return ok


def _blocks(message: JsonObject) -> list[Any]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _text_blocks(body: JsonObject, messages: list[JsonObject], issues: _Issues) -> None:
    system = body.get("system")
    if isinstance(system, list):
        for block in system:
            if isinstance(block, dict) and block.get("type") == "text":
                _check_text(str(block.get("text", "")), "system", issues)
    last = len(messages) - 1
    for i, message in enumerate(messages):
        content = message["content"]
        is_prefill = i == last and message.get("role") == "assistant"
        if (content == "" or content == []) and not is_prefill:
            # [real]
            issues.add(
                "empty_content",
                f"messages.{i}: all messages must have non-empty content except for the optional final "
                "assistant message",
            )
            continue
        for block in _blocks(message):
            if isinstance(block, dict) and block.get("type") == "text" and not (is_prefill and content == ""):
                _check_text(str(block.get("text", "")), "messages", issues)
        if is_prefill and isinstance(content, str) and content != content.rstrip():
            issues.add(
                "prefill_whitespace", "final assistant content cannot end with trailing whitespace"
            )  # [real]


def _check_text(text: str, where: str, issues: _Issues) -> None:
    if text == "":
        issues.add("empty_text", f"{where}: text content blocks must be non-empty")  # [real]
    elif not text.strip():
        issues.add("empty_text", f"{where}: text content blocks must contain non-whitespace text")  # [real]


def _tool_pairing(messages: list[JsonObject], issues: _Issues) -> None:
    """tool_use ↔ tool_result pairing in both directions, on consecutive-same-role-merged turns."""
    groups: list[tuple[int, str, list[tuple[int, int, Any]]]] = []
    for i, message in enumerate(messages):
        blocks = [(i, j, b) for j, b in enumerate(_blocks(message))]
        role = str(message.get("role"))
        if groups and groups[-1][1] == role:
            groups[-1][2].extend(blocks)
        else:
            groups.append((i, role, blocks))
    for g, (first_index, role, blocks) in enumerate(groups):
        for i, j, block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_id = block.get("id")
                if not isinstance(tool_id, str) or not _TOOL_ID.match(tool_id):
                    issues.add(
                        "tool_use_id",
                        f"messages.{i}.content.{j}.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
                    )
        if role == "assistant":
            used = [b.get("id") for _, _, b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not used or g == len(groups) - 1:
                continue
            _, next_role, next_blocks = groups[g + 1]
            answered = (
                {b.get("tool_use_id") for _, _, b in next_blocks if _is_result(b)}
                if next_role == "user"
                else set()
            )
            missing = [str(u) for u in used if u not in answered]
            if missing:
                # [real]
                issues.add(
                    "tool_result_missing",
                    f"messages.{first_index}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                    "block in the next message.",
                )
        else:
            previous = groups[g - 1] if g > 0 else None
            offered: set[Any] = set()
            if previous is not None and previous[1] == "assistant":
                offered = {
                    b.get("id")
                    for _, _, b in previous[2]
                    if isinstance(b, dict) and b.get("type") == "tool_use"
                }
            seen_other = False
            for i, j, block in blocks:
                if not _is_result(block):
                    seen_other = True
                    continue
                if block.get("tool_use_id") not in offered:
                    # [real]
                    issues.add(
                        "tool_result_unexpected",
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message.",
                    )
                elif seen_other:
                    issues.add(
                        "tool_result_order",
                        f"messages.{i}.content.{j}: `tool_result` blocks must come first in the user message that "
                        "answers `tool_use` blocks; move any other content after them.",
                    )


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _thinking(
    body: JsonObject,
    messages: list[JsonObject],
    issues: _Issues,
    signature_ok: Callable[[str, str], bool],
    count_only: bool,
) -> None:
    config = body.get("thinking")
    if not isinstance(config, dict):
        return
    kind = config.get("type")
    if kind not in ("enabled", "disabled", "adaptive", "between_tools"):
        issues.add(
            "thinking_config",
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            "'enabled', 'disabled', 'adaptive'",
        )
        return
    if kind == "disabled":
        return
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if not isinstance(budget, int):
            issues.add("thinking_budget", "thinking.enabled.budget_tokens: Field required")
        elif budget < 1024:
            issues.add(
                "thinking_budget",
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
            )
        elif not count_only and budget >= body["max_tokens"]:
            issues.add(
                "thinking_budget",
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
                f"{_THINKING_DOCS}#max-tokens-and-context-window-size",
            )
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        issues.add("thinking_tool_choice", "Thinking may not be enabled when tool_choice forces tool use.")
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        issues.add(
            "thinking_temperature",
            "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at "
            f"{_THINKING_DOCS}#feature-compatibility",
        )
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for j, block in enumerate(_blocks(message)):
            if isinstance(block, dict) and block.get("type") == "thinking":
                signature = block.get("signature")
                if not isinstance(signature, str):
                    issues.add(
                        "thinking_signature", f"messages.{i}.content.{j}.thinking.signature: Field required"
                    )
                elif not signature_ok(str(block.get("thinking", "")), signature):
                    issues.add(
                        "thinking_signature",
                        f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block",
                    )
    _thinking_replay(messages, issues)


def _thinking_replay(messages: list[JsonObject], issues: _Issues) -> None:
    """In an open tool loop, the assistant turn with the tool_use must start with its thinking block."""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return
    if not any(_is_result(b) for b in _blocks(messages[-1])):
        return
    a = len(messages) - 2
    if messages[a].get("role") != "assistant":
        return
    blocks = _blocks(messages[a])
    if not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks):
        return
    first = blocks[0].get("type") if blocks and isinstance(blocks[0], dict) else None
    if first not in ("thinking", "redacted_thinking"):
        # [real]
        issues.add(
            "thinking_replay_missing",
            f"messages.{a}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When "
            "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
            "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
            "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
            f"{_THINKING_DOCS}",
        )


def _cache_control(body: JsonObject, segments: list[Segment], issues: _Issues) -> None:
    for where, block in _cache_control_sites(body):
        cc = block.get("cache_control")
        if cc is None:
            continue
        if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
            issues.add("cache_control_invalid", f"{where}.cache_control.type: Input should be 'ephemeral'")
        elif "ttl" in cc and cc["ttl"] not in TTL_SECONDS:
            issues.add(
                "cache_control_invalid", f"{where}.cache_control.ephemeral.ttl: Input should be '5m' or '1h'"
            )
        if block.get("type") in ("thinking", "redacted_thinking"):
            issues.add(
                "cache_control_invalid",
                f"{where}.{block['type']}.cache_control: Extra inputs are not permitted",
            )
    automatic = body.get("cache_control")
    if automatic is not None and not isinstance(automatic, dict):
        issues.add("cache_control_invalid", "cache_control.type: Input should be 'ephemeral'")
        automatic = None
    points = breakpoints(segments, automatic)
    if len(points) > _MAX_BREAKPOINTS:
        explicit = sum(1 for seg in segments if seg.cache_control is not None)
        note = (
            ""
            if explicit == len(points)
            else " (this count includes the automatic breakpoint from top-level cache_control)"
        )
        # [real] "A maximum of 4 blocks with cache_control may be provided. Found 5."
        issues.add(
            "cache_control_limit",
            f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(points)}.{note}",
        )
    seen_short = False
    for _, ttl in points:
        if ttl == "5m":
            seen_short = True
        elif seen_short:
            issues.add(
                "cache_ttl_order",
                "cache_control: a breakpoint with ttl='1h' must not come after a breakpoint with ttl='5m' "
                "(order: tools, system, messages).",
            )
            break


def _cache_control_sites(body: JsonObject) -> list[tuple[str, JsonObject]]:
    sites: list[tuple[str, JsonObject]] = []
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict):
            sites.append((f"tools.{i}", tool))
    system = body.get("system")
    if isinstance(system, list):
        sites.extend((f"system.{i}", b) for i, b in enumerate(system) if isinstance(b, dict))
    for i, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        for j, block in enumerate(message["content"]):
            if not isinstance(block, dict):
                continue
            sites.append((f"messages.{i}.content.{j}", block))
            nested = block.get("content")
            if block.get("type") == "tool_result" and isinstance(nested, list):
                sites.extend(
                    (f"messages.{i}.content.{j}.content.{k}", n)
                    for k, n in enumerate(nested)
                    if isinstance(n, dict)
                )
    return sites
