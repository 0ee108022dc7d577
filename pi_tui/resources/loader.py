"""Loads every prompt resource of a session in one place: context files, skills, templates, overrides.

The runtime builds one :class:`ResourceLoader` per working directory, calls :meth:`reload` at start
and on ``/reload``, feeds the results to the system prompt builder, and shows
:attr:`ResourceLoader.warnings` in the UI.

Trust: project-local configuration (``.pi/skills``, ``.agents/skills``, ``.pi/prompts``,
``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md`` and project settings entries) is read only when
``project_trusted`` is true. AGENTS.md/CLAUDE.md files are plain instructions, like a README, and
are always read.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pi_tui.resources.context_files import (
    ContextFile,
    load_context_files,
    load_prompt_override,
    resolve_prompt_value,
)
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.paths import agent_dir as default_agent_dir
from pi_tui.resources.paths import resolve_path
from pi_tui.resources.settings import ResourceEntry, ResourceKind, SettingsManager
from pi_tui.resources.skills import Skill, load_skills
from pi_tui.resources.templates import PromptTemplate, load_templates

__all__ = ["ResourceLoader"]

_GLOB_CHARS = frozenset("*?[")


class _PathFilter:
    """Include and exclude lists built from settings entries (``x``, ``+x``, ``!x``, ``-x``, globs)."""

    def __init__(self) -> None:
        self.includes: list[Path] = []
        self.excludes: list[str] = []

    def add(self, entry: ResourceEntry) -> None:
        value = entry.value.strip()
        if not value:
            return
        exclude = value[0] in "!-"
        if value[0] in "!-+":
            value = value[1:]
        path = resolve_path(value, entry.base_dir)
        if exclude:
            self.excludes.append(str(path))
        elif _GLOB_CHARS & set(value):
            import glob  # only a settings entry with a wildcard needs it

            self.includes.extend(Path(match) for match in sorted(glob.glob(str(path))))
        else:
            self.includes.append(path)

    def excluded(self, *paths: Path) -> bool:
        for pattern in self.excludes:
            has_glob = bool(_GLOB_CHARS & set(pattern))
            for path in paths:
                if has_glob and fnmatch.fnmatchcase(str(path), pattern):
                    return True
                if not has_glob and path.is_relative_to(pattern):
                    return True
        return False


class ResourceLoader:
    """Discovers and holds the resources that shape the system prompt and the slash commands.

    Args:
        cwd: The working directory.
        agent_dir: The agent directory; defaults to :func:`pi_tui.resources.paths.agent_dir`.
        settings: Settings for the ``skills``/``prompts`` lists; ``None`` reads them from disk.
        no_skills: ``--no-skills``: skip auto-discovered and settings skills (``skill_paths`` still
            load).
        skill_paths: ``--skill`` paths.
        no_prompt_templates: ``--no-prompt-templates``, the same for templates.
        template_paths: ``--prompt-template`` paths.
        no_context_files: ``--no-context-files``: no ``AGENTS.md``/``CLAUDE.md`` at all (global or
            project); ``SYSTEM.md`` and ``APPEND_SYSTEM.md`` still load.
        project_trusted: Whether project-local configuration may be read (see the module doc).
        system_prompt: ``--system-prompt`` (text, or a path to a file).
        append_system_prompt: ``--append-system-prompt`` (text, or a path to a file); several (the
            option is repeatable) are joined by blank lines, in order.
        home: Home directory for ``~/.agents/skills`` (default: the real one).
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str],
        agent_dir: str | os.PathLike[str] | None = None,
        settings: SettingsManager | None = None,
        *,
        no_skills: bool = False,
        skill_paths: Sequence[str | os.PathLike[str]] = (),
        no_prompt_templates: bool = False,
        template_paths: Sequence[str | os.PathLike[str]] = (),
        no_context_files: bool = False,
        project_trusted: bool = False,
        system_prompt: str | None = None,
        append_system_prompt: str | Sequence[str] | None = None,
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd))
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self._settings = settings
        self.no_skills = no_skills
        self.skill_paths = [os.fspath(path) for path in skill_paths]
        self.no_prompt_templates = no_prompt_templates
        self.template_paths = [os.fspath(path) for path in template_paths]
        self.no_context_files = no_context_files
        self.project_trusted = project_trusted
        self.system_prompt_flag = system_prompt
        self.append_system_prompt_flags = (
            [append_system_prompt] if isinstance(append_system_prompt, str) else list(append_system_prompt or ())
        )
        self.home = Path(home) if home is not None else None
        self._extra_skill_paths: list[str] = []
        self._extra_template_paths: list[str] = []
        self._loaded = False
        self._context_files: list[ContextFile] = []
        self._skills: list[Skill] = []
        self._templates: list[PromptTemplate] = []
        self._system_prompt: str | None = None
        self._append_system_prompt: str | None = None
        self._diagnostics: dict[str, list[ResourceDiagnostic]] = {}

    # -- loading ---------------------------------------------------------------------------

    @property
    def settings(self) -> SettingsManager:
        """The settings in use (read from disk on first use when none were given)."""
        if self._settings is None:
            self._settings = SettingsManager(self.agent_dir, self.cwd, project_trusted=self.project_trusted)
        return self._settings

    def reload(self) -> None:
        """Re-read everything from disk."""
        self._loaded = True
        self._load_context()
        self._load_skills()
        self._load_templates()

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.reload()

    def _settings_filter(self, kind: ResourceKind) -> _PathFilter:
        path_filter = _PathFilter()
        for entry in self.settings.resource_entries(kind):
            if entry.scope == "project" and not self.project_trusted:
                continue
            path_filter.add(entry)
        return path_filter

    def _load_context(self) -> None:
        diagnostics: list[ResourceDiagnostic] = []
        self._context_files = (
            [] if self.no_context_files else load_context_files(self.cwd, self.agent_dir, diagnostics)
        )
        self._system_prompt = load_prompt_override(
            "SYSTEM.md",
            self.cwd,
            self.agent_dir,
            cli_value=self.system_prompt_flag,
            include_project=self.project_trusted,
            diagnostics=diagnostics,
        )
        if self.append_system_prompt_flags:  # the command line's, instead of any APPEND_SYSTEM.md
            texts = [resolve_prompt_value(value, self.cwd) for value in self.append_system_prompt_flags if value]
            self._append_system_prompt = "\n\n".join(text for text in texts if text) or None
        else:
            self._append_system_prompt = load_prompt_override(
                "APPEND_SYSTEM.md",
                self.cwd,
                self.agent_dir,
                include_project=self.project_trusted,
                diagnostics=diagnostics,
            )
        settings_warnings = [
            ResourceDiagnostic("warning", message, None, "settings") for message in self.settings.errors
        ]
        self._diagnostics["settings"] = settings_warnings
        self._diagnostics["context"] = diagnostics

    def _load_skills(self) -> None:
        path_filter = _PathFilter() if self.no_skills else self._settings_filter("skills")
        explicit: list[str | Path] = [*path_filter.includes, *self.skill_paths, *self._extra_skill_paths]
        result = load_skills(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            include_defaults=not self.no_skills,
            include_project=self.project_trusted,
            explicit_paths=explicit,
            home=self.home,
        )
        self._skills = [
            skill for skill in result.skills if not path_filter.excluded(skill.file_path, skill.base_dir)
        ]
        self._diagnostics["skills"] = result.diagnostics

    def _load_templates(self) -> None:
        path_filter = _PathFilter() if self.no_prompt_templates else self._settings_filter("prompts")
        explicit: list[str | Path] = [
            *path_filter.includes,
            *self.template_paths,
            *self._extra_template_paths,
        ]
        result = load_templates(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            include_defaults=not self.no_prompt_templates,
            include_project=self.project_trusted,
            explicit_paths=explicit,
        )
        self._templates = [
            template for template in result.templates if not path_filter.excluded(template.file_path)
        ]
        self._diagnostics["templates"] = result.diagnostics

    def extend_resources(
        self,
        *,
        skill_paths: Iterable[str | os.PathLike[str]] = (),
        template_paths: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        """Add paths contributed at run time (an extension's ``resources_discover``) and reload them.

        They load like ``--skill``/``--prompt-template`` paths and survive :meth:`reload`.
        """
        new_skills = [os.fspath(path) for path in skill_paths]
        new_templates = [os.fspath(path) for path in template_paths]
        self._ensure_loaded()
        if new_skills:
            self._extra_skill_paths.extend(p for p in new_skills if p not in self._extra_skill_paths)
            self._load_skills()
        if new_templates:
            self._extra_template_paths.extend(p for p in new_templates if p not in self._extra_template_paths)
            self._load_templates()

    # -- results ---------------------------------------------------------------------------

    @property
    def context_files(self) -> list[ContextFile]:
        """AGENTS.md/CLAUDE.md files in prompt order."""
        self._ensure_loaded()
        return list(self._context_files)

    @property
    def skills(self) -> list[Skill]:
        self._ensure_loaded()
        return list(self._skills)

    @property
    def templates(self) -> list[PromptTemplate]:
        self._ensure_loaded()
        return list(self._templates)

    @property
    def system_prompt(self) -> str | None:
        """The custom prompt (``--system-prompt`` or SYSTEM.md) replacing the base text, if any."""
        self._ensure_loaded()
        return self._system_prompt

    @property
    def append_system_prompt(self) -> str | None:
        """``--append-system-prompt`` or APPEND_SYSTEM.md text, if any."""
        self._ensure_loaded()
        return self._append_system_prompt

    @property
    def diagnostics(self) -> list[ResourceDiagnostic]:
        """Every problem found by the last load: settings, context files, skills, templates."""
        self._ensure_loaded()
        return [item for group in self._diagnostics.values() for item in group]

    @property
    def warnings(self) -> list[str]:
        """:attr:`diagnostics` as display strings."""
        return [str(item) for item in self.diagnostics]
