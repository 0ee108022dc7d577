"""Finding extensions on disk (nothing is imported here).

Load order (as pi runs extensions): project-local, then global, then the
explicitly configured ones (settings ``extensions[]``, then ``-e`` paths). Within a folder, names are
sorted. The first occurrence of a path wins.

- ``<cwd>/.pi/extensions/``: only when the project is trusted. An untrusted project's folder is listed
  (to tell the user what was skipped) but no file in it is read.
- ``<agent dir>/extensions/``.
- installed packages' extensions (``pi_tui.packages``: project packages, then user ones).
- settings ``extensions[]`` (project entries only when trusted): files, package folders, folders of
  extensions, globs; ``!path`` / ``-path`` exclude, ``+path`` includes.
- ``-e PATH`` (repeatable), loaded even with ``--no-extensions``.

Bundled extensions (the top-level ``extensions/`` folder, installed as ``pi_tui.bundled_extensions``)
are enabled by name: ``-e permission_gate`` (a bare name that is not a path) or settings
``extensions: ["bundled:permission_gate"]``.

In a folder, an extension is ``name.py`` or a package folder ``name/__init__.py``, one level deep.
Names starting with ``_`` or ``.`` are skipped (shared helpers), as are ``vendor``, ``.deps`` and
``__pycache__``.
"""

from __future__ import annotations

import fnmatch
import glob
import importlib.util
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pi_tui.resources.settings import ResourceEntry

__all__ = [
    "ExtensionSource",
    "Discovery",
    "discover_extensions",
    "extensions_in_folder",
    "PROJECT_DIR",
    "BUNDLED_PREFIX",
    "bundled_extensions_dir",
    "bundled_extension",
]

Scope = Literal["project", "global", "package", "settings", "cli"]  # "package": from an installed package

PROJECT_DIR = Path(".pi") / "extensions"
_SKIPPED_DIRS = frozenset({"vendor", ".deps", "__pycache__", "node_modules"})
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class ExtensionSource:
    """One extension to load: a ``.py`` file or a package folder.

    Attributes:
        path: The file, or the package folder (holding ``__init__.py``).
        scope: Where it was found.
    """

    path: Path
    scope: Scope

    @property
    def name(self) -> str:
        """The display name: the file stem or the folder name."""
        return self.path.stem if self.path.suffix == ".py" else self.path.name

    @property
    def entry_file(self) -> Path:
        return self.path if self.path.suffix == ".py" else self.path / "__init__.py"


@dataclass(slots=True)
class Discovery:
    sources: list[ExtensionSource] = field(default_factory=list)
    skipped_untrusted: list[Path] = field(default_factory=list)
    """Extensions of an untrusted project that were not loaded."""
    errors: list[str] = field(default_factory=list)


def _candidate(path: Path) -> bool:
    if path.name.startswith((".", "_")) or path.name in _SKIPPED_DIRS:
        return False
    if path.is_file():
        return path.suffix == ".py"
    return path.is_dir() and (path / "__init__.py").is_file()


def extensions_in_folder(folder: Path) -> list[Path]:
    """The extensions directly inside ``folder`` (files and package folders), sorted by name."""
    try:
        children = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [child for child in children if _candidate(child)]


def _expand_entry(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix == ".py" else []
    if path.is_dir():
        if (path / "__init__.py").is_file():
            return [path]
        return extensions_in_folder(path)
    return []


# --- bundled extensions: enabled by name (`-e NAME`, settings "bundled:NAME") ---------------------------

BUNDLED_PREFIX = "bundled:"


def bundled_extensions_dir() -> Path | None:
    """The folder of pi-tui's bundled extensions: the installed ``pi_tui.bundled_extensions`` package,
    else the ``extensions/`` folder of a source checkout."""
    try:
        spec = importlib.util.find_spec("pi_tui.bundled_extensions")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "extensions").is_dir():
        return checkout / "extensions"
    return None


def bundled_extension(name: str) -> Path | None:
    """The bundled extension called ``name`` (``todo`` → ``.../todo.py``), or None."""
    folder = bundled_extensions_dir()
    name = name.removeprefix(BUNDLED_PREFIX)
    if folder is None or not name.isidentifier() or name.startswith("_"):
        return None
    for path in (folder / f"{name}.py", folder / name):
        if _candidate(path):
            return path
    return None


def _unknown_bundled(name: str) -> str:
    folder = bundled_extensions_dir()
    names = [p.stem if p.suffix == ".py" else p.name for p in extensions_in_folder(folder)] if folder else []
    return f'no bundled extension "{name}" (bundled: {", ".join(names) or "none"})'


# --- end bundled extensions --------------------------------------------------------------------------


def _settings_paths(entries: Iterable[ResourceEntry]) -> tuple[list[Path], list[str], list[str]]:
    """Includes, excludes (patterns) and errors from settings entries."""
    from pi_tui.resources.paths import resolve_path

    includes: list[Path] = []
    excludes: list[str] = []
    errors: list[str] = []
    for entry in entries:
        value = str(entry.value).strip()
        if not value:
            continue
        exclude = value[0] in "!-"
        if value[0] in "!-+":
            value = value[1:]
        if value.startswith(BUNDLED_PREFIX):  # bundled extension by name
            bundled = bundled_extension(value)
            if bundled is None:
                errors.append(
                    f"Extension {value} from settings: {_unknown_bundled(value[len(BUNDLED_PREFIX) :])}"
                )
                continue
            path = bundled
        else:
            path = resolve_path(value, entry.base_dir)
        if exclude:
            excludes.append(str(path))
        elif _GLOB_CHARS & set(value):
            for match in sorted(glob.glob(str(path))):
                includes.extend(_expand_entry(Path(match)))
        else:
            found = _expand_entry(path)
            if not found:
                errors.append(f'Extension path "{path}" from settings does not exist or holds no extension')
            includes.extend(found)
    return includes, excludes, errors


def _excluded(path: Path, patterns: Sequence[str]) -> bool:
    text = str(path)
    for pattern in patterns:
        if _GLOB_CHARS & set(pattern):
            if fnmatch.fnmatchcase(text, pattern):
                return True
        elif text == pattern or text.startswith(pattern.rstrip("/") + "/"):
            return True
    return False


def discover_extensions(
    cwd: Path,
    agent_dir: Path,
    *,
    settings_entries: Iterable[ResourceEntry] = (),
    cli_paths: Sequence[str] = (),
    no_extensions: bool = False,
    project_trusted: bool = False,
    package_paths: Sequence[Path] = (),  # packages
) -> Discovery:
    """Every extension to load, in load order.

    Args:
        cwd: The project directory (``.pi/extensions`` below it).
        agent_dir: The agent directory (``extensions`` below it).
        settings_entries: ``SettingsManager.resource_entries("extensions")``; project-scope entries are
            ignored unless ``project_trusted``.
        cli_paths: ``-e`` paths, relative to ``cwd``.
        no_extensions: ``--no-extensions``: only ``cli_paths`` load.
        project_trusted: Whether the project's own extensions may run.
        package_paths: Extensions of installed packages (already trust-filtered), loaded after
            auto-discovery and before settings ``extensions[]``; skipped with ``no_extensions``.
    """
    found = Discovery()
    seen: set[Path] = set()

    def add(path: Path, scope: Scope) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            found.sources.append(ExtensionSource(path, scope))

    if not no_extensions:
        project = extensions_in_folder(cwd / PROJECT_DIR)
        if project_trusted:
            includes, excludes, errors = _settings_paths(settings_entries)
        else:
            found.skipped_untrusted = project
            scoped = [e for e in settings_entries if e.scope != "project"]
            includes, excludes, errors = _settings_paths(scoped)
            project = []
        found.errors += errors
        for path in project:
            if not _excluded(path, excludes):
                add(path, "project")
        for path in extensions_in_folder(agent_dir / "extensions"):
            if not _excluded(path, excludes):
                add(path, "global")
        # --- packages: installed packages' extensions, after auto-discovery ---
        for path in package_paths:
            if not _excluded(path, excludes):
                add(path, "package")
        # --- end packages ---
        for path in includes:
            if not _excluded(path, excludes):
                add(path, "settings")

    for raw in cli_paths:
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else cwd / path
        entries = _expand_entry(path)
        bare = "/" not in raw and not raw.endswith(".py")
        if not entries and (bare or raw.startswith(BUNDLED_PREFIX)):  # a bundled extension by name
            bundled = bundled_extension(raw)
            entries = [bundled] if bundled is not None else []
            if not entries:
                found.errors.append(
                    f'Failed to load extension "{raw}": {_unknown_bundled(raw.removeprefix(BUNDLED_PREFIX))}'
                )
                continue
        if not entries:
            found.errors.append(f'Failed to load extension "{raw}": no such extension file or folder')
        for entry in entries:
            add(entry, "cli")
    return found
