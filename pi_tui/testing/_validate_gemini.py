"""Gemini ``generateContent`` request rules, with Google's error shape.

Texts marked "[real]" are quoted from real API responses; the others follow Google's wording style.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._limits import ModelLimits
from ._records import Violation

__all__ = ["gemini_major", "validate_gemini"]

_FUNCTION_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
_ROLES = ("user", "model")
_LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH", "THINKING_LEVEL_UNSPECIFIED")
_MAJOR = re.compile(r"(?:^|/)gemini(?:-live)?-(\d+)")


def gemini_major(model: str) -> int | None:
    """The Gemini generation of a model id (``gemini-3.1-pro-preview`` → 3), None for other models."""
    match = _MAJOR.search(model.lower())
    return int(match.group(1)) if match else None


class _Issues:
    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.found: list[Violation] = []

    def add(self, rule: str, message: str, param: str | None = None) -> None:
        self.found.append(
            Violation(f"gemini.{rule}", message, "gemini", self.seq, 400, param, "INVALID_ARGUMENT")
        )


def _parts(content: JsonObject) -> list[JsonObject]:
    parts = content.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def validate_gemini(
    body: JsonObject,
    *,
    model: str,
    seq: int,
    prompt_tokens: int,
    limits: ModelLimits,
    signature_issued: Callable[[str], bool],
) -> list[Violation]:
    """Check a generateContent request body; returns every rule it breaks."""
    issues = _Issues(seq)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        # [real]
        issues.add(
            "required_field", "* GenerateContentRequest.contents: contents is not specified", "contents"
        )
        return issues.found
    _check_tools(body.get("tools"), issues)
    _check_thinking(body.get("generationConfig"), model, issues)
    major = gemini_major(model)
    last_user_text = -1
    for i, content in enumerate(contents):
        if isinstance(content, dict) and content.get("role") == "user":
            if any("text" in p and "functionResponse" not in p for p in _parts(content)):
                last_user_text = i
    pending: list[JsonObject] = []  # function calls of the last model turn awaiting responses
    for i, content in enumerate(contents):
        if not isinstance(content, dict):
            issues.add(
                "invalid_role", f"Invalid value at 'contents[{i}]': expected an object.", f"contents[{i}]"
            )
            continue
        role = content.get("role")
        if role not in _ROLES:
            # [real]
            issues.add("invalid_role", "Please use a valid role: user, model.", f"contents[{i}].role")
            continue
        parts = _parts(content)
        if not parts:
            issues.add(
                "empty_parts",
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.",
                f"contents[{i}].parts",
            )
            continue
        for j, part in enumerate(parts):
            _check_part(part, f"contents[{i}].parts[{j}]", issues, signature_issued)
        calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        if role == "model":
            if pending:
                _unanswered(issues)
            if (
                calls
                and i > 0
                and isinstance(contents[i - 1], dict)
                and contents[i - 1].get("role") != "user"
            ):
                # [real]
                issues.add(
                    "function_call_position",
                    "Please ensure that function call turn comes immediately after a user turn or after a "
                    "function response turn.",
                    f"contents[{i}]",
                )
            if calls and major is not None and major >= 3 and i > last_user_text:
                first = next(p for p in parts if isinstance(p.get("functionCall"), dict))
                if not isinstance(first.get("thoughtSignature"), str):
                    name = calls[0].get("name", "")
                    position = parts.index(first) + 1
                    # [real]
                    issues.add(
                        "thought_signature_missing",
                        "Function call is missing a thought_signature in functionCall parts. This is required "
                        "for tools to work correctly, and missing thought_signature may lead to degraded model "
                        f"performance. Additional data, function call `default_api:{name}` , position {position}. "
                        "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                        f"contents[{i}]",
                    )
            pending = calls
        else:
            if responses:
                if len(responses) != len(pending):
                    # [real]
                    issues.add(
                        "function_response_count",
                        "Please ensure that the number of function response parts is equal to the number of "
                        "function call parts of the function call turn.",
                        f"contents[{i}]",
                    )
                call_ids = {c.get("id") for c in pending if c.get("id")}
                for response in responses:
                    if call_ids and response.get("id") not in call_ids:
                        issues.add(
                            "function_response_id",
                            f"Function response id '{response.get('id')}' does not match any function call id "
                            "of the previous model turn.",
                            f"contents[{i}]",
                        )
                pending = []
            elif pending:
                _unanswered(issues)
                pending = []
    window = limits.context_window
    if window is not None and prompt_tokens > window:
        # [real]
        issues.add(
            "context_window",
            f"The input token count ({prompt_tokens}) exceeds the maximum number of tokens allowed ({window}).",
            "contents",
        )
    return issues.found


def _unanswered(issues: _Issues) -> None:
    # [real]
    issues.add(
        "function_response_missing",
        "Please ensure that function response turn comes immediately after a function call turn.",
        "contents",
    )


def _check_part(
    part: JsonObject, where: str, issues: _Issues, signature_issued: Callable[[str], bool]
) -> None:
    signature = part.get("thoughtSignature")
    if signature is not None:
        if not isinstance(signature, str) or len(signature) % 4 or not _BASE64.match(signature):
            # [real]
            issues.add(
                "thought_signature_invalid",
                f"Invalid value at '{where}.thought_signature' (TYPE_BYTES), Base64 decoding failed for "
                f'"{signature}"',
                f"{where}.thought_signature",
            )
        elif not signature_issued(signature):
            issues.add(
                "thought_signature_unknown",
                "Thought signature is not valid: it was not issued for this conversation.",
                f"{where}.thought_signature",
            )
    if "text" in part and not isinstance(part.get("text"), str):
        issues.add("invalid_part", f"Invalid value at '{where}.text': expected a string.", f"{where}.text")
    if "text" in part and part.get("text") == "" and signature is None and part.get("thought") is not True:
        # [real]
        issues.add(
            "empty_text",
            "Unable to submit request because it has an empty text parameter. Add a value to the parameter "
            "and try again.",
            f"{where}.text",
        )
    call = part.get("functionCall")
    if isinstance(call, dict) and not isinstance(call.get("name"), str):
        issues.add(
            "invalid_part", f"* {where}.function_call.name: name must not be empty", f"{where}.functionCall"
        )
    response = part.get("functionResponse")
    if isinstance(response, dict) and not isinstance(response.get("response"), dict):
        issues.add(
            "invalid_part",
            f"Invalid value at '{where}.function_response.response': expected an object.",
            f"{where}.functionResponse",
        )


def _check_tools(tools: Any, issues: _Issues) -> None:
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for j, declaration in enumerate(declarations if isinstance(declarations, list) else []):
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if not isinstance(name, str) or not _FUNCTION_NAME.match(name):
                # [real]
                issues.add(
                    "tool_name",
                    f"* GenerateContentRequest.tools[{i}].function_declarations[{j}].name: Invalid function name. "
                    "Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores "
                    "(_), dots (.), colons (:), or dashes (-), with a maximum length of 64.",
                    f"tools[{i}].functionDeclarations[{j}].name",
                )


def _check_thinking(config: Any, model: str, issues: _Issues) -> None:
    thinking = config.get("thinkingConfig") if isinstance(config, dict) else None
    if not isinstance(thinking, dict):
        return
    level = thinking.get("thinkingLevel")
    budget = thinking.get("thinkingBudget")
    if level is not None and budget is not None:
        issues.add(
            "thinking_config",
            "You can only set only one of thinking budget and thinking level.",
            "generationConfig.thinkingConfig",
        )
    major = gemini_major(model)
    if level is not None:
        if level not in _LEVELS:
            issues.add(
                "thinking_config",
                f"Invalid value at 'generation_config.thinking_config.thinking_level', \"{level}\"",
                "generationConfig.thinkingConfig.thinkingLevel",
            )
        elif major is not None and major < 3:
            # [real]
            issues.add(
                "thinking_config",
                "Thinking level is not supported for this model.",
                "generationConfig.thinkingConfig.thinkingLevel",
            )
    if budget == 0 and "2.5-pro" in model:
        # [real]
        issues.add(
            "thinking_budget",
            "Budget 0 is invalid. This model only works in thinking mode.",
            "generationConfig.thinkingConfig.thinkingBudget",
        )
