"""Packages: extensions, skills, prompt templates and themes installed from PyPI, git or a local folder.

``pi-tui install|remove|update|list`` drive `PackageManager`; at start-up `resolve_packages` hands the
installed packages' resources to the session (see ``docs/extensions.md``, "Packages").
"""

from __future__ import annotations

from .errors import OfflineError, PackageError, PackageInstallError, PackageSourceError
from .manager import PackageEntry, PackageManager, Scope, UpdateResult, is_offline, scope_label
from .manifest import MANIFEST_FILE, RESOURCE_KINDS, PackageResources, package_resources, read_manifest
from .resolve import ResolvedPackage, ResolvedPackages, resolve_packages
from .source import PackageSource, install_location, parse_source, settings_value

__all__ = [
    "MANIFEST_FILE",
    "RESOURCE_KINDS",
    "OfflineError",
    "PackageEntry",
    "PackageError",
    "PackageInstallError",
    "PackageManager",
    "PackageResources",
    "PackageSource",
    "PackageSourceError",
    "ResolvedPackage",
    "ResolvedPackages",
    "Scope",
    "UpdateResult",
    "install_location",
    "is_offline",
    "package_resources",
    "parse_source",
    "read_manifest",
    "resolve_packages",
    "scope_label",
    "settings_value",
]
