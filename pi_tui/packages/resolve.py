"""Start-up: the resources of the installed packages, installing listed packages that are missing.

Order and precedence (pi-reference §8.1): project packages, then user packages; a package listed in both
scopes (same identity) is taken once, from the project, with the project entry's filters. Project packages
are read only when the settings manager reads the project file, that is once the project is trusted; only
then are missing ones installed. Install failures become warnings: start-up goes on without the package.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a package is configured: start-up without packages stays light
    from pi_tui.resources.settings import SettingsManager

    from .manager import PackageEntry, Scope
    from .manifest import PackageResources, ResourceKind

__all__ = ["ResolvedPackage", "ResolvedPackages", "extension_provider", "resolve_packages"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ResolvedPackage:
    """One package in use: its settings entry and what it provides."""

    entry: PackageEntry
    resources: PackageResources


@dataclass(slots=True)
class ResolvedPackages:
    """The packages in use, in load order, and what start-up had to say about them.

    Attributes:
        packages: Project packages first, then user packages not shadowed by a project one.
        warnings: Failed installs, invalid entries, manifest problems.
        installed: One line per package installed during this start-up.
    """

    packages: list[ResolvedPackage] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    installed: list[str] = field(default_factory=list)

    def paths(self, kind: ResourceKind) -> list[Path]:
        """Every path of one kind across the packages, in load order."""
        return [path for package in self.packages for path in package.resources.of(kind)]

    @property
    def extension_paths(self) -> list[Path]:
        return self.paths("extensions")

    @property
    def skill_paths(self) -> list[Path]:
        return self.paths("skills")

    @property
    def prompt_paths(self) -> list[Path]:
        return self.paths("prompts")

    @property
    def theme_paths(self) -> list[Path]:
        return self.paths("themes")

    def dependency_paths(self) -> list[Path]:
        """The dependency folders of packages that bring extensions."""
        found: list[Path] = []
        for package in self.packages:
            if package.resources.extensions:
                found += [p for p in package.entry.sys_paths() if p not in found]
        return found

    def activate(self) -> None:
        """Append the packages' dependency folders to ``sys.path`` before their extensions are imported.

        Appended, never prepended, like an extension's ``vendor/`` folder: pi-tui's own dependencies keep
        their versions.
        """
        for folder in self.dependency_paths():
            if str(folder) not in sys.path:
                sys.path.append(str(folder))


def _merged_resources(entry: PackageEntry) -> PackageResources:
    from .manifest import RESOURCE_KINDS, PackageResources, package_resources

    merged = PackageResources()
    roots = entry.roots()
    for root in roots:
        found = package_resources(root, entry.filters)
        for kind in RESOURCE_KINDS:
            merged.add(kind, found.of(kind))
        merged.problems += found.problems
        merged.manifest = merged.manifest or found.manifest
    return merged


def resolve_packages(
    settings: SettingsManager,
    *,
    install_missing: bool = True,
    offline: bool | None = None,
    progress: Callable[[str], None] | None = None,
) -> ResolvedPackages:
    """The packages of both settings scopes, ready to load.

    Args:
        settings: The session's `SettingsManager`; project packages come from its project file, which it
            reads only for a trusted project.
        install_missing: Install listed packages that are not on disk (the start-up behaviour); when
            false they are reported and skipped.
        offline: Refuse network installs; default: ``PI_OFFLINE``.
        progress: Called with one line per package installed.
    """
    result = ResolvedPackages()
    scopes: list[Scope] = ["project", "global"] if settings.project_trusted else ["global"]
    if not any(settings.scope_dict(scope).get("packages") for scope in scopes):
        return result

    from .errors import PackageError
    from .manager import PackageManager, scope_label

    manager = PackageManager(settings, offline=offline)
    seen: set[str] = set()
    for scope in scopes:
        for entry in manager.entries(scope):
            if entry.source.identity in seen:
                continue  # the same package in both scopes: the project entry, met first, wins
            seen.add(entry.source.identity)
            label = f"{entry.source.raw} ({scope_label(scope)} package)"
            if not entry.installed:
                if not install_missing:
                    result.warnings.append(
                        f"Package {label} is not installed; run pi-tui update to install it"
                    )
                    continue
                try:
                    notes = manager.install_entry(entry)
                except PackageError as exc:
                    result.warnings.append(f"Package {label} is not available: {exc}")
                    continue
                line = f"Installed {label}"
                result.installed.append(line)
                if progress is not None:
                    progress(line)
                result.warnings += notes
            resources = _merged_resources(entry)
            result.warnings += [f"Package {entry.source.raw}: {problem}" for problem in resources.problems]
            result.packages.append(ResolvedPackage(entry, resources))
    result.warnings += manager.problems
    return result


def extension_provider(
    first: ResolvedPackages, settings: Callable[[], SettingsManager]
) -> Callable[[], list[Path]]:
    """What extension discovery calls for package extensions.

    The first call answers from ``first`` (the start-up resolution); later calls (``/reload``, a switch
    to a session of another directory) resolve again from the settings ``settings()`` returns then,
    without installing anything. Each call puts the packages' dependency folders on ``sys.path`` first.
    """
    pending = [first]

    def provide() -> list[Path]:
        current = pending.pop() if pending else resolve_packages(settings(), install_missing=False)
        if current is not first:
            for warning in current.warnings:
                logger.warning("%s", warning)
        current.activate()
        return current.extension_paths

    return provide
