"""Extension events: the payload object handlers receive, the event table and result normalisation.

Every event an extension can subscribe to is listed in `EVENTS` with how its handlers are combined
and whether the runtime waits for them. Handlers get an `Event`:
attributes in snake_case (``event.tool_name``) and, for people translating pi's TypeScript examples,
item access in either spelling (``event["toolName"]``). Events are read-only; return a dict (camelCase
or snake_case keys) or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pi_tui.util.record_checks import to_camel

__all__ = [
    "Event",
    "EventSpec",
    "EVENTS",
    "CancelledByExtension",
    "to_snake",
    "to_camel",
    "normalize_result",
]

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])([A-Z])")


def to_snake(name: str) -> str:
    """``toolCallId`` → ``tool_call_id`` (snake_case names pass through)."""
    return _CAMEL_BOUNDARY.sub(r"_\1", name).lower()


class Event:
    """What a handler receives: ``type`` plus the event's fields.

    Fields are attributes in snake_case (``event.tool_name``; pi's ``event.toolName`` also works), and
    items in either spelling (``event["toolName"]``), as do ``"toolName" in event`` and
    ``event.get("toolName")``. Events cannot be modified: return a result
    instead (see the event table in ``docs/extensions.md``).
    """

    __slots__ = ("_fields", "type")

    def __init__(self, type: str, **fields: Any) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_fields", fields)

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        try:
            return fields[name] if name in fields else fields[to_snake(name)]  # event.toolName works too
        except KeyError:
            raise AttributeError(f"{self.type} event has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self.type} events are read-only; return a result to change things")

    def __getitem__(self, key: str) -> Any:
        if key == "type":
            return self.type
        try:
            return self._fields[to_snake(key)]
        except KeyError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key == "type" or to_snake(key) in self._fields)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fields(self) -> dict[str, Any]:
        """The fields as a new dict (snake_case keys)."""
        return dict(self._fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields.items())
        return f"Event({self.type!r}{', ' if inner else ''}{inner})"


Combine = Literal["notify", "chain", "first", "collect", "cancel", "patch"]


@dataclass(frozen=True, slots=True)
class EventSpec:
    """How one event's handlers run.

    Attributes:
        name: The event name given to ``pi.on``.
        combine: ``notify`` (no result), ``chain`` (each handler sees the previous output),
            ``first`` (the first handler that decides wins), ``collect`` (results accumulate),
            ``cancel`` (session_before_*: the first ``cancel`` wins, otherwise the last result),
            ``patch`` (context patch ops, see `pi_tui.context.patches`).
        awaited: The runtime waits for every handler (its result is needed). Informational events are
            awaited only up to the runner's ``informational_timeout``; slower handlers finish in the
            background.
        returns: The keys a result may carry (for the docs and warnings).
    """

    name: str
    combine: Combine
    awaited: bool
    returns: tuple[str, ...] = ()


_SPECS = [
    EventSpec("input", "chain", True, ("action", "text", "images")),
    EventSpec("before_agent_start", "collect", True, ("message", "system_prompt")),
    EventSpec("agent_start", "notify", False),
    EventSpec("agent_end", "notify", False),
    EventSpec("turn_start", "notify", False),
    EventSpec("turn_end", "notify", False),
    EventSpec("context", "patch", True, ("patch", "messages", "transformer_name", "display")),
    EventSpec("message", "chain", True, ("message",)),
    EventSpec("message_start", "notify", False),
    EventSpec("message_update", "notify", False),
    EventSpec("message_end", "notify", False),
    EventSpec("tool_call", "first", True, ("block", "reason")),
    EventSpec("tool_execution_start", "notify", False),
    EventSpec("tool_execution_update", "notify", False),
    EventSpec("tool_execution_end", "notify", False),
    EventSpec("tool_result", "chain", True, ("content", "details", "is_error")),
    EventSpec("before_provider_request", "chain", True, ("<the replacement payload>",)),
    EventSpec("session_start", "notify", True),
    EventSpec("session_before_switch", "cancel", True, ("cancel",)),
    EventSpec("session_switch", "notify", False),
    EventSpec("session_before_fork", "cancel", True, ("cancel", "skip_conversation_restore")),
    EventSpec("session_fork", "notify", False),
    EventSpec("session_before_compact", "cancel", True, ("cancel", "compaction")),
    EventSpec("session_compact", "notify", False),
    EventSpec(
        "session_before_tree",
        "cancel",
        True,
        ("cancel", "summary", "custom_instructions", "replace_instructions", "label"),
    ),
    EventSpec("session_tree", "notify", False),
    EventSpec("session_shutdown", "notify", True),
    EventSpec("model_select", "notify", False),
    EventSpec("resources_discover", "collect", True, ("skill_paths", "prompt_paths", "theme_paths")),
    EventSpec("user_bash", "first", True, ("operations", "result")),
    EventSpec("cache_warming_decision", "chain", True, ("action",)),
]

EVENTS: dict[str, EventSpec] = {spec.name: spec for spec in _SPECS}
"""Every event extensions can subscribe to, by name."""


class CancelledByExtension(Exception):
    """A ``session_before_*`` handler returned ``{"cancel": True}``; the action did not happen."""

    def __init__(self, action: str, extension: str) -> None:
        super().__init__(f"{action} was cancelled by extension {extension!r}")
        self.action = action
        self.extension = extension


def normalize_result(value: Any) -> dict[str, Any] | None:
    """A handler's return value as a dict with snake_case keys (top level only), or None.

    Raises:
        TypeError: The value is neither None nor a mapping.
    """
    if value is None:
        return None
    if isinstance(value, Event):
        value = value.fields()
    if not isinstance(value, dict):
        raise TypeError(f"a handler must return a dict or None, got {type(value).__name__}")
    return {to_snake(str(k)): v for k, v in value.items()}
