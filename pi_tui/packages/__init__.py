"""Packages: extensions, skills, prompt templates and themes installed from PyPI, git or a local folder.

``pi-tui install|remove|update|list`` drive `PackageManager`; at start-up `resolve_packages` hands the
installed packages' resources to the session (see ``docs/extensions.md``, "Packages").

Names are re-exported lazily: start-up imports only what it uses (no git or pip machinery when no
package is configured).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.util.lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import OfflineError, PackageError, PackageInstallError, PackageSourceError
    from .manager import PackageEntry, PackageManager, Scope, UpdateResult, is_offline, scope_label
    from .manifest import MANIFEST_FILE, RESOURCE_KINDS, PackageResources, package_resources, read_manifest
    from .resolve import ResolvedPackage, ResolvedPackages, resolve_packages
    from .source import PackageSource, install_location, parse_source, settings_value

_EXPORTS = {
    "errors": ("OfflineError", "PackageError", "PackageInstallError", "PackageSourceError"),
    "manager": ("PackageEntry", "PackageManager", "Scope", "UpdateResult", "is_offline", "scope_label"),
    "manifest": ("MANIFEST_FILE", "RESOURCE_KINDS", "PackageResources", "package_resources", "read_manifest"),
    "resolve": ("ResolvedPackage", "ResolvedPackages", "resolve_packages"),
    "source": ("PackageSource", "install_location", "parse_source", "settings_value"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "MANIFEST_FILE",
    "OfflineError",
    "PackageEntry",
    "PackageError",
    "PackageInstallError",
    "PackageManager",
    "PackageResources",
    "PackageSource",
    "PackageSourceError",
    "RESOURCE_KINDS",
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


__getattr__ = lazy_exports(__name__, _MODULE_OF)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
