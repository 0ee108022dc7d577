"""What a package provides: its manifest, or the conventional folders, narrowed by settings filters.

A package says what it ships in ``pi-package.json`` at its root::

    {"extensions": ["src/guard.py"], "skills": ["skills"], "prompts": ["prompts"], "themes": ["themes"]}

or in the same keys under ``[tool.pi-tui]`` in its ``pyproject.toml`` (``pi-package.json`` wins when both
exist). Paths are relative to the package root and may be globs. A kind the manifest does not name falls
back to its conventional folder: ``extensions/``, ``skills/``, ``prompts/``, ``themes/``. A listed path that
is missing is reported and skipped.

Settings filters (the object form ``{"source": …, "extensions": [...], …}``) narrow one kind: the key
absent means everything, ``[]`` means nothing; entries are globs relative to the package root (a folder
matches what is inside it), ``!glob`` excludes, ``+path`` force-includes and ``-path`` force-excludes an
exact path.
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_tui.util import json_safe

__all__ = [
    "MANIFEST_FILE",
    "RESOURCE_KINDS",
    "PackageResources",
    "ResourceKind",
    "package_resources",
    "read_manifest",
]

MANIFEST_FILE = "pi-package.json"
ResourceKind = Literal["extensions", "skills", "prompts", "themes"]
RESOURCE_KINDS: tuple[ResourceKind, ...] = ("extensions", "skills", "prompts", "themes")
_GLOB_CHARS = frozenset("*?[")


@dataclass(slots=True)
class PackageResources:
    """The resources of one package root, as absolute paths in load order.

    Attributes:
        extensions: Extension files (``.py``) and package folders (with ``__init__.py``).
        skills: Skill folders or files, handed to the skills loader as explicit paths.
        prompts: Prompt template files or folders.
        themes: Theme ``.json`` files.
        manifest: The manifest read (``pi-package.json`` or ``pyproject.toml``); ``None`` when only the
            conventional folders were used.
        problems: Things worth a warning (an invalid manifest, a listed path that is missing).
    """

    extensions: list[Path] = field(default_factory=list)
    skills: list[Path] = field(default_factory=list)
    prompts: list[Path] = field(default_factory=list)
    themes: list[Path] = field(default_factory=list)
    manifest: Path | None = None
    problems: list[str] = field(default_factory=list)

    def of(self, kind: ResourceKind) -> list[Path]:
        """The paths of one kind."""
        return list(self._list(kind))

    def add(self, kind: ResourceKind, paths: list[Path]) -> None:
        """Append ``paths`` to the paths of one kind."""
        self._list(kind).extend(paths)

    def _list(self, kind: ResourceKind) -> list[Path]:
        match kind:
            case "extensions":
                return self.extensions
            case "skills":
                return self.skills
            case "prompts":
                return self.prompts
            case "themes":
                return self.themes

    @property
    def empty(self) -> bool:
        return not (self.extensions or self.skills or self.prompts or self.themes)


def read_manifest(root: Path) -> tuple[dict[str, list[str]] | None, Path | None, list[str]]:
    """The manifest of the package at ``root``: (kind → entries, the file read, problems).

    Returns ``(None, None, [])`` when the package has no manifest.
    """
    json_file = root / MANIFEST_FILE
    if json_file.is_file():
        try:
            data = json_safe.loads(json_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return None, json_file, [f"{json_file} is not valid JSON ({exc}); using the conventional folders"]
        return _manifest_entries(data, json_file)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return None, None, [f"{pyproject} could not be read ({exc}); using the conventional folders"]
        table = data.get("tool", {}).get("pi-tui") if isinstance(data.get("tool"), dict) else None
        if table is not None:
            return _manifest_entries(table, pyproject)
    return None, None, []


def _manifest_entries(data: Any, where: Path) -> tuple[dict[str, list[str]] | None, Path, list[str]]:
    if not isinstance(data, dict):
        return None, where, [f"{where}: the manifest must be an object; using the conventional folders"]
    entries: dict[str, list[str]] = {}
    problems: list[str] = []
    for kind in RESOURCE_KINDS:
        if kind not in data:
            continue
        value = data[kind]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f'{where}: "{kind}" must be a list of paths; ignored')
            continue
        entries[kind] = value
    return entries, where, problems


def _inside(path: Path, root: Path) -> bool:
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _listed_paths(root: Path, entries: list[str], kind: str, where: Path, problems: list[str]) -> list[Path]:
    paths: list[Path] = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        candidate = root / text
        matches = (
            [Path(m) for m in sorted(glob.glob(str(candidate)))] if _GLOB_CHARS & set(text) else [candidate]
        )
        if not matches or not all(m.exists() for m in matches):
            problems.append(f'{where}: {kind} path "{text}" does not exist; skipped')
            continue
        for match in matches:
            if not _inside(match, root):
                problems.append(f'{where}: {kind} path "{text}" leaves the package folder; skipped')
                continue
            paths.append(Path(os.path.normpath(match)))
    return paths


def _expand_extensions(paths: list[Path]) -> list[Path]:
    from pi_tui.extensions.discovery import extensions_in_folder

    found: list[Path] = []
    for path in paths:
        if path.is_file():
            if path.suffix == ".py":
                found.append(path)
        elif (path / "__init__.py").is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(extensions_in_folder(path))
    return found


def _expand_items(kind: ResourceKind, paths: list[Path]) -> list[Path]:
    """Folders split into the items a filter can name (skills, template files, theme files)."""
    items: list[Path] = []
    for path in paths:
        if not path.is_dir() or (kind == "skills" and (path / "SKILL.md").is_file()):
            items.append(path)
            continue
        for child in sorted(path.iterdir(), key=lambda p: p.name):
            if child.name.startswith("."):
                continue
            if kind == "skills" and (child.is_dir() or child.suffix == ".md"):
                items.append(child)
            elif kind == "prompts" and child.is_file() and child.suffix == ".md":
                items.append(child)
            elif kind == "themes" and child.is_file() and child.suffix == ".json":
                items.append(child)
    return items


def _matches(relative: str, pattern: str) -> bool:
    pattern = pattern.strip().strip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if _GLOB_CHARS & set(pattern):
        return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern + "/*")
    return relative == pattern or relative.startswith(pattern + "/")


def _apply_filter(root: Path, items: list[Path], patterns: list[str]) -> list[Path]:
    def rel(path: Path) -> str:
        return os.path.relpath(path, root).replace(os.sep, "/")

    includes = [p for p in patterns if p and p[0] not in "!+-"]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    forced_in = [p[1:] for p in patterns if p.startswith("+")]
    forced_out = [p[1:] for p in patterns if p.startswith("-")]
    chosen = [i for i in items if any(_matches(rel(i), p) for p in includes)] if includes else list(items)
    if not patterns:
        chosen = []
    chosen = [i for i in chosen if not any(_matches(rel(i), p) for p in excludes)]
    for forced in forced_in:
        path = Path(os.path.normpath(root / forced.strip()))
        if path.exists() and path not in chosen:
            chosen.append(path)
    return [i for i in chosen if not any(rel(i) == f.strip().strip("/") for f in forced_out)]


def package_resources(root: Path, filters: Mapping[str, Any] | None = None) -> PackageResources:
    """Everything the package at ``root`` provides, narrowed by ``filters`` (a settings object entry).

    Args:
        root: The package folder (a git clone, a local folder or the import package of a PyPI install).
        filters: The object form of the settings entry, or ``None`` for everything.
    """
    manifest, where, problems = read_manifest(root)
    found = PackageResources(manifest=where if manifest is not None else None, problems=problems)
    for kind in RESOURCE_KINDS:
        if manifest is not None and kind in manifest:
            assert where is not None
            paths = _listed_paths(root, manifest[kind], kind, where, found.problems)
        else:
            conventional = root / kind
            paths = [conventional] if conventional.is_dir() else []
        patterns = filters.get(kind) if filters is not None else None
        if kind == "extensions":
            paths = _expand_extensions(paths)
        elif isinstance(patterns, list):
            paths = _expand_items(kind, paths)
        elif kind == "themes":
            paths = _expand_items(kind, paths)
        if isinstance(patterns, list):
            paths = _apply_filter(root, paths, [str(p) for p in patterns])
        found.add(kind, paths)
    return found
