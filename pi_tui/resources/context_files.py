"""Instruction files that go into the system prompt: AGENTS.md/CLAUDE.md, SYSTEM.md, APPEND_SYSTEM.md.

- Context files: in each directory ``AGENTS.md`` wins over ``CLAUDE.md``. The global one
  (``<agent>/AGENTS.md``) comes first, then the directories from the filesystem root down to the
  working directory, so the most specific instructions are read last.
- ``SYSTEM.md`` replaces the base prompt and ``APPEND_SYSTEM.md`` is appended to it. Each is looked
  up in ``<cwd>/.pi/`` first, then in the agent dir; a CLI value wins over both, and a CLI value
  that names an existing file is replaced by that file's content.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.paths import CONFIG_DIR_NAME, expand_home

__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "find_context_file",
    "find_prompt_file",
    "load_context_files",
    "load_prompt_override",
    "resolve_prompt_value",
]

logger = logging.getLogger(__name__)

CONTEXT_FILE_NAMES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md")


@dataclass(frozen=True)
class ContextFile:
    """A context file and its text, as it will appear under ``## <path>`` in the prompt."""

    path: Path
    content: str


def find_context_file(directory: Path) -> Path | None:
    """The context file of one directory: ``AGENTS.md`` if present, else ``CLAUDE.md``."""
    for name in CONTEXT_FILE_NAMES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def _read_text(path: Path, diagnostics: list[ResourceDiagnostic] | None, resource_type: str) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        message = f"could not read file: {exc.strerror or exc}"
        logger.warning("%s: %s", path, message)
        if diagnostics is not None:
            diagnostics.append(ResourceDiagnostic("warning", message, path, resource_type))
        return None


def _ancestors_root_first(cwd: Path) -> list[Path]:
    directory = Path(os.path.abspath(cwd))
    chain = [directory, *directory.parents]
    chain.reverse()
    return chain


def load_context_files(
    cwd: Path,
    agent_dir: Path,
    diagnostics: list[ResourceDiagnostic] | None = None,
) -> list[ContextFile]:
    """Load the context files in prompt order: global first, then root down to ``cwd``.

    A file reached twice (the agent dir inside the project, a symlinked directory) is included
    once, at its first position. Unreadable files are skipped with a diagnostic.
    """
    files: list[ContextFile] = []
    seen: set[str] = set()
    for directory in [Path(agent_dir), *_ancestors_root_first(cwd)]:
        path = find_context_file(directory)
        if path is None:
            continue
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        content = _read_text(path, diagnostics, "context")
        if content is not None:
            files.append(ContextFile(Path(os.path.abspath(path)), content))
    return files


def resolve_prompt_value(value: str | None, cwd: Path) -> str | None:
    """A ``--system-prompt``/``--append-system-prompt`` value: file content if it names a file.

    Relative paths are taken against ``cwd``; text that is not an existing file is used as is.
    """
    if not value:
        return None
    candidate = Path(expand_home(value))
    if not candidate.is_absolute():
        candidate = cwd / candidate
    try:
        is_file = candidate.is_file()
    except (OSError, ValueError):  # text far too long or odd to be a file name
        is_file = False
    if not is_file:
        return value
    try:
        return candidate.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        logger.warning("could not read %s, using the value as text: %s", candidate, exc)
        return value


def find_prompt_file(name: str, cwd: Path, agent_dir: Path, *, include_project: bool = True) -> Path | None:
    """Find ``SYSTEM.md`` or ``APPEND_SYSTEM.md``: ``<cwd>/.pi/`` (when allowed), then the agent dir."""
    candidates = [Path(agent_dir) / name]
    if include_project:
        candidates.insert(0, Path(cwd) / CONFIG_DIR_NAME / name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def load_prompt_override(
    name: str,
    cwd: Path,
    agent_dir: Path,
    *,
    cli_value: str | None = None,
    include_project: bool = True,
    diagnostics: list[ResourceDiagnostic] | None = None,
) -> str | None:
    """The text of ``SYSTEM.md``/``APPEND_SYSTEM.md``, with a CLI value taking precedence."""
    if cli_value:
        return resolve_prompt_value(cli_value, cwd)
    path = find_prompt_file(name, cwd, agent_dir, include_project=include_project)
    if path is None:
        return None
    return _read_text(path, diagnostics, "system")
