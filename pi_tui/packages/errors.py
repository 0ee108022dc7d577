"""The exceptions of the package manager; every message is one a user can act on."""

from __future__ import annotations

__all__ = ["PackageError", "PackageSourceError", "PackageInstallError", "OfflineError"]


class PackageError(Exception):
    """Base class: a package command or start-up install could not do what was asked."""


class PackageSourceError(PackageError, ValueError):
    """A source string that is not a PyPI name, a git location or a local path."""


class PackageInstallError(PackageError):
    """git or pip failed, or the installed package is unusable."""


class OfflineError(PackageError):
    """A network operation was asked for while ``--offline`` / ``PI_OFFLINE`` is set."""
