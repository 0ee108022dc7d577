"""Patch ops on the ContextEnvelope: their schema, the boundary rules, and pure application.

Ops are plain JSON dicts (that is how they are persisted in ``context_transform`` entries), e.g.::

    {"op": "system_part_set", "scope": "cached", "partName": "policy", "text": "...",
     "invalidateCacheReason": "add policy section"}

`validate_ops` checks an op list against the rules of the hook that produced it and raises `PatchError`
naming the extension and the op; `apply_ops` returns a new envelope and never mutates its input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Literal

from pi_tui.ai.types import CompactionSummaryMessage, Message, ToolDefinition, load_message, message_role
from pi_tui.util.json_types import JsonObject

from .envelope import ContextEnvelope, SystemPart

__all__ = [
    "PATCH_SCHEMA_VERSION",
    "OP_NAMES",
    "PatchError",
    "HookPhase",
    "op_touches_cache",
    "validate_ops",
    "apply_op",
    "apply_ops",
]

PATCH_SCHEMA_VERSION = 1

HookPhase = Literal["before_request", "ephemeral", "turn_end", "replay", "builtin"]

# op name -> the scopes it may declare
_OP_SCOPES: dict[str, frozenset[str]] = {
    "system_part_set": frozenset({"cached"}),
    "system_part_remove": frozenset({"cached"}),
    "system_parts_replace": frozenset({"cached"}),
    "tools_replace": frozenset({"cached"}),
    "tools_remove": frozenset({"cached"}),
    "messages_cached_replace": frozenset({"cached"}),
    "messages_uncached_append": frozenset({"uncached"}),
    "options_set": frozenset({"cached", "uncached"}),
    "compaction_apply": frozenset({"cached"}),
    "history_detach": frozenset({"cached"}),
}
OP_NAMES = tuple(_OP_SCOPES)
_BUILTIN_OPS = frozenset({"compaction_apply", "history_detach"})

_REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "system_part_set": ("partName", "text"),
    "system_part_remove": ("partName",),
    "system_parts_replace": ("parts",),
    "tools_replace": ("tools",),
    "tools_remove": ("names",),
    "messages_cached_replace": ("messages",),
    "messages_uncached_append": ("messages",),
    "options_set": ("options",),
    "compaction_apply": ("summary",),
    "history_detach": ("lastEntryId",),
}


class PatchError(Exception):
    """A patch op broke a rule. The message names the extension (transformer) and the op."""

    def __init__(self, message: str, *, source: str | None = None, op: str | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.op = op


def op_touches_cache(op: JsonObject) -> bool:
    return op.get("scope", "cached") == "cached"


def validate_ops(ops: object, *, phase: HookPhase, source: str) -> list[JsonObject]:
    """Check ``ops`` against the schema and the rules of ``phase``; returns them as a list.

    Rules: every cached-scope op carries ``invalidateCacheReason``; ``before_request`` and
    ``turn_end`` may only produce cached-scope ops (they are persisted); ``ephemeral`` may produce both.
    ``compaction_apply`` is reserved for the built-in compaction.
    """
    if ops is None:
        return []
    if not isinstance(ops, list):
        raise PatchError(f'{source}: "patch" must be a list of ops, got {type(ops).__name__}', source=source)
    checked: list[JsonObject] = []
    for index, op in enumerate(ops):
        where = f"{source}: patch[{index}]"
        if not isinstance(op, dict):
            raise PatchError(f"{where} is not an object", source=source)
        name = op.get("op")
        if name not in _OP_SCOPES:
            raise PatchError(
                f"{where}: unknown op {name!r} (known: {', '.join(OP_NAMES)})", source=source, op=str(name)
            )
        scope = op.get("scope")
        if scope not in _OP_SCOPES[name]:
            allowed = " or ".join(sorted(_OP_SCOPES[name]))
            raise PatchError(
                f'{where} {name}: scope must be "{allowed}", got {scope!r}', source=source, op=name
            )
        for required in _REQUIRED_FIELDS[name]:
            if required not in op:
                raise PatchError(f'{where} {name}: missing field "{required}"', source=source, op=name)
        if scope == "cached" and not str(op.get("invalidateCacheReason") or "").strip():
            raise PatchError(
                f"{where} {name} changes cached context without an invalidateCacheReason "
                f"(a cached change re-bills the prompt cache; say why)",
                source=source,
                op=name,
            )
        if phase in ("before_request", "turn_end") and scope != "cached":
            raise PatchError(
                f"{where} {name}: context({phase}) may only change cached (persistent) state; "
                f"use reason 'ephemeral' for request-only content",
                source=source,
                op=name,
            )
        if name == "compaction_apply" and phase not in ("builtin", "replay"):
            raise PatchError(
                f"{where}: compaction_apply is reserved for built-in compaction", source=source, op=name
            )
        checked.append(op)
    return checked


def _messages(raw: object, op: str) -> tuple[Message, ...]:
    if not isinstance(raw, list):
        raise PatchError(f'{op}: "messages" must be a list', op=op)
    out: list[Message] = []
    for item in raw:
        if hasattr(item, "role") and hasattr(item, "model_dump"):
            out.append(item)
        else:
            try:
                out.append(load_message(item))
            except Exception as exc:
                raise PatchError(f"{op}: invalid message {item!r}: {exc}", op=op) from exc
    return tuple(out)


def _tools(raw: object, op: str) -> tuple[ToolDefinition, ...]:
    if not isinstance(raw, list):
        raise PatchError(f'{op}: "tools" must be a list', op=op)
    try:
        return tuple(t if isinstance(t, ToolDefinition) else ToolDefinition.model_validate(t) for t in raw)
    except Exception as exc:
        raise PatchError(f"{op}: invalid tool definition: {exc}", op=op) from exc


def apply_op(env: ContextEnvelope, op: JsonObject, *, timestamp: int = 0) -> ContextEnvelope:
    """Apply one (already validated) op and return the new envelope."""
    name = op["op"]
    if name == "system_part_set":
        part = SystemPart(str(op["partName"]), str(op["text"]))
        parts = list(env.system_parts)
        for i, existing in enumerate(parts):
            if existing.name == part.name:
                parts[i] = part
                break
        else:
            parts.append(part)
        return replace(env, system_parts=tuple(parts))
    if name == "system_part_remove":
        return replace(env, system_parts=tuple(p for p in env.system_parts if p.name != op["partName"]))
    if name == "system_parts_replace":
        raw = op["parts"]
        if not isinstance(raw, list):
            raise PatchError('system_parts_replace: "parts" must be a list', op=name)
        replacement = tuple(
            p if isinstance(p, SystemPart) else SystemPart(str(p.get("name", "")), str(p.get("text", "")))
            for p in raw
        )
        return replace(env, system_parts=replacement)
    if name == "tools_replace":
        return replace(env, tools=_tools(op["tools"], name))
    if name == "tools_remove":
        names = set(op["names"])
        return replace(env, tools=tuple(t for t in env.tools if t.name not in names))
    if name == "messages_cached_replace":
        messages = _messages(op["messages"], name)
        # Keep provenance for messages that are unchanged at the same position.
        origins = env.origins()
        new_origins = tuple(
            origins[i] if i < len(env.cached) and env.cached[i] == m else None for i, m in enumerate(messages)
        )
        return replace(env, cached=messages, cached_origins=new_origins)
    if name == "messages_uncached_append":
        return replace(env, uncached=env.uncached + _messages(op["messages"], name))
    if name == "options_set":
        options = op["options"]
        if not isinstance(options, dict):
            raise PatchError('options_set: "options" must be an object', op=name)
        merged = {**env.options, **options}
        return replace(env, options={k: v for k, v in merged.items() if v is not None})
    if name == "compaction_apply":
        return _apply_compaction(env, op, timestamp)
    if name == "history_detach":
        from .history import apply_history_detach

        return apply_history_detach(env, op)
    raise PatchError(f"unknown op {name!r}", op=name)


def _apply_compaction(env: ContextEnvelope, op: JsonObject, timestamp: int) -> ContextEnvelope:
    summary = CompactionSummaryMessage(
        summary=str(op["summary"]), tokens_before=int(op.get("tokensBefore") or 0), timestamp=timestamp
    )
    origins = env.origins()
    first_kept = op.get("firstKeptEntryId")
    start = len(env.cached)
    if first_kept is not None:
        try:
            start = origins.index(first_kept)
        except ValueError:
            # The kept entry is not in the current context (e.g. already summarised): keep what is
            # not a summary, so nothing the model still needs disappears.
            start = 0
    kept = [(m, o) for m, o in zip(env.cached[start:], origins[start:], strict=True)]
    kept = [(m, o) for m, o in kept if message_role(m) != "compactionSummary"]
    return replace(
        env,
        cached=(summary, *(m for m, _ in kept)),
        cached_origins=(None, *(o for _, o in kept)),
    )


def apply_ops(env: ContextEnvelope, ops: Iterable[JsonObject], *, timestamp: int = 0) -> ContextEnvelope:
    for op in ops:
        env = apply_op(env, op, timestamp=timestamp)
    return env
