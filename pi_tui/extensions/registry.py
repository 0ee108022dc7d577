"""What extensions registered beside handlers: tools, commands, shortcuts, flags, renderers, panels.

Conflict rules (pi-reference §8.1): among extensions the first registration wins (the later one is
skipped with a warning); an extension tool replaces a built-in tool of the same name (with a warning),
and the built-in comes back when the extension is unloaded; a command named like a built-in command is
skipped.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_tui.agent.tool import AgentTool, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.util.json_types import JsonObject, JsonValue

from .convert import to_tool_result
from .extension import (
    CommandInfo,
    Extension,
    RegisteredCommand,
    RegisteredContextSection,
    RegisteredFlag,
    RegisteredMentionCompleter,
    RegisteredRenderer,
    RegisteredShortcut,
)

if TYPE_CHECKING:
    from .host import SessionHost
    from .runner import ExtensionRunner

__all__ = ["Registry", "BUILTIN_COMMANDS", "positional_arity"]

log = logging.getLogger(__name__)

BUILTIN_COMMANDS = frozenset(
    {
        "settings", "model", "scoped-models", "export", "share", "copy", "name", "session", "changelog",
        "hotkeys", "fork", "tree", "login", "logout", "new", "compact", "reload", "resume", "quit",
        "debug", "context",
    }
)  # fmt: skip

_TRUE = frozenset({"1", "true", "yes", "on"})


def positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` accepts (large for ``*args``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 99
    count = 0
    for param in params:
        if param.kind == param.VAR_POSITIONAL:
            return 99
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


@dataclass(slots=True)
class _Override:
    tool: AgentTool
    active: bool


class Registry:
    """Tools, commands, shortcuts, flags, message renderers and panels, by owner."""

    def __init__(self, runner: ExtensionRunner, flag_values: dict[str, str | bool]) -> None:
        self._runner = runner
        self.flag_values = dict(flag_values)
        self.tool_owner: dict[str, str] = {}
        self._overridden: dict[str, _Override] = {}
        self.commands: dict[str, RegisteredCommand] = {}
        self.shortcuts: dict[str, RegisteredShortcut] = {}
        self.flags: dict[str, RegisteredFlag] = {}
        self.renderers: dict[str, RegisteredRenderer] = {}
        self.context_sections: dict[str, RegisteredContextSection] = {}
        self.mention_completers: dict[str, RegisteredMentionCompleter] = {}  # by extension name
        # project files (relative paths) each extension reads only once the project is trusted, by name
        self.trust_files: dict[str, tuple[str, ...]] = {}

    @property
    def _session(self) -> SessionHost:
        return self._runner.session

    def _warn(self, message: str) -> None:
        self._runner.warn(message)

    # --- tools --------------------------------------------------------------------------------------

    def add_tool(
        self,
        ext: Extension,
        *,
        name: str,
        description: str,
        parameters: JsonObject,
        execute: Callable[..., Any],
        label: str | None = None,
        prompt_snippet: str | None = None,
        prompt_guidelines: Sequence[str] = (),
        prepare_arguments: Callable[[JsonObject], JsonObject] | None = None,
    ) -> bool:
        owner = self.tool_owner.get(name)
        if owner is not None and owner != ext.name:
            self._warn(
                f'Tool "{name}" of extension "{ext.name}" ignored: extension "{owner}" registered it first'
            )
            return False
        session = self._session
        if owner is None and name in session.tools:
            self._warn(f'Extension "{ext.name}" overrides the built-in tool "{name}"')
            self._overridden[name] = _Override(session.tools[name], name in session.active_tools)
        arity = positional_arity(execute)
        ctx = self._runner.context_for(ext)

        async def run(
            tool_call_id: str, params: JsonObject, signal: AbortSignal, on_update: ToolUpdateFn | None
        ) -> ToolResult:
            args = (tool_call_id, params, signal, on_update, ctx)[:arity]
            result = execute(*args)
            if inspect.isawaitable(result):
                result = await result
            return to_tool_result(result)

        tool = AgentTool(
            name=name,
            label=label or name,
            description=description,
            parameters=parameters,
            execute=run,
            prompt_snippet=prompt_snippet,
            prompt_guidelines=list(prompt_guidelines),
            prepare_arguments=prepare_arguments,
        )
        session.add_tool(tool, activate=True)
        self.tool_owner[name] = ext.name
        if name not in ext.tools:
            ext.tools.append(name)
        return True

    def remove_tools(self, ext: Extension) -> None:
        session = self._session
        for name in ext.tools:
            if self.tool_owner.get(name) != ext.name:
                continue
            del self.tool_owner[name]
            session.remove_tool(name)
            restored = self._overridden.pop(name, None)
            if restored is not None:
                session.add_tool(restored.tool, activate=restored.active)
        ext.tools.clear()

    # --- commands, shortcuts, flags, renderers -----------------------------------------------------

    def add_command(self, ext: Extension, command: RegisteredCommand) -> bool:
        if command.name in BUILTIN_COMMANDS:
            self._warn(
                f'Command "/{command.name}" of extension "{ext.name}" skipped: it is a built-in command'
            )
            return False
        existing = self.commands.get(command.name)
        if existing is not None and existing.source != ext.name:
            self._warn(
                f'Command "/{command.name}" of extension "{ext.name}" ignored: '
                f'extension "{existing.source}" registered it first'
            )
            return False
        command.source, command.path = ext.name, ext.path
        self.commands[command.name] = command
        if command.name not in ext.commands:
            ext.commands.append(command.name)
        return True

    def add_shortcut(self, ext: Extension, shortcut: RegisteredShortcut) -> bool:
        what = f'Shortcut "{shortcut.key}" of extension "{ext.name}"'
        return self._claim(ext, self.shortcuts, shortcut.key, shortcut, ext.shortcuts, what)

    def add_flag(self, ext: Extension, flag: RegisteredFlag) -> bool:
        what = f'Flag "--{flag.name}" of extension "{ext.name}"'
        return self._claim(ext, self.flags, flag.name, flag, ext.flags, what)

    def flag_value(self, ext: Extension, name: str) -> JsonValue:
        flag = self.flags.get(name)
        if flag is None or flag.source != ext.name:
            return None
        if name not in self.flag_values:
            return flag.default
        raw = self.flag_values[name]
        if flag.type == "boolean":
            return raw is True or (isinstance(raw, str) and raw.strip().lower() in _TRUE)
        return flag.default if raw is True else str(raw)

    def add_renderer(self, ext: Extension, renderer: RegisteredRenderer) -> bool:
        what = f'Renderer for "{renderer.custom_type}" of "{ext.name}"'
        return self._claim(ext, self.renderers, renderer.custom_type, renderer, ext.renderers, what)

    def add_context_section(self, ext: Extension, section: RegisteredContextSection) -> bool:
        what = f'/context section "{section.title}" of "{ext.name}"'
        return self._claim(ext, self.context_sections, section.title, section, ext.context_sections, what)

    def context_section_lines(self) -> list[tuple[str, list[str]]]:
        """Every extension's ``/context`` section, rendered now; a render that fails shows its error."""
        out: list[tuple[str, list[str]]] = []
        for title, section in self.context_sections.items():
            try:
                lines = [str(line) for line in section.render() or ()]
            except Exception as exc:  # an extension's section must not break /context
                lines = [f"({section.source} failed to render this: {type(exc).__name__}: {exc})"]
            out.append((title, lines))
        return out

    def add_mention_completer(self, ext: Extension, completer: RegisteredMentionCompleter) -> bool:
        what = f'"@" completions of "{ext.name}"'
        return self._claim(ext, self.mention_completers, ext.name, completer, ext.mention_completers, what)

    def mention_candidates(self, prefix: str) -> list[tuple[str, str]]:
        """What extensions offer for ``@prefix``: ``(value without the "@", description)`` pairs.

        A completer that fails offers nothing: typing must never break on an extension's bug.
        """
        out: list[tuple[str, str]] = []
        for completer in self.mention_completers.values():
            try:
                found = completer.complete(prefix) or []
                for item in found:
                    if isinstance(item, tuple | list) and len(item) == 2:
                        out.append((str(item[0]), str(item[1])))
                    else:
                        out.append((str(item), ""))
            except Exception:
                continue
        return out

    def _claim(
        self, ext: Extension, table: dict[str, Any], key: str, item: Any, owned: list[str], what: str
    ) -> bool:
        """Put ``item`` in ``table`` under ``key`` for ``ext``, unless another extension holds the key:
        then warn ``what`` was ignored, naming the holder, and return False."""
        existing = table.get(key)
        if existing is not None and existing.source != ext.name:
            self._warn(f'{what} ignored: "{existing.source}" has it')
            return False
        item.source = ext.name
        table[key] = item
        owned.append(key)
        return True

    def add_trust_files(self, ext: Extension, paths: Sequence[str]) -> None:
        """Note project files ``ext`` reads only once the project is trusted (relative to the project).

        Raises:
            ValueError: a path is absolute, empty or climbs out of the project with ``..``.
        """
        from pathlib import PurePosixPath

        cleaned: list[str] = []
        for raw in paths:
            path = PurePosixPath(str(raw).replace("\\", "/"))
            if not str(raw).strip() or path.is_absolute() or ".." in path.parts:
                raise ValueError(
                    f"register_trust_requiring_files: {raw!r} must be a path inside the project, "
                    "relative to it (such as '.mcp.json')"
                )
            cleaned.append(str(path))
        self.trust_files[ext.name] = (*self.trust_files.get(ext.name, ()), *cleaned)

    def trust_requiring_files(self) -> list[str]:
        """Every extension's files that need trust, each once, in registration order."""
        return list(dict.fromkeys(path for paths in self.trust_files.values() for path in paths))

    def remove_owned(self, ext: Extension) -> None:
        """Everything but tools and panels (see `remove_tools`; panels survive a reload)."""
        self.trust_files.pop(ext.name, None)
        tables = (self.commands, self.shortcuts, self.flags, self.renderers, self.context_sections,
                  self.mention_completers)  # fmt: skip
        for table in tables:
            for key in [k for k, v in table.items() if v.source == ext.name]:
                del table[key]
        ext.commands.clear()
        ext.shortcuts.clear()
        ext.flags.clear()
        ext.renderers.clear()
        ext.context_sections.clear()
        ext.mention_completers.clear()

    # --- commands at run time ----------------------------------------------------------------------

    def find_command(self, text: str) -> tuple[RegisteredCommand, str] | None:
        """The command a ``/name args`` line invokes, with its argument text."""
        if not text.startswith("/"):
            return None
        head, _, rest = text[1:].partition(" ")
        name = head.split("\n", 1)[0]
        if "\n" in head:
            rest = head.split("\n", 1)[1] + (" " + rest if rest else "")
        command = self.commands.get(name)
        return (command, rest.strip()) if command is not None else None

    def command_list(self) -> list[CommandInfo]:
        """``get_commands()``'s extension part: ``{name, description, source, path}``."""
        return [
            {"name": c.name, "description": c.description, "source": "extension", "path": c.path}
            for c in self.commands.values()
        ]
