"""Running `context` hooks with the envelope's boundary rules, and pi-style handlers beside them.

One rule makes both styles coexist without double application:

- Every `context` handler is called once per reason (``before_request`` and ``ephemeral`` before each
  provider request, ``turn_end`` after each turn), in load order.
- A ``{"patch": [...]}`` result is validated against the reason's rules. Patches from ``before_request``
  and ``turn_end`` are persisted (as ``context_transform`` entries) and replayed; ``ephemeral`` patches
  apply to a request-local copy only.
- A ``{"messages": [...]}`` result (pi's style: ``event.messages`` is a deep copy, the result replaces
  it) is request-local and is honoured **only** at ``reason == "ephemeral"``; at the other reasons it is
  ignored. A pi-style handler that never looks at ``reason`` therefore transforms each request exactly
  once, and its transform is never persisted, so it is never applied twice.
- Any exception, or a result that breaks a rule, fails the request (`ContextHookError`), naming the
  extension and the op.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pi_tui.ai.types import Message
from pi_tui.util.json_types import JsonObject

from .envelope import ContextEnvelope
from .patches import HookPhase, PatchError, apply_ops, validate_ops

__all__ = [
    "ContextEvent",
    "ContextState",
    "ContextHandler",
    "ContextHookError",
    "HookOutcome",
    "run_context_hooks",
    "split_messages_result",
]

ContextHandler = tuple[str, Callable[..., Any]]
"""``(source name, handler)``; the handler is ``handler(event, ctx)`` or ``handler(event)``, sync or async."""


class ContextHookError(Exception):
    """A context hook failed; the request it was shaping must fail too (fail fast)."""

    def __init__(self, message: str, *, source: str, op: str | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.op = op


@dataclass(slots=True)
class ContextState:
    envelope: ContextEnvelope


class ContextEvent:
    """What a `context` handler receives.

    Attributes:
        type: Always ``"context"``.
        reason: ``"before_request"``, ``"ephemeral"`` or ``"turn_end"``.
        state: ``state.envelope`` is the current `ContextEnvelope` (immutable).
        messages: pi-style: a deep copy of the envelope's messages (cached then uncached), made on first
            access only.
    """

    type = "context"

    def __init__(self, reason: HookPhase, envelope: ContextEnvelope) -> None:
        self.reason = reason
        self.state = ContextState(envelope)
        self._messages: list[Message] | None = None

    @property
    def messages(self) -> list[Message]:
        if self._messages is None:
            self._messages = [copy.deepcopy(m) for m in self.state.envelope.messages]
        return self._messages

    def __getitem__(self, key: str) -> Any:  # dict-style access for handlers written like pi's TS
        match key:
            case "type":
                return self.type
            case "reason":
                return self.reason
            case "state":
                return self.state
            case "messages":
                return self.messages
        raise KeyError(key)


@dataclass(slots=True)
class HookOutcome:
    """What one phase produced: the new envelope, and the persisted results in order."""

    envelope: ContextEnvelope
    persisted: list[JsonObject] = field(default_factory=list)  # {transformerName, patch, display}
    changed_by: list[str] = field(default_factory=list)  # sources whose results changed the envelope


async def _call(handler: Callable[..., Any], event: ContextEvent, ctx: object) -> Any:
    try:
        params = inspect.signature(handler).parameters
        positional = [
            p
            for p in params.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        takes_ctx = len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)
    except (TypeError, ValueError):
        takes_ctx = True
    result = handler(event, ctx) if takes_ctx else handler(event)
    if inspect.isawaitable(result):
        result = await result
    return result


def split_messages_result(
    envelope: ContextEnvelope, messages: Sequence[Message]
) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """Split a pi-style message list into (cached, uncached).

    The cached region keeps the longest prefix that is unchanged from the envelope's cached messages,
    so a handler that only appends does not disturb the cache; anything after goes to the tail.
    """
    keep = 0
    for old, new in zip(envelope.cached, messages, strict=False):
        if old != new:
            break
        keep += 1
    return tuple(messages[:keep]), tuple(messages[keep:])


def _coerce_result(result: Any) -> dict[str, Any] | None:
    if result is None:
        return None
    if isinstance(result, dict):
        return result
    if hasattr(result, "__dict__"):
        return {k: v for k, v in vars(result).items() if not k.startswith("_")}
    raise TypeError(f"a context handler must return a dict or None, got {type(result).__name__}")


async def run_context_hooks(
    phase: HookPhase,
    envelope: ContextEnvelope,
    handlers: Sequence[ContextHandler],
    ctx_for: Callable[[str], object] = lambda _source: None,
    on_persist: Callable[[JsonObject, ContextEnvelope], Awaitable[None] | None] | None = None,
) -> HookOutcome:
    """Run every handler for ``phase``, chaining the envelope through them.

    For persistent phases, ``on_persist(result, envelope_after)`` is called for each result that carries
    a patch, in order, so the caller can append the ``context_transform`` entry before the next handler
    runs (a crash between handlers then loses nothing that was applied).
    """
    outcome = HookOutcome(envelope=envelope)
    for source, handler in handlers:
        event = ContextEvent(phase, outcome.envelope)
        try:
            raw = await _call(handler, event, ctx_for(source))
            result = _coerce_result(raw)
        except ContextHookError:
            raise
        except Exception as exc:
            raise ContextHookError(
                f"context hook of extension {source!r} failed at {phase}: {type(exc).__name__}: {exc}",
                source=source,
            ) from exc
        if not result:
            continue
        if "patch" in result and result["patch"]:
            try:
                ops = validate_ops(result["patch"], phase=phase, source=source)
                new_env = apply_ops(outcome.envelope, ops)
            except PatchError as exc:
                raise ContextHookError(
                    f"context hook of extension {source!r} ({phase}): {exc}", source=source, op=exc.op
                ) from exc
            outcome.envelope = new_env
            outcome.changed_by.append(source)
            if phase in ("before_request", "turn_end"):
                record = {
                    "transformerName": str(result.get("transformerName") or source),
                    "patch": ops,
                }
                if result.get("display"):
                    record["display"] = result["display"]
                outcome.persisted.append(record)
                if on_persist is not None:
                    maybe = on_persist(record, new_env)
                    if inspect.isawaitable(maybe):
                        await maybe
        if phase == "ephemeral" and result.get("messages") is not None:
            messages = result["messages"]
            if not isinstance(messages, list):
                raise ContextHookError(
                    f"context hook of extension {source!r}: 'messages' must be a list", source=source
                )
            try:
                parsed = apply_ops(
                    replace(outcome.envelope, cached=(), uncached=()),
                    [{"op": "messages_uncached_append", "scope": "uncached", "messages": messages}],
                ).uncached
            except PatchError as exc:
                raise ContextHookError(f"context hook of extension {source!r}: {exc}", source=source) from exc
            cached, uncached = split_messages_result(outcome.envelope, parsed)
            if cached != outcome.envelope.cached or uncached != outcome.envelope.uncached:
                outcome.changed_by.append(source)
            origins = outcome.envelope.origins()[: len(cached)]
            outcome.envelope = replace(
                outcome.envelope, cached=cached, uncached=uncached, cached_origins=origins
            )
    return outcome
