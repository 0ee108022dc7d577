"""The public API for extension authors: import from here and nowhere else.

An extension is a Python file (or package) with a module-level ``register(pi)`` function::

    from pi_tui.extensions.api import ExtensionAPI, Event, ExtensionContext

    def register(pi: ExtensionAPI) -> None:
        @pi.on("tool_call")
        async def guard(event: Event, ctx: ExtensionContext):
            if event.tool_name == "bash" and "rm -rf" in event.input.get("command", ""):
                return {"block": True, "reason": "rm -rf is not allowed here"}

Everything else in ``pi_tui`` may change between versions; the names in ``__all__`` here are kept
stable. The guide is ``docs/extensions.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.agent.tool import ToolError, ToolResult, text_result
from pi_tui.ai.stream import AbortedError, AbortSignal
from pi_tui.ai.types import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
    dump_message,
    load_message,
    message_text,
)
from pi_tui.checkpoints.tracking import FileChangeTracker
from pi_tui.context.envelope import ContextEnvelope, SystemPart
from pi_tui.context.hooks import ContextEvent
from pi_tui.util.json_safe import loads as decode_json
from pi_tui.util.json_types import JsonObject

from .browser_login import BrowserAuthorization, BrowserLogin, BrowserLoginError
from .context import CommandContext, ContextUsage, ExtensionContext, FeatureUnavailableError, SessionView
from .events import EVENTS, CancelledByExtension, Event, EventSpec
from .extension_api import ExecResult, ExtensionAPI
from .ui import NotifyLevel, NullUIBridge, UIBridge, WidgetPlacement

__all__ = [
    # the pi object, contexts, events
    "ExtensionAPI",
    "ExtensionContext",
    "CommandContext",
    "SessionView",
    "ContextUsage",
    "Event",
    "EventSpec",
    "EVENTS",
    "ContextEvent",
    "ExecResult",
    "is_tool_call_event_type",
    # errors
    "CancelledByExtension",
    "FeatureUnavailableError",
    "ToolError",
    "AbortedError",
    # UI
    "UIBridge",
    "NullUIBridge",
    "NotifyLevel",
    "WidgetPlacement",
    # tools and messages
    "ToolResult",
    "text_result",
    "AbortSignal",
    "Model",
    "TextContent",
    "ImageContent",
    "ToolCall",
    "UserMessage",
    "AssistantMessage",
    "ToolResultMessage",
    "CustomMessage",
    "dump_message",
    "load_message",
    "message_text",
    "decode_json",
    # the context envelope and patch ops
    "ContextEnvelope",
    "SystemPart",
    "system_part_set",
    "system_part_remove",
    "system_parts_replace",
    "tools_replace",
    "tools_remove",
    "messages_cached_replace",
    "messages_uncached_append",
    "options_set",
    # checkpoints
    "track_file_changes",
    "FileChangeTracker",
    # processes an extension starts
    "kill_group_with_pi_tui",
    # OAuth logins an extension runs (the browser step)
    "BrowserLogin",
    "BrowserLoginError",
    "BrowserAuthorization",
]


def is_tool_call_event_type(tool_name: str, event: object) -> bool:
    """True when ``event`` is a ``tool_call`` event for ``tool_name`` (pi's ``isToolCallEventType``)."""
    # Whatever the extension passes: read by name, as pi's check reads any object's fields.
    return getattr(event, "type", None) == "tool_call" and getattr(event, "tool_name", None) == tool_name


def track_file_changes(ctx: object, paths: Sequence[str | Path], *, tool: str = "extension") -> FileChangeTracker:
    """Record the files an extension tool changes, so ``/undo``, ``/diff`` and rewinds cover them.

    Call it before changing the files and put ``tracker.details(...)`` in the tool result::

        tracker = track_file_changes(ctx, ["notes.md"], tool="append_note")
        Path(ctx.cwd, "notes.md").write_text(...)
        return ToolResult(content=[TextContent(text="done")], details=tracker.details({"lines": 3}))

    Args:
        ctx: The ``ctx`` the tool's ``execute`` received.
        paths: The files about to change (relative to ``ctx.cwd`` or absolute; new files too).
        tool: The name the change is listed under in ``/diff``.
    """
    checkpoints = ctx.checkpoints if isinstance(ctx, ExtensionContext) else None
    return FileChangeTracker(checkpoints, list(paths), tool)


def kill_group_with_pi_tui(pgid: int) -> Callable[[], None]:
    """Have process group ``pgid`` SIGKILLed if pi-tui dies, even by SIGKILL (the bash tool's watchdog).

    For long-lived helper processes an extension starts in their own process group
    (``start_new_session=True``): without this, killing pi-tui outright would leave them running.
    Call the returned function once the group has ended normally, so a reused id is never killed.
    """
    from pi_tui.tools import watchdog

    watchdog.register_group(pgid)
    done = False

    def forget() -> None:
        nonlocal done
        if not done:
            done = True
            watchdog.unregister_group(pgid)

    return forget


def _jsonable_messages(messages: Sequence[Any]) -> list[JsonObject]:
    # Patch ops are persisted in the session file: store messages in their JSON form (what is not a
    # record is taken as it is; the op's validation says what is wrong with it).
    return [dump_message(m) if hasattr(m, "model_dump") else m for m in messages]


def system_part_set(part_name: str, text: str, reason: str) -> JsonObject:
    """Set (or add) the named system-prompt part. Cached: ``reason`` says why the cache is re-billed."""
    return {"op": "system_part_set", "scope": "cached", "partName": part_name, "text": text,
            "invalidateCacheReason": reason}  # fmt: skip


def system_part_remove(part_name: str, reason: str) -> JsonObject:
    return {
        "op": "system_part_remove",
        "scope": "cached",
        "partName": part_name,
        "invalidateCacheReason": reason,
    }


def system_parts_replace(parts: Sequence[SystemPart | dict[str, str]], reason: str) -> JsonObject:
    """Replace every system part; ``parts`` are `SystemPart` or ``{"name", "text"}``."""
    data = [{"name": p.name, "text": p.text} if isinstance(p, SystemPart) else dict(p) for p in parts]
    return {"op": "system_parts_replace", "scope": "cached", "parts": data, "invalidateCacheReason": reason}


def tools_replace(tools: Sequence[ToolDefinition | JsonObject], reason: str) -> JsonObject:
    """Replace the tool definitions offered (``{"name", "description", "parameters"}``)."""
    data = [t.to_json_dict() if hasattr(t, "to_json_dict") else dict(t) for t in tools]
    return {"op": "tools_replace", "scope": "cached", "tools": data, "invalidateCacheReason": reason}


def tools_remove(names: Sequence[str], reason: str) -> JsonObject:
    return {"op": "tools_remove", "scope": "cached", "names": list(names), "invalidateCacheReason": reason}


def messages_cached_replace(messages: Sequence[Message | JsonObject], reason: str) -> JsonObject:
    """Replace the cached (durable) conversation; messages are models or pi-shaped dicts."""
    return {"op": "messages_cached_replace", "scope": "cached", "messages": _jsonable_messages(messages),
            "invalidateCacheReason": reason}  # fmt: skip


def messages_uncached_append(messages: Sequence[Message | JsonObject]) -> JsonObject:
    """Append request-only messages after the conversation (``ephemeral`` only)."""
    return {"op": "messages_uncached_append", "scope": "uncached", "messages": _jsonable_messages(messages)}


def options_set(
    options: JsonObject, *, scope: str = "uncached", reason: str | None = None
) -> JsonObject:
    """Set generation options (``temperature``, ``maxTokens``, ``reasoning``); cached scope needs a reason."""
    op: JsonObject = {"op": "options_set", "scope": scope, "options": dict(options)}
    if reason is not None:
        op["invalidateCacheReason"] = reason
    return op
