"""Decoding a plain session line and checking its shape in one step, with msgspec.

`pi_tui.session.fast_context` reads a big session's lines and checks that each entry has one of the
plain shapes (`fast_context._plain_message` and the entry checks beside it). Decoding a line into
typed structures that allow exactly those shapes does both at once, in C, in well under half the time
of decoding it into dicts and checking them in Python. `decode_plain` returns the line's value as the
dicts the loader's decoder gives (`msgspec.to_builtins` of the structures: every key and value of the
line, nothing added), or raises `ValueError` for any line it does not take, which the caller then
reads the usual way. It never takes a line the usual reading would read differently:

- every field is of the exact JSON type the plain checks require, and an optional field the line
  lacks stays out of the dict (``UNSET``), so the dict holds the line's keys only; a key the
  structures do not know (the usual reading keeps some aside) is refused (``forbid_unknown_fields``);
- a header, a second header, an entry of another type, a line that is no object: refused;
- values msgspec decodes differently from `json`, or not at all, are refused by msgspec itself: lone
  surrogates, bytes that are not UTF-8, ``NaN``, numbers beyond a float's range, a byte-order mark;
  every other number, integers of any length included, decodes to the value `json` gives, and a key
  given twice keeps its last value, as in `json`;
- a value of free shape (tool-call arguments, a result's details) nested deeper than four levels goes
  the usual way, so no line taken here is nested near the depth limit (which the usual reading checks).

This module imports msgspec: import it only for a big file, and read the usual way when it is missing
(`fast_context` does both).
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

__all__ = ["decode_plain"]


# JSON values nested at most four levels (tool-call arguments, a result's details): a schema of bounded
# depth, so no line it takes can be nested deeper than the limit, which the usual reading checks.
_Scalar = str | int | float | bool | None
_Json1 = _Scalar | list[_Scalar] | dict[str, _Scalar]
_Json2 = _Scalar | list[_Json1] | dict[str, _Json1]
_Json3 = _Scalar | list[_Json2] | dict[str, _Json2]
_Json4 = _Scalar | list[_Json3] | dict[str, _Json3]


class _Text(Struct, tag="text", tag_field="type", forbid_unknown_fields=True, kw_only=True, gc=False):
    text: str
    textSignature: str | None | UnsetType = UNSET


class _Thinking(Struct, tag="thinking", tag_field="type", forbid_unknown_fields=True, kw_only=True, gc=False):
    thinking: str
    thinkingSignature: str | None | UnsetType = UNSET
    redacted: bool | None | UnsetType = UNSET


class _ToolCall(Struct, tag="toolCall", tag_field="type", forbid_unknown_fields=True, kw_only=True, gc=False):
    id: str
    name: str
    arguments: dict[str, _Json3] | UnsetType = UNSET
    thoughtSignature: str | None | UnsetType = UNSET


class _Cost(Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    input: int | float | UnsetType = UNSET
    output: int | float | UnsetType = UNSET
    cacheRead: int | float | UnsetType = UNSET
    cacheWrite: int | float | UnsetType = UNSET
    total: int | float | UnsetType = UNSET


class _Usage(Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    input: int | UnsetType = UNSET
    output: int | UnsetType = UNSET
    cacheRead: int | UnsetType = UNSET
    cacheWrite: int | UnsetType = UNSET
    reasoning: int | UnsetType = UNSET  # (a key the typed record keeps aside: the Responses API's answers)
    totalTokens: int | UnsetType = UNSET
    cost: _Cost | UnsetType = UNSET


class _User(Struct, tag="user", tag_field="role", forbid_unknown_fields=True, kw_only=True, gc=False):
    content: str | list[_Text]
    timestamp: int


_Stop = Literal["stop", "length", "toolUse", "error", "aborted", "deferred"]


class _Assistant(
    Struct, tag="assistant", tag_field="role", forbid_unknown_fields=True, kw_only=True, gc=False
):
    content: list[_Text | _Thinking | _ToolCall]
    api: str | UnsetType = UNSET
    provider: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    responseId: str | None | UnsetType = UNSET
    usage: _Usage | UnsetType = UNSET
    stopReason: _Stop | UnsetType = UNSET
    rawStopReason: str | None | UnsetType = UNSET
    errorMessage: str | None | UnsetType = UNSET
    timestamp: int


class _ToolResult(
    Struct, tag="toolResult", tag_field="role", forbid_unknown_fields=True, kw_only=True, gc=False
):
    toolCallId: str
    toolName: str
    content: list[_Text]
    details: _Json4 | UnsetType = UNSET
    isError: bool | UnsetType = UNSET
    timestamp: int


class _Entry(Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True, gc=False):
    """The fields every entry line has, in the order the entries' dicts hold them; each entry type
    adds its own after them (never decoded itself: only its subclasses are in the decoder's union)."""

    id: str
    parentId: str | None
    timestamp: str | UnsetType = UNSET


class _Message(_Entry, tag="message", kw_only=True):
    message: _User | _Assistant | _ToolResult


class _ModelChange(_Entry, tag="model_change", kw_only=True):
    provider: str
    modelId: str


class _ThinkingLevelChange(_Entry, tag="thinking_level_change", kw_only=True):
    thinkingLevel: str


class _Label(_Entry, tag="label", kw_only=True):
    targetId: str
    label: str | None | UnsetType = UNSET


class _SessionInfo(_Entry, tag="session_info", kw_only=True):
    name: str | None | UnsetType = UNSET


_decode = msgspec.json.Decoder(_Message | _ModelChange | _ThinkingLevelChange | _Label | _SessionInfo).decode
_to_builtins = msgspec.to_builtins


def decode_plain(raw: bytes) -> tuple[dict[str, object], str, str | None, int]:
    """The entry of a plain line (see the module docstring) as the dicts `json` gives, with its id, its
    parent's id and its message's timestamp (0 for an entry that is no message); `ValueError`
    (msgspec's errors are ones) for a line to read the usual way."""
    value = _decode(raw)
    stamp = value.message.timestamp if type(value) is _Message else 0
    record: dict[str, object] = _to_builtins(value)
    return record, value.id, value.parentId, stamp
