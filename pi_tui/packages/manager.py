"""Installing, removing, updating and listing packages, and keeping the settings ``packages`` list in step.

Scopes are the settings scopes: ``"global"`` (``<agent dir>/settings.json``, shown as "user") and
``"project"`` (``<cwd>/.pi/settings.json``, ``-l``). Each scope installs below its own folder:

- git: ``<agent dir>/git/<host>/<path>`` or ``<cwd>/.pi/git/<host>/<path>``, then the package's own
  Python dependencies (``requirements.txt`` or ``[project] dependencies``) into ``<clone>/.deps``;
- PyPI: ``<agent dir>/pypi/<name>`` or ``<cwd>/.pi/pypi/<name>`` (``pip install --target``);
- local paths are used in place: nothing is copied, nothing is deleted on removal.

Offline (``PI_OFFLINE`` set, as ``--offline`` does): anything that needs the network is refused with an
`OfflineError`; local git repositories and local folders still work.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pi_tui.resources.paths import CONFIG_DIR_NAME
from pi_tui.util.json_types import JsonObject

from . import git_ops, pip_ops
from .errors import OfflineError, PackageError, PackageInstallError, PackageSourceError
from .source import PackageSource, install_location, parse_source, settings_value

if TYPE_CHECKING:
    from pi_tui.resources.settings import SettingsManager

__all__ = ["PackageEntry", "PackageManager", "Scope", "UpdateResult", "is_offline", "scope_label"]

Scope = Literal["global", "project"]
Progress = Callable[[str], None]


def is_offline() -> bool:
    """Whether network operations are off (``PI_OFFLINE``, set by ``--offline``)."""
    return os.environ.get("PI_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def scope_label(scope: Scope) -> str:
    """``"user"`` or ``"project"``, as pi names them."""
    return "user" if scope == "global" else "project"


def _named_source(value: object) -> tuple[str, str | JsonObject] | None:
    """The source a stored ``packages`` value names and the value as `PackageEntry` holds it; None when
    it names none (neither a string nor an object with a string ``source``)."""
    if isinstance(value, str):
        return value, value
    if isinstance(value, dict) and isinstance(value.get("source"), str):
        return value["source"], value
    return None


@dataclass(frozen=True, slots=True)
class PackageEntry:
    """One ``packages`` entry of a settings file, parsed.

    Attributes:
        source: The parsed source (relative local paths resolved against the settings file's folder).
        scope: The settings file it came from.
        value: The entry as stored: a string, or the ``{"source": …, …}`` object form.
        install_dir: Where the package lives (the folder itself for a local path).
    """

    source: PackageSource
    scope: Scope
    value: str | JsonObject
    install_dir: Path

    @property
    def filters(self) -> JsonObject | None:
        """The object form's resource filters, or ``None`` for a plain string entry."""
        return self.value if isinstance(self.value, dict) else None

    @property
    def installed(self) -> bool:
        return self.install_dir.is_dir()

    def roots(self) -> list[Path]:
        """The folders holding the manifest or conventional folders (the import packages for PyPI)."""
        if self.source.kind == "pypi":
            assert self.source.name is not None
            return pip_ops.pypi_package_roots(self.install_dir, self.source.name)
        return [self.install_dir]

    def sys_paths(self) -> list[Path]:
        """Folders to append to ``sys.path`` so the package's extensions find their dependencies."""
        if self.source.kind == "pypi":
            return [self.install_dir]
        deps = self.install_dir / pip_ops.DEPS_DIR
        return [deps] if deps.is_dir() else []


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """What ``update`` did with one package: a line for the user and whether it went wrong."""

    message: str
    ok: bool = True


class PackageManager:
    """Package operations for one working directory, recorded through a `SettingsManager`.

    Args:
        settings: The settings to read and write ``packages`` in. Its project file must be readable for
            project operations (``project_trusted=True`` on the manager).
        offline: Refuse network operations; default: `is_offline`.
        progress: Called with one line per step worth showing (installs at start-up, fetches).
    """

    def __init__(
        self, settings: SettingsManager, *, offline: bool | None = None, progress: Progress | None = None
    ) -> None:
        self.settings = settings
        self.cwd = Path(settings.cwd)
        self.agent_dir = Path(settings.agent_dir)
        self.offline = is_offline() if offline is None else offline
        self.progress = progress or (lambda line: None)
        self.problems: list[str] = []
        """Settings entries that could not be parsed (each reported once)."""

    # -- places -----------------------------------------------------------------------------------

    def scope_root(self, scope: Scope) -> Path:
        """The folder holding the scope's settings file and its installs."""
        return self.agent_dir if scope == "global" else self.cwd / CONFIG_DIR_NAME

    def parse(self, raw: str) -> PackageSource:
        """Parse a source typed on the command line (relative paths against the working directory)."""
        return parse_source(raw, self.cwd)

    # -- settings ---------------------------------------------------------------------------------

    def _stored(self, scope: Scope) -> list[object]:
        value = self.settings.scope_dict(scope).get("packages")
        return list(value) if isinstance(value, list) else []

    def entries(self, scope: Scope) -> list[PackageEntry]:
        """The scope's ``packages`` entries in order; unparsable ones are skipped into `problems`."""
        found: list[PackageEntry] = []
        root = self.scope_root(scope)
        for value in self._stored(scope):
            named = _named_source(value)
            if named is None:
                self._problem(f"Ignoring a {scope_label(scope)} package entry without a source: {value!r}")
                continue
            raw, entry_value = named
            try:
                source = parse_source(raw, root)
            except PackageSourceError as exc:
                self._problem(f"Ignoring {scope_label(scope)} package: {exc}")
                continue
            found.append(PackageEntry(source, scope, entry_value, install_location(source, root)))
        return found

    def _problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def find(self, source: PackageSource, scope: Scope) -> PackageEntry | None:
        """The entry of ``scope`` that is the same package as ``source``."""
        return next((e for e in self.entries(scope) if e.source.identity == source.identity), None)

    def _save(self, scope: Scope, values: list[object]) -> None:
        self.settings.set("packages", values, scope=scope)
        errors = self.settings.drain_errors()
        if errors:
            raise PackageError("; ".join(errors))

    # -- operations -------------------------------------------------------------------------------

    def _require_online(self, source: PackageSource, action: str) -> None:
        if self.offline and source.needs_network:
            raise OfflineError(
                f"Cannot {action} {source.raw} while offline (--offline / PI_OFFLINE is set); "
                "unset it to reach the network"
            )

    def _fetch(self, source: PackageSource, dest: Path) -> list[str]:
        """Bring ``source`` to ``dest``; returns notes worth a warning."""
        notes: list[str] = []
        if source.kind == "local":
            assert source.path is not None
            if not source.path.is_dir():
                what = "is not a folder" if source.path.exists() else "does not exist"
                raise PackageInstallError(f"Local package {source.path} {what}")
            return notes
        if source.kind == "pypi":
            self._require_online(source, "install")
            assert source.requirement is not None and source.name is not None
            pip_ops.pip_install([source.requirement], dest, what=source.raw)
            if not pip_ops.pypi_package_roots(dest, source.name):
                notes.append(f"{source.raw} installed no package folder, so it provides no resources")
            return notes
        assert source.url is not None
        if dest.is_dir():
            if self.offline and source.needs_network:
                notes.append(f"{source.raw} is already cloned; not fetching it while offline")
            else:
                git_ops.sync(dest, source.url, source.ref)
        else:
            self._require_online(source, "install")
            git_ops.clone(source.url, dest, source.ref)
        notes += self._dependencies(source, dest)
        return notes

    def _dependencies(self, source: PackageSource, root: Path) -> list[str]:
        if pip_ops.declared_dependencies(root) is None:
            return []
        if self.offline:
            return [f"The Python dependencies of {source.raw} were not installed: offline"]
        pip_ops.install_dependencies(root, source.raw)
        return []

    def install(self, raw: str, scope: Scope) -> tuple[PackageEntry, list[str]]:
        """Install ``raw`` and record it in the scope's settings (replacing an entry for the same package).

        Returns:
            The recorded entry and notes worth a warning.

        Raises:
            PackageError: A bad source, a failed git or pip run, offline, or settings not writable.
        """
        source = self.parse(raw)
        root = self.scope_root(scope)
        dest = install_location(source, root)
        notes = self._fetch(source, dest)
        value: str | JsonObject = settings_value(source, root)
        stored = self._stored(scope)
        existing = self.find(source, scope)
        if existing is None:
            stored.append(value)
        else:
            index = stored.index(existing.value)
            if isinstance(existing.value, dict):
                value = {**existing.value, "source": value}  # keep the user's filters
            stored[index] = value
        self._save(scope, stored)
        return PackageEntry(source, scope, value, dest), notes

    def install_entry(self, entry: PackageEntry) -> list[str]:
        """Install a package already listed in settings (start-up); returns notes worth a warning."""
        return self._fetch(entry.source, entry.install_dir)

    def remove(self, raw: str, scope: Scope) -> PackageEntry | None:
        """Remove the package ``raw`` names from the scope's settings and delete its installed copy.

        Returns:
            The removed entry, or ``None`` when the scope lists no such package.
        """
        source = self.parse(raw)
        entry = self.find(source, scope)
        if entry is None:
            return None
        keep = [v for v, e in self._paired(scope) if e is None or e.source.identity != source.identity]
        self._save(scope, keep)
        if entry.source.kind != "local":
            self._delete_install(entry.install_dir, scope)
        return entry

    def _paired(self, scope: Scope) -> Iterable[tuple[object, PackageEntry | None]]:
        root = self.scope_root(scope)
        for value in self._stored(scope):
            named = _named_source(value)
            if named is None:
                yield value, None
                continue
            raw, entry_value = named
            try:
                source = parse_source(raw, root)
            except PackageSourceError:
                yield value, None
                continue
            yield value, PackageEntry(source, scope, entry_value, install_location(source, root))

    def _delete_install(self, folder: Path, scope: Scope) -> None:
        """Delete a managed install and the empty host/owner folders above it (never a local path)."""
        root = self.scope_root(scope)
        managed = [root / "git", root / "pypi"]
        if not any(base in folder.parents for base in managed):
            return
        shutil.rmtree(folder, ignore_errors=True)
        parent = folder.parent
        while parent not in managed and any(base in parent.parents for base in managed):
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent

    def update(self, raw: str | None = None, *, project_trusted: bool = True) -> list[UpdateResult]:
        """Update every unpinned package of both scopes, or only the one ``raw`` names.

        git packages move to the tip of the remote's default branch (a forced move, so rewritten history
        is followed too); PyPI packages are reinstalled at the newest version; pinned ones and local
        folders are left alone. Without ``raw``, an untrusted project's packages are not touched.

        Raises:
            PackageError: ``raw`` names no listed package.
        """
        scopes: list[Scope] = ["project", "global"]
        targets = [entry for scope in scopes for entry in self.entries(scope)]
        results: list[UpdateResult] = []
        if raw is not None:
            identity = self.parse(raw).identity
            targets = [entry for entry in targets if entry.source.identity == identity]
            if not targets:
                raise PackageError(f"No matching package found for {raw}")
        elif not project_trusted and any(e.scope == "project" for e in targets):
            targets = [entry for entry in targets if entry.scope != "project"]
            results.append(
                UpdateResult(
                    f"Project packages of {self.cwd} were not updated: the project is not trusted "
                    "(name one to update it, or trust the project)"
                )
            )
        for entry in targets:
            results.append(self._update_one(entry))
        return results

    def _update_one(self, entry: PackageEntry) -> UpdateResult:
        source = entry.source
        label = f"{source.raw} ({scope_label(entry.scope)})"
        if source.kind == "local":
            return UpdateResult(f"Skipped {label}: a local folder, used in place")
        if source.pinned and entry.installed:
            return UpdateResult(f"Skipped {label}: pinned to {source.ref or source.requirement}")
        try:
            self._require_online(source, "update")
            if source.kind == "pypi" or not entry.installed:
                notes = self._fetch(source, entry.install_dir)
                verb = "Updated" if entry.installed else "Installed"
                return UpdateResult("\n".join([f"{verb} {label}", *notes]))
            assert source.url is not None
            before, after = git_ops.sync(entry.install_dir, source.url, None)
            notes = self._dependencies(source, entry.install_dir)
            if before == after:
                return UpdateResult("\n".join([f"{label} is up to date", *notes]))
            return UpdateResult("\n".join([f"Updated {label}: {before[:7]} → {after[:7]}", *notes]))
        except PackageError as exc:
            return UpdateResult(f"Could not update {label}: {exc}", ok=False)
