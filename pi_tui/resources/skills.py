"""Agent Skills: discovery, validation, the prompt listing and ``/skill:name`` expansion.

A skill is a directory with a ``SKILL.md`` whose frontmatter names and describes it. Only the name,
description and location go into the system prompt; the model reads the file when a task matches.

Discovery rules:

- a directory containing ``SKILL.md`` is one skill, and nothing below it is scanned;
- otherwise subdirectories are searched for ``SKILL.md``;
- other ``.md`` files count as skills only at the top of an explicitly configured directory;
- dot-directories and ``node_modules`` are skipped, ``.gitignore``/``.ignore``/``.fdignore`` are
  honoured, symlinks are followed, and one file reached twice loads once;
- the first skill with a name wins; later ones are dropped with a collision diagnostic.

Validation follows the standard leniently: naming problems and an over-long description only warn;
a missing description or unparsable frontmatter skips the skill with a warning.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.paths import CONFIG_DIR_NAME, resolve_path
from pi_tui.util.ignore import IgnoreStack, find_git_root

__all__ = [
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "Skill",
    "SkillError",
    "SkillLoadResult",
    "default_skill_dirs",
    "escape_xml",
    "expand_skill_command",
    "find_git_root",
    "format_skills_for_prompt",
    "load_skill_file",
    "load_skills",
    "scan_skill_dir",
    "validate_skill_name",
]

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
SKILL_FILE_NAME = "SKILL.md"
SKILL_COMMAND_PREFIX = "/skill:"

_NAME_PATTERN = re.compile(r"[a-z0-9-]+")
_SKIPPED_DIR_NAMES = frozenset({"node_modules"})
_SKILL_IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")  # what pi's skill loader reads


class SkillError(Exception):
    """A skill could not be expanded (its file is gone or unreadable)."""


@dataclass(frozen=True)
class Skill:
    """A loaded skill.

    Attributes:
        name: The frontmatter name, or the directory (or file) name when it has none.
        description: What the skill is for; shown to the model.
        file_path: Absolute path of the skill file.
        base_dir: The directory relative references in the skill resolve against.
        source: ``"user"``, ``"project"`` or ``"path"`` (explicitly configured).
        disable_model_invocation: Hidden from the prompt; usable only as ``/skill:name``.
    """

    name: str
    description: str
    file_path: Path
    base_dir: Path
    source: str
    disable_model_invocation: bool = False


@dataclass
class SkillLoadResult:
    """Skills plus the problems met while loading them."""

    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def validate_skill_name(name: str, expected: str) -> list[str]:
    """Return the naming problems of ``name`` (empty when it follows the standard)."""
    problems: list[str] = []
    if name != expected:
        problems.append(f'name "{name}" does not match parent directory "{expected}"')
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not _NAME_PATTERN.fullmatch(name):
        problems.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def _scalar_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def load_skill_file(path: Path, source: str) -> tuple[Skill | None, list[ResourceDiagnostic]]:
    """Load one skill file; returns ``(None, diagnostics)`` when it must be skipped.

    The default name is the parent directory for ``SKILL.md`` and the file stem for other files.
    """
    path = Path(os.path.abspath(path))
    diagnostics: list[ResourceDiagnostic] = []

    def warn(message: str) -> None:
        diagnostics.append(ResourceDiagnostic("warning", message, path, "skill"))

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        warn(f"could not read skill file: {exc.strerror or exc}")
        return None, diagnostics
    from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter  # with the first skill

    try:
        data = parse_frontmatter(text).data
    except FrontmatterError as exc:
        warn(f"skill skipped: {exc}")
        return None, diagnostics

    expected = path.parent.name if path.name == SKILL_FILE_NAME else path.stem
    description = _scalar_text(data.get("description"))
    if description is None or not description.strip():
        warn("skill skipped: description is required")
    elif len(description) > MAX_DESCRIPTION_LENGTH:
        warn(f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})")

    raw_name = _scalar_text(data.get("name"))
    name = raw_name if raw_name else expected
    for problem in validate_skill_name(name, expected):
        warn(problem)

    if description is None or not description.strip():
        return None, diagnostics
    skill = Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=path.parent,
        source=source,
        disable_model_invocation=data.get("disable-model-invocation") is True,
    )
    return skill, diagnostics


def scan_skill_dir(directory: Path, source: str, *, include_root_files: bool) -> SkillLoadResult:
    """Find the skills below ``directory``.

    Args:
        directory: Where to look; a missing directory gives an empty result.
        source: The source label given to the skills found.
        include_root_files: Also load top-level ``*.md`` files as skills (explicit dirs only).
    """
    result = SkillLoadResult()
    root = Path(os.path.abspath(directory))
    if not root.is_dir():
        return result
    ignore = IgnoreStack.for_root(root, names=_SKILL_IGNORE_FILE_NAMES, in_repository=False)
    _scan(root, "", source, include_root_files, ignore, set(), result)
    return result


def _scan(
    directory: Path,
    rel: str,
    source: str,
    include_root_files: bool,
    ignore: IgnoreStack,
    visited: set[str],
    result: SkillLoadResult,
) -> None:
    real = os.path.realpath(directory)
    if real in visited:  # a symlink loop, or a directory reached twice
        return
    visited.add(real)

    skill_file = directory / SKILL_FILE_NAME
    if skill_file.is_file():
        skill, diagnostics = load_skill_file(skill_file, source)
        result.diagnostics.extend(diagnostics)
        if skill is not None:
            result.skills.append(skill)
        return

    if rel:
        ignore = ignore.entering(directory, rel)
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIPPED_DIR_NAMES:
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()  # follows symlinks; a broken link is neither
            is_file = entry.is_file()
        except OSError:
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        if ignore.is_ignored(child_rel, is_dir):
            continue
        if is_dir:
            _scan(path, child_rel, source, False, ignore, visited, result)
        elif is_file and include_root_files and entry.name.endswith(".md"):
            skill, diagnostics = load_skill_file(path, source)
            result.diagnostics.extend(diagnostics)
            if skill is not None:
                result.skills.append(skill)


def default_skill_dirs(
    cwd: Path,
    agent_dir: Path,
    *,
    include_project: bool,
    home: Path | None = None,
) -> list[tuple[Path, str]]:
    """The auto-discovered skill directories with their source, project ones first.

    Project: ``<cwd>/.pi/skills``, then ``.agents/skills`` in ``cwd`` and each ancestor up to the
    git root (the filesystem root outside a repository). User: ``<agent>/skills`` and
    ``~/.agents/skills``. ``~/.agents/skills`` stays a user directory even when the walk passes
    through the home directory.
    """
    home_dir = Path(os.path.abspath(home if home is not None else Path.home()))
    user_agents = home_dir / ".agents" / "skills"
    dirs: list[tuple[Path, str]] = []
    if include_project:
        start = Path(os.path.abspath(cwd))
        dirs.append((start / CONFIG_DIR_NAME / "skills", "project"))
        stop = find_git_root(start)
        for directory in [start, *start.parents]:
            candidate = directory / ".agents" / "skills"
            if candidate != user_agents:
                dirs.append((candidate, "project"))
            if stop is not None and directory == stop:
                break
    dirs.append((Path(os.path.abspath(agent_dir)) / "skills", "user"))
    dirs.append((user_agents, "user"))
    return dirs


class _SkillCollector:
    """Applies first-wins naming and realpath de-duplication across every source."""

    def __init__(self) -> None:
        self.by_name: dict[str, Skill] = {}
        self.real_paths: set[str] = set()
        self.diagnostics: list[ResourceDiagnostic] = []
        self.collisions: list[ResourceDiagnostic] = []

    def add(self, result: SkillLoadResult) -> None:
        self.diagnostics.extend(result.diagnostics)
        for skill in result.skills:
            real = os.path.realpath(skill.file_path)
            if real in self.real_paths:
                continue  # the same file through another path (a symlink): not a collision
            existing = self.by_name.get(skill.name)
            if existing is not None:
                self.collisions.append(
                    ResourceDiagnostic(
                        "collision",
                        f'name "{skill.name}" collision',
                        skill.file_path,
                        "skill",
                        winner_path=existing.file_path,
                    )
                )
                continue
            self.by_name[skill.name] = skill
            self.real_paths.add(real)

    def result(self) -> SkillLoadResult:
        return SkillLoadResult(list(self.by_name.values()), [*self.diagnostics, *self.collisions])


def _load_explicit_path(path: Path, source: str) -> SkillLoadResult:
    if not path.exists():
        return SkillLoadResult(
            diagnostics=[ResourceDiagnostic("warning", "skill path does not exist", path, "skill")]
        )
    if path.is_dir():
        return scan_skill_dir(path, source, include_root_files=True)
    if path.is_file() and path.name.endswith(".md"):
        skill, diagnostics = load_skill_file(path, source)
        return SkillLoadResult([skill] if skill else [], diagnostics)
    return SkillLoadResult(
        diagnostics=[ResourceDiagnostic("warning", "skill path is not a markdown file", path, "skill")]
    )


def load_skills(
    *,
    cwd: Path,
    agent_dir: Path,
    include_defaults: bool = True,
    include_project: bool = True,
    explicit_paths: Iterable[str | Path | tuple[str | Path, str]] = (),
    home: Path | None = None,
) -> SkillLoadResult:
    """Load skills from the default locations and from explicit paths, in that order.

    Args:
        cwd: The working directory (project locations are found from it).
        agent_dir: The agent directory (``<agent>/skills``).
        include_defaults: Scan the auto-discovered directories (``False`` for ``--no-skills``).
        include_project: Include project directories; pass ``False`` for untrusted projects.
        explicit_paths: Files or directories from settings and ``--skill``; ``~`` is expanded and
            relative paths resolve against ``cwd``. An item may be ``(path, source)``; plain
            items get the source ``"path"``. They are loaded even without defaults.
        home: The home directory for ``~/.agents/skills`` (default: the real one).
    """
    collector = _SkillCollector()
    if include_defaults:
        for directory, source in default_skill_dirs(
            cwd, agent_dir, include_project=include_project, home=home
        ):
            collector.add(scan_skill_dir(directory, source, include_root_files=False))
    for item in explicit_paths:
        raw, source = item if isinstance(item, tuple) else (item, "path")
        collector.add(_load_explicit_path(resolve_path(raw, Path(cwd)), source))
    return collector.result()


def escape_xml(text: str) -> str:
    """Escape the five XML special characters."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


_PROMPT_INTRO = (
    "\n\nThe following skills provide specialized instructions for specific tasks.\n"
    "Use the read tool to load a skill's file when the task matches its description.\n"
    "When a skill file references a relative path, resolve it against the skill directory "
    "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n"
    "\n"
)


def format_skills_for_prompt(skills: Sequence[Skill]) -> str:
    """The ``<available_skills>`` block for the system prompt; empty when no skill is visible.

    Skills with ``disable-model-invocation`` are left out.
    """
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    lines = ["<available_skills>"]
    for skill in visible:
        lines.append("  <skill>")
        lines.append(f"    <name>{escape_xml(skill.name)}</name>")
        lines.append(f"    <description>{escape_xml(skill.description)}</description>")
        lines.append(f"    <location>{escape_xml(str(skill.file_path))}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return _PROMPT_INTRO + "\n".join(lines)


def expand_skill_command(text: str, skills: Sequence[Skill]) -> str | None:
    """Expand ``/skill:name args`` into the skill's body wrapped in a ``<skill>`` element.

    Returns:
        The expanded prompt text, or ``None`` when ``text`` is not a ``/skill:`` command or names
        no loaded skill (the caller then sends the text unchanged).

    Raises:
        SkillError: The skill's file can no longer be read.
    """
    if not text.startswith(SKILL_COMMAND_PREFIX):
        return None
    match = re.match(r"(\S*)(?:\s+(.*))?\Z", text[len(SKILL_COMMAND_PREFIX) :], re.DOTALL)
    assert match is not None  # the pattern matches any string
    name, args = match.group(1), (match.group(2) or "").strip()
    skill = next((candidate for candidate in skills if candidate.name == name), None)
    if skill is None:
        return None
    try:
        content = skill.file_path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SkillError(
            f"Could not read skill {name!r} at {skill.file_path}: {exc.strerror or exc}"
        ) from exc
    from pi_tui.resources.frontmatter import strip_frontmatter

    body = strip_frontmatter(content)
    location = str(skill.file_path).replace("&", "&amp;").replace('"', "&quot;")
    expanded = (
        f'<skill name="{name}" location="{location}">\n'
        f"References are relative to {skill.base_dir}.\n\n"
        f"{body}\n"
        "</skill>"
    )
    if args:
        expanded += f"\n\n{args}"
    return expanded
