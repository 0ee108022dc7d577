"""Tool schemas for JSON-schema constrained sampling, as pi 0.87.1 makes them strict.

A tool may ask for constrained sampling (``constrainedSampling: {type: "json_schema", strict: "prefer" |
"require"}``, as pi's read, bash, edit and write tools do). Where the model supports it, its schema is
sent in the strict form: every property required, optional ones made nullable, no additional properties.
A schema outside the strict subset is sent as it is ("prefer") or fails the request ("require").
"""

from __future__ import annotations

import copy
from typing import Any

from pi_tui.util.json_types import JsonObject

from ..types import ToolDefinition

__all__ = ["strict_parameters"]


class _NotStrict(Exception):
    """A schema outside the subset constrained sampling accepts."""


_UNSUPPORTED_STRICT = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)


def _structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    types = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if ("const" in schema and schema["const"] is None) or (
        isinstance(schema.get("enum"), list) and None in schema["enum"]
    ):
        return True
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(v) for v in variants)


def _make_strict(schema: Any) -> None:
    """Turn a schema node into the strict form in place: every property required, optional ones
    nullable, no additional properties. Raises `_NotStrict` for what strict sampling cannot express."""
    if not isinstance(schema, dict):
        raise _NotStrict("boolean schemas are unsupported")
    for key in _UNSUPPORTED_STRICT:
        if key in schema:
            raise _NotStrict(f"{key} schemas are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise _NotStrict("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise _NotStrict("object and array unions are unsupported")
            _make_strict(variant)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise _NotStrict("tuple schemas are unsupported")
        _make_strict(schema["items"])
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise _NotStrict("properties require type object")
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise _NotStrict("schema-valued or true additionalProperties is unsupported")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise _NotStrict("object properties must be a schema map")
    required = schema.get("required", [])
    if not isinstance(required, list) or any(not isinstance(k, str) for k in required):
        raise _NotStrict("object required must be a string array")
    if any(k not in properties for k in required):
        raise _NotStrict("required contains an unknown property")
    for key, prop in list(properties.items()):
        _make_strict(prop)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def strict_parameters(tool: ToolDefinition, supports_strict: bool) -> JsonObject | None:
    """The strict schema (a copy) when the tool asks for constrained sampling and the model supports it."""
    config = tool.constrained_sampling
    if not isinstance(config, dict) or config.get("type") != "json_schema":
        return None
    if not supports_strict:
        if config.get("strict") == "require":
            raise ValueError(
                f'Tool "{tool.name}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
            )
        return None
    schema = copy.deepcopy(tool.parameters)
    try:
        if not isinstance(schema, dict):
            raise _NotStrict("root schema must have type object")
        _make_strict(schema)
        if schema.get("type") != "object":
            raise _NotStrict("root schema must have type object")
    except _NotStrict as exc:
        if config.get("strict") == "require":
            raise ValueError(
                f'Tool "{tool.name}" requires JSON-schema constrained sampling, but {exc}.'
            ) from None
        return None
    return schema
