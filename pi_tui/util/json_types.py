"""Names for JSON values whose shape is only known after a check.

What is decoded from the wire or a file (an RPC line, a session entry's free-form payload, a tool call's
arguments, an extension's ``details``) and what is about to be encoded as JSON holds values of any JSON
type: to the type checker they stay ``Any``, so a reader narrows them where it reads them. These aliases
say which values are such JSON, so that a bare ``Any`` in the code means something else (a value of a
type that could be spelled and is not yet). A shape that is known is spelled out instead: a
`typing.TypedDict`, a record or a dataclass.

At run time they are the plain types (``dict[str, Any]``), so a record field annotated with one is
checked exactly as before.
"""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JsonArray", "JsonObject", "JsonValue"]

JsonValue: TypeAlias = Any
"""A decoded JSON value (object, array, string, number, boolean or null), or one about to be encoded."""

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object: string keys, values of any JSON type."""

JsonArray: TypeAlias = list[Any]
"""A JSON array: values of any JSON type."""
