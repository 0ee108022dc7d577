"""What one loaded extension registered: handlers, tools, commands, shortcuts, flags, renderers, panels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, TypedDict

from pi_tui.util.json_types import JsonObject, JsonValue

from .discovery import ExtensionSource

__all__ = [
    "Extension",
    "RegisteredCommand",
    "RegisteredShortcut",
    "RegisteredFlag",
    "RegisteredRenderer",
    "CommandInfo",
    "ToolInfo",
]


class CommandInfo(TypedDict):
    """One command as ``pi.get_commands()`` lists it."""

    name: str
    description: str | None
    source: str
    path: str


class ToolInfo(TypedDict):
    """One tool as ``pi.get_all_tools()`` lists it: what the model is offered."""

    name: str
    description: str
    parameters: JsonObject


@dataclass(slots=True)
class RegisteredCommand:
    """A ``/name`` command.

    Attributes:
        name: Without the slash.
        handler: ``handler(args, ctx)``, sync or async; ``args`` is the text after the name.
        description: Shown in autocomplete and ``get_commands``.
        get_argument_completions: ``(prefix) -> list[str] | None`` for autocomplete.
        source: The extension's name.
    """

    name: str
    handler: Callable[..., Any]
    description: str | None = None
    get_argument_completions: Callable[[str], Any] | None = None
    source: str = ""
    path: str = ""


@dataclass(slots=True)
class RegisteredShortcut:
    """A key binding, e.g. ``"ctrl+shift+p"``; ``handler(ctx)`` runs when the TUI sees the key."""

    key: str
    handler: Callable[..., Any]
    description: str | None = None
    source: str = ""


@dataclass(slots=True)
class RegisteredFlag:
    """A command-line flag an extension owns (``--name``)."""

    name: str
    type: Literal["boolean", "string"] = "boolean"
    description: str | None = None
    default: JsonValue = None
    source: str = ""


@dataclass
class RegisteredContextSection:
    """Rows an extension adds to ``/context``: ``render()`` returns the lines shown under ``title``."""

    title: str
    render: Callable[[], Any]
    source: str = ""


@dataclass(slots=True)
class RegisteredMentionCompleter:
    """What an extension offers after ``@`` in the editor: ``complete(prefix)`` returns candidates."""

    complete: Callable[[str], Any]
    source: str = ""


@dataclass(slots=True)
class RegisteredRenderer:
    """How modes render a custom message type: ``render(message, options, theme)``."""

    custom_type: str
    render: Callable[..., Any]
    source: str = ""


@dataclass(slots=True)
class Extension:
    """One loaded extension and everything it registered (torn down together on reload)."""

    source: ExtensionSource
    module: ModuleType | None = None
    module_name: str = ""
    handlers: dict[str, list[Callable[..., Any]]] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    shortcuts: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    renderers: list[str] = field(default_factory=list)
    context_sections: list[str] = field(default_factory=list)
    mention_completers: list[str] = field(default_factory=list)
    panels: list[str] = field(default_factory=list)
    bus_handlers: list[tuple[str, Callable[..., Any]]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def path(self) -> str:
        return str(self.source.path)

    def handlers_for(self, event: str) -> list[Callable[..., Any]]:
        return self.handlers.get(event, [])
