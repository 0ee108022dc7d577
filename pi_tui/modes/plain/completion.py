"""Tab completion for the line mode: ``/`` commands and ``@`` files, as the TUI editor offers them.

``/`` at the start of the line lists built-in commands, prompt templates, extension commands and
``/skill:`` names (pi's order), each with its description; after ``/name `` an extension command's
``get_argument_completions`` is asked. ``@`` anywhere completes paths under the working directory,
respecting ``.gitignore``; paths with spaces are inserted quoted (``@"my file.txt"``), as pi does.
Commands rank with the project's one fuzzy matcher (`pi_tui.util.fuzzy`, pi's ``fuzzyFilter``); paths
as the TUI's menu ranks them (`pi_tui.util.path_rank`: the name must hold what was typed, as in pi).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from pi_tui.modes.commands import BUILTIN_COMMANDS

from .commands import PLAIN_COMMANDS

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["CommandItem", "PlainCompleter", "command_items"]

log = logging.getLogger(__name__)

CommandItem = tuple[str, str]
"""``(name without the slash, description)``."""

_FILE_LIMIT = 20_000  # entries walked before giving up: completion must stay instant in a huge tree
_INDEX_TTL_S = 10.0


def command_items(session: AgentSession) -> list[CommandItem]:
    """Every ``/`` command the user can type now: built-ins, templates, extension commands, skills."""
    items: list[CommandItem] = sorted({**BUILTIN_COMMANDS, **PLAIN_COMMANDS}.items())
    resources = session.resources
    for template in resources.templates if resources is not None else []:
        items.append((template.name, template.description))
    runner = session.extensions
    for name, command in sorted(runner.registry.commands.items() if runner is not None else []):
        items.append((name, command.description or f"({command.source})"))
    settings = session.settings
    if settings is None or settings.enable_skill_commands:
        for skill in resources.skills if resources is not None else []:
            items.append((f"skill:{skill.name}", skill.description))
    return items


class PlainCompleter(Completer):
    """Completes ``/commands`` (start of line) and ``@paths`` (anywhere).

    Args:
        cwd: The directory ``@`` paths are relative to.
        commands: Returns the current command list (re-read on each completion: /reload may change it).
        argument_completions: ``(command name, prefix) -> list[str] | None`` for a command's arguments.
    """

    def __init__(
        self,
        cwd: Path,
        commands: Callable[[], list[CommandItem]],
        argument_completions: Callable[[str, str], list[str] | None] | None = None,
    ) -> None:
        self.cwd = cwd
        self._commands = commands
        self._argument_completions = argument_completions
        self._files: list[str] = []
        self._files_at = 0.0

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and "\n" not in before:
            name, space, rest = before[1:].partition(" ")
            if not space:
                yield from self._complete_command(name)
                return
            yield from self._complete_argument(name, rest)
            return
        word = before.rsplit(None, 1)[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._complete_path(word)

    def _complete_command(self, typed: str) -> Iterator[Completion]:
        from pi_tui.util.fuzzy import fuzzy_filter

        items = self._commands()
        for index, _score in fuzzy_filter(typed, [name for name, _ in items]):
            name, description = items[index]
            yield Completion(
                "/" + name, start_position=-len(typed) - 1, display="/" + name, display_meta=description or ""
            )

    def _complete_argument(self, name: str, rest: str) -> Iterator[Completion]:
        if self._argument_completions is None:
            return
        try:
            options = self._argument_completions(name, rest) or []
        except Exception as exc:  # an extension's completer must not break typing
            log.warning("argument completion of /%s failed: %s", name, exc)
            return
        for option in options:
            yield Completion(str(option), start_position=-len(rest))

    def _complete_path(self, word: str) -> Iterator[Completion]:
        from pi_tui.util.path_rank import rank_paths

        for path in rank_paths(word[1:].strip('"'), self._file_index()):
            text = f'@"{path}"' if " " in path else f"@{path}"
            bare = path.rstrip("/")
            name = bare.rsplit("/", 1)[-1] + ("/" if path.endswith("/") else "")
            # shown as pi lists it: the name, then where it is
            yield Completion(text, start_position=-len(word), display=name, display_meta=bare)

    def _file_index(self) -> list[str]:
        now = time.monotonic()
        if now - self._files_at > _INDEX_TTL_S:
            self._files = _walk_files(self.cwd)
            self._files_at = now
        return self._files


def _walk_files(root: Path) -> list[str]:
    from pi_tui.tools.walk import list_project_files

    try:
        return list_project_files(root, limit=_FILE_LIMIT, directories=True)
    except OSError as exc:
        log.warning("cannot list %s for @ completion: %s", root, exc)
        return []
