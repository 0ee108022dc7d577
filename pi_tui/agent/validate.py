"""Validate tool-call arguments against the tool's JSON schema, coercing types the way AJV does.

pi validates with AJV (``allErrors``, ``coerceTypes: true``) and reports failures to the model as::

    Validation failed for tool "read":
      - path: must be string

    Received arguments:
    { ... }

This is a small pure-Python subset of JSON Schema that covers what tool schemas use: ``type`` (also a
list of types), ``required``, ``properties``, ``additionalProperties``, ``items``, ``enum``, ``const``,
numeric and length bounds, ``pattern``, ``anyOf``/``oneOf``/``allOf``. Unknown keywords are ignored
(AJV ``strict: false``).
"""

from __future__ import annotations

import copy
import json
import math
import re

from pi_tui.util.json_types import JsonArray, JsonObject, JsonValue

__all__ = ["ToolArgumentsError", "ValidationIssue", "validate_arguments", "format_validation_error"]


class ToolArgumentsError(ValueError):
    """The arguments do not match the schema; the message is the text the model sees."""

    def __init__(self, message: str, errors: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.errors = errors


ValidationIssue = tuple[str, str]
"""``(path, message)`` where path is pi's display path (``root``, ``a/0/b`` or a missing property)."""

_JSON_TYPES = ("string", "number", "integer", "boolean", "null", "object", "array")


def _type_of(value: JsonValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return "unknown"


def _matches_type(value: JsonValue, wanted: str) -> bool:
    actual = _type_of(value)
    if wanted == "number":
        return actual in ("integer", "number") and not (isinstance(value, float) and math.isnan(value))
    if wanted == "integer":
        return actual == "integer" or (actual == "number" and math.isfinite(value) and value == int(value))
    return actual == wanted


_NO_COERCION = object()


def _parse_number(text: str) -> int | float | None:
    stripped = text.strip()
    if not stripped:
        return None
    try:
        number = float(stripped)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    if re.fullmatch(r"[+-]?\d+", stripped):
        return int(stripped)
    return number


def _coerce(value: JsonValue, wanted: str) -> JsonValue:
    """AJV's ``coerceTypes: true`` conversions of a scalar; `_NO_COERCION` when there is none."""
    actual = _type_of(value)
    if wanted == "string":
        if actual in ("integer", "number"):
            return _js_number_text(value)
        if actual == "boolean":
            return "true" if value else "false"
        if actual == "null":
            return ""
    elif wanted in ("number", "integer"):
        if actual == "string":
            number = _parse_number(value)
            if number is None:
                return _NO_COERCION
            if wanted == "integer":
                if number != int(number):
                    return _NO_COERCION
                return int(number)
            return number
        if actual == "boolean":
            return 1 if value else 0
        if actual == "null":
            return 0
    elif wanted == "boolean":
        if value == "true" or (actual == "integer" and value == 1):
            return True
        if value == "false" or (actual == "integer" and value == 0) or actual == "null":
            return False
    elif wanted == "null":
        if value == "" or (actual in ("integer", "number") and value == 0) or value is False:
            return None
    return _NO_COERCION


def _js_number_text(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _pointer(path: str, key: str | int) -> str:
    token = str(key).replace("~", "~0").replace("/", "~1")
    return f"{path}/{token}"


def _display_path(instance_path: str, missing: str | None = None) -> str:
    if instance_path:
        return instance_path[1:]
    return missing or "root"


class _Validator:
    def __init__(self) -> None:
        self.errors: list[ValidationIssue] = []

    def error(self, instance_path: str, message: str, missing: str | None = None) -> None:
        self.errors.append((_display_path(instance_path, missing), message))

    def validate(self, value: JsonValue, schema: JsonValue, path: str) -> JsonValue:
        """Validate ``value``; return it (possibly coerced). Errors are collected, not raised."""
        if schema is False:
            self.error(path, "boolean schema is false")
            return value
        if not isinstance(schema, dict):
            return value

        value = self._check_type(value, schema, path)

        if "const" in schema and not _json_equal(value, schema["const"]):
            self.error(path, "must be equal to constant")
        if "enum" in schema and not any(_json_equal(value, v) for v in schema["enum"]):
            self.error(path, "must be equal to one of the allowed values")

        kind = _type_of(value)
        if kind in ("integer", "number"):
            self._check_number(value, schema, path)
        elif kind == "string":
            self._check_string(value, schema, path)
        elif kind == "array":
            value = self._check_array(list(value), schema, path)
        elif kind == "object":
            value = self._check_object(value, schema, path)

        for sub in schema.get("allOf", []):
            value = self.validate(value, sub, path)
        if "anyOf" in schema:
            value = self._check_alternatives(value, schema["anyOf"], path, "anyOf")
        if "oneOf" in schema:
            value = self._check_alternatives(value, schema["oneOf"], path, "oneOf")
        return value

    def _check_type(self, value: JsonValue, schema: JsonObject, path: str) -> JsonValue:
        declared = schema.get("type")
        if declared is None:
            return value
        types = [declared] if isinstance(declared, str) else [t for t in declared if isinstance(t, str)]
        types = [t for t in types if t in _JSON_TYPES]
        if not types:
            return value
        if any(_matches_type(value, t) for t in types):
            # AJV accepts 5.0 as an integer; hand the tool a real int.
            if isinstance(value, float) and "integer" in types and "number" not in types:
                return int(value)
            return value
        for wanted in types:
            coerced = _coerce(value, wanted)
            if coerced is not _NO_COERCION:
                return coerced
        self.error(path, f"must be {','.join(types)}")
        return value

    def _check_number(self, value: float, schema: JsonObject, path: str) -> None:
        bounds = (
            ("minimum", ">=", lambda v, b: v >= b),
            ("maximum", "<=", lambda v, b: v <= b),
            ("exclusiveMinimum", ">", lambda v, b: v > b),
            ("exclusiveMaximum", "<", lambda v, b: v < b),
        )
        for keyword, op, ok in bounds:
            bound = schema.get(keyword)
            if isinstance(bound, int | float) and not isinstance(bound, bool) and not ok(value, bound):
                self.error(path, f"must be {op} {_js_number_text(bound)}")
        step = schema.get("multipleOf")
        if isinstance(step, int | float) and step and not math.isclose(value / step, round(value / step)):
            self.error(path, f"must be multiple of {_js_number_text(step)}")

    def _check_string(self, value: str, schema: JsonObject, path: str) -> None:
        length = len(value)
        if isinstance(schema.get("minLength"), int) and length < schema["minLength"]:
            self.error(path, f"must NOT have fewer than {schema['minLength']} characters")
        if isinstance(schema.get("maxLength"), int) and length > schema["maxLength"]:
            self.error(path, f"must NOT have more than {schema['maxLength']} characters")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                matched = re.search(pattern, value) is not None
            except re.error:
                matched = True  # a pattern Python cannot compile is not the model's fault
            if not matched:
                self.error(path, f'must match pattern "{pattern}"')

    def _check_array(self, value: JsonArray, schema: JsonObject, path: str) -> JsonArray:
        if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
            self.error(path, f"must NOT have fewer than {schema['minItems']} items")
        if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
            self.error(path, f"must NOT have more than {schema['maxItems']} items")
        items = schema.get("items")
        if isinstance(items, dict):
            value = [self.validate(item, items, _pointer(path, i)) for i, item in enumerate(value)]
        elif isinstance(items, list):  # tuple form
            value = [
                self.validate(item, items[i], _pointer(path, i)) if i < len(items) else item
                for i, item in enumerate(value)
            ]
        if schema.get("uniqueItems") is True:
            seen: JsonArray = []
            for item in value:
                if any(_json_equal(item, s) for s in seen):
                    self.error(path, "must NOT have duplicate items")
                    break
                seen.append(item)
        return value

    def _check_object(self, value: JsonObject, schema: JsonObject, path: str) -> JsonObject:
        result = dict(value)
        for name in schema.get("required", []):
            if name not in result:
                self.error(path, f"must have required property '{name}'", missing=name)
        properties = schema.get("properties") or {}
        for name, sub in properties.items():
            if name in result:
                result[name] = self.validate(result[name], sub, _pointer(path, name))
        extra = schema.get("additionalProperties", True)
        patterns = schema.get("patternProperties") or {}
        for name in list(result):
            if name in properties:
                continue
            matched = [sub for pat, sub in patterns.items() if _safe_search(pat, name)]
            for sub in matched:
                result[name] = self.validate(result[name], sub, _pointer(path, name))
            if matched:
                continue
            if extra is False:
                self.error(path, "must NOT have additional properties")
            elif isinstance(extra, dict):
                result[name] = self.validate(result[name], extra, _pointer(path, name))
        return result

    def _check_alternatives(self, value: JsonValue, options: JsonArray, path: str, keyword: str) -> JsonValue:
        passing: JsonArray = []
        for option in options:
            probe = _Validator()
            coerced = probe.validate(copy.deepcopy(value), option, path)
            if not probe.errors:
                passing.append(coerced)
        if keyword == "anyOf" and not passing:
            self.error(path, "must match a schema in anyOf")
        elif keyword == "oneOf" and len(passing) != 1:
            self.error(path, "must match exactly one schema in oneOf")
        return passing[0] if passing else value


def _safe_search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def _json_equal(a: JsonValue, b: JsonValue) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def format_validation_error(tool_name: str, errors: list[ValidationIssue], arguments: JsonValue) -> str:
    """pi's message for a failed validation, shown to the model as the tool result."""
    lines = "\n".join(f"  - {path}: {message}" for path, message in errors) or "Unknown validation error"
    received = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n{received}'


def validate_arguments(tool_name: str, schema: JsonObject, arguments: JsonObject) -> JsonObject:
    """Validate and coerce tool-call arguments.

    Args:
        tool_name: Used in the error message.
        schema: The tool's JSON schema (``type: object``).
        arguments: The arguments the model sent. Not modified.

    Returns:
        A coerced copy of the arguments (e.g. ``"5"`` → ``5`` for an integer property).

    Raises:
        ToolArgumentsError: With pi's ``Validation failed for tool …`` text.
    """
    validator = _Validator()
    result = validator.validate(copy.deepcopy(arguments), schema, "")
    if validator.errors:
        raise ToolArgumentsError(
            format_validation_error(tool_name, validator.errors, arguments), validator.errors
        )
    return result
