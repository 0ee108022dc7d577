"""Where settings live: ``<agent>/settings.json`` (global) and ``<cwd>/.pi/settings.json`` (project).

Reads merge the two files (project wins; objects merge one level deep). Writes are field-level:
each change re-reads the file under a lock and merges only the changed key into it, so edits made
meanwhile by the user or another pi-tui process survive. A file that does not parse is never
overwritten; the problem is kept in :attr:`SettingsStore.errors` for the UI to show. Whether the
project file counts at all is project trust, decided here too. What each key means is
:class:`pi_tui.resources.settings.SettingsManager`'s business.
"""

from __future__ import annotations

import copy
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

from pi_tui.resources.paths import CONFIG_DIR_NAME
from pi_tui.resources.paths import agent_dir as default_agent_dir
from pi_tui.resources.settings_io import (
    UnreadableSettings,
    pi_settings_lock,
    read_settings_file,
    write_atomically,
)
from pi_tui.resources.settings_schema import merge_scopes, migrate_settings, string_list
from pi_tui.resources.trust_store import (
    ProjectTrustStore,
    TrustState,
    TrustStoreError,
    has_trust_requiring_resources,
)

__all__ = [
    "ProjectNotTrustedError",
    "ResourceEntry",
    "ResourceKind",
    "SettingsScope",
    "SettingsStore",
]

logger = logging.getLogger(__name__)

SettingsScope = Literal["global", "project"]
ResourceKind = Literal["extensions", "skills", "prompts", "themes"]

TRUSTED_PROJECTS_KEY = "trustedProjects"


class ProjectNotTrustedError(PermissionError):
    """A project-scope settings write was refused because the project is not trusted."""


@dataclass(frozen=True)
class ResourceEntry:
    """One entry of a settings resource list (``skills``, ``prompts``, …).

    Attributes:
        value: The entry as written (a path, glob, or ``!``/``+``/``-`` pattern).
        base_dir: The directory relative entries are resolved against: the directory holding the
            settings file (the agent dir for global settings, ``<cwd>/.pi`` for project ones).
        scope: Which settings file the entry came from.
    """

    value: str
    base_dir: Path
    scope: SettingsScope


def _is_within(target: str, directory: str) -> bool:
    return target == directory or target.startswith(directory.rstrip(os.sep) + os.sep)


def _normalize_project_path(cwd: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(cwd)))


class SettingsStore:
    """Global and project settings as raw JSON data, with project trust and field-level, locked writes.

    Args:
        agent_dir: The agent directory (``settings.json`` lives there). Defaults to
            :func:`pi_tui.resources.paths.agent_dir`.
        cwd: The project directory (``.pi/settings.json`` lives below it). Defaults to the
            process working directory.
        project_trusted: When ``False`` the project file is neither read nor written. Callers
            that gate project configuration on trust pass :meth:`is_project_trusted` here, or call
            :meth:`set_project_trusted` later.
        scopes: Global and project settings to hold instead of reading the files; the manager then
            never touches the disk (see :meth:`in_memory`).
    """

    def __init__(
        self,
        agent_dir: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        project_trusted: bool = True,
        scopes: Mapping[SettingsScope, dict[str, Any]] | None = None,
    ) -> None:
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.cwd = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        self.global_path = self.agent_dir / "settings.json"
        self.project_path = self.cwd / CONFIG_DIR_NAME / "settings.json"
        self.errors: list[str] = []
        self._memory_only = scopes is not None
        self._project_trusted = project_trusted
        self._trust_override: bool | None = None  # --approve / --no-approve, this run only
        self._scopes: dict[SettingsScope, dict[str, Any]] = {"global": {}, "project": {}}
        self._broken: dict[SettingsScope, str | None] = {"global": None, "project": None}
        self._merged: dict[str, Any] = {}
        if scopes is not None:
            for scope in self._scopes:
                self._scopes[scope] = migrate_settings(copy.deepcopy(scopes.get(scope) or {}))
        else:
            self._load_scope("global", keep_on_error=False)
            if project_trusted:
                self._load_scope("project", keep_on_error=False)
        self._remerge()

    @classmethod
    def in_memory(
        cls,
        global_settings: dict[str, Any] | None = None,
        project_settings: dict[str, Any] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
    ) -> Self:
        """A store that never touches the disk (for tests and ``--no-session`` style runs)."""
        return cls(cwd=cwd, scopes={"global": global_settings or {}, "project": project_settings or {}})

    # -- loading ---------------------------------------------------------------------------

    def _path(self, scope: SettingsScope) -> Path:
        return self.global_path if scope == "global" else self.project_path

    def _load_scope(self, scope: SettingsScope, *, keep_on_error: bool) -> None:
        try:
            data = read_settings_file(self._path(scope))
        except UnreadableSettings as exc:
            self._broken[scope] = str(exc)
            self._record(f"Settings not loaded: {exc}. The file is left untouched until it is fixed.")
            if not keep_on_error:
                self._scopes[scope] = {}
            return
        self._broken[scope] = None
        self._scopes[scope] = data
        from .settings_check import settings_problems

        for problem in settings_problems(data):
            self._record(f"Settings {self._path(scope)}: {problem}")

    def _remerge(self) -> None:
        project = self._scopes["project"] if self._project_trusted else {}
        self._merged = merge_scopes(self._scopes["global"], project)

    def _record(self, message: str) -> None:
        logger.warning("%s", message)
        self.errors.append(message)

    def reload(self) -> None:
        """Re-read both files. A file that no longer parses keeps its previously loaded values."""
        if self._memory_only:
            return
        self._load_scope("global", keep_on_error=True)
        if self._project_trusted:
            self._load_scope("project", keep_on_error=True)
        self._remerge()

    def drain_errors(self) -> list[str]:
        """Return the recorded problems and forget them (so the UI shows each once)."""
        drained, self.errors = self.errors, []
        return drained

    # -- raw access ------------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """The merged raw value of a top-level key (a deep copy), or ``default``."""
        if key not in self._merged:
            return default
        return copy.deepcopy(self._merged[key])

    def as_dict(self) -> dict[str, Any]:
        """The merged settings as plain JSON data (a deep copy)."""
        return copy.deepcopy(self._merged)

    def scope_dict(self, scope: SettingsScope) -> dict[str, Any]:
        """The settings of one file as loaded (a deep copy)."""
        return copy.deepcopy(self._scopes[scope])

    # -- writing ---------------------------------------------------------------------------

    def set(self, key: str, value: Any, *, scope: SettingsScope = "global") -> None:
        """Set a top-level key and save it; ``None`` removes the key.

        Raises:
            TypeError: ``value`` cannot be stored as JSON.
            ProjectNotTrustedError: ``scope="project"`` while project settings are not trusted.
        """
        self._check_writable(scope, value)
        data = self._scopes[scope]
        if value is None:
            data.pop(key, None)
        else:
            data[key] = copy.deepcopy(value)
        self._remerge()
        self._persist(scope, [(key, None)])

    def update(self, values: dict[str, Any], *, scope: SettingsScope = "global") -> None:
        """Set several top-level keys and save them in one locked write (``None`` removes a key)."""
        for value in values.values():
            self._check_writable(scope, value)
        data = self._scopes[scope]
        for key, value in values.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = copy.deepcopy(value)
        self._remerge()
        self._persist(scope, [(key, None) for key in values])

    def set_nested(self, key: str, subkey: str, value: Any, *, scope: SettingsScope = "global") -> None:
        """Set one field of an object setting (``compaction.enabled``) and save only that field.

        ``None`` removes the field. Raises like :meth:`set`.
        """
        self._check_writable(scope, value)
        data = self._scopes[scope]
        nested = data.get(key)
        if not isinstance(nested, dict):
            nested = {}
        if value is None:
            nested.pop(subkey, None)
        else:
            nested[subkey] = copy.deepcopy(value)
        data[key] = nested
        self._remerge()
        self._persist(scope, [(key, subkey)])

    def unset(self, key: str, *, scope: SettingsScope = "global") -> None:
        """Remove a top-level key from one settings file."""
        self.set(key, None, scope=scope)

    def _check_writable(self, scope: SettingsScope, value: Any) -> None:
        if scope == "project" and not self._project_trusted:
            raise ProjectNotTrustedError(
                f"Project settings for {self.cwd} are not trusted; refusing to write {self.project_path}"
            )
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"Setting values must be JSON data: {exc}") from exc

    def _persist(self, scope: SettingsScope, fields: list[tuple[str, str | None]]) -> None:
        if self._memory_only:
            return
        path = self._path(scope)
        field = ", ".join(f"{key}.{subkey}" if subkey else key for key, subkey in fields)
        if self._broken[scope] is not None:
            self._record(f"Not saving '{field}': {self._broken[scope]}. Fix the file, then retry.")
            return
        from pi_tui.util.dir_lock import directory_lock  # writers only: off start-up

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with directory_lock(path.parent), pi_settings_lock(path):
                try:
                    current = read_settings_file(path)
                except UnreadableSettings as exc:
                    self._broken[scope] = str(exc)
                    self._record(f"Not saving '{field}': {exc}. The file is left untouched.")
                    return
                for key, subkey in fields:
                    self._merge_field(current, self._scopes[scope], key, subkey)
                write_atomically(path, json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            self._record(f"Could not save '{field}' to {path}: {exc.strerror or exc}")

    @staticmethod
    def _merge_field(current: dict[str, Any], memory: dict[str, Any], key: str, subkey: str | None) -> None:
        """Copy one in-memory field into the on-disk content; other keys stay as found on disk."""
        if subkey is None:
            if key in memory:
                current[key] = copy.deepcopy(memory[key])
            else:
                current.pop(key, None)
            return
        on_disk = current.get(key)
        nested = dict(on_disk) if isinstance(on_disk, dict) else {}
        in_memory = memory.get(key)
        if isinstance(in_memory, dict) and subkey in in_memory:
            nested[subkey] = copy.deepcopy(in_memory[subkey])
        else:
            nested.pop(subkey, None)
        current[key] = nested

    # -- project trust ---------------------------------------------------------------------

    @property
    def project_trusted(self) -> bool:
        """Whether this manager reads and writes the project settings file."""
        return self._project_trusted

    def set_project_trusted(self, trusted: bool) -> None:
        """Start or stop honouring the project settings file (re-reading it when trusted)."""
        if trusted == self._project_trusted:
            return
        self._project_trusted = trusted
        if trusted:
            self._load_scope("project", keep_on_error=False)
        else:
            self._scopes["project"] = {}
            self._broken["project"] = None
        self._remerge()

    @property
    def trusted_projects(self) -> list[str]:
        """Trusted project directories, read from the *global* file only.

        A project cannot vouch for itself: a ``trustedProjects`` key in a project file is ignored.
        """
        return string_list(self._scopes["global"].get(TRUSTED_PROJECTS_KEY))

    def _trust_store(self) -> ProjectTrustStore | None:
        return None if self._memory_only else ProjectTrustStore(self.agent_dir)

    def trust_decision(self, cwd: str | os.PathLike[str] | None = None) -> bool | None:
        """What decides trust of ``cwd`` (default: this manager's), None when nothing does (pi then asks).

        As pi 0.87 decides it, alongside pi-tui's own list: ``--approve``/``--no-approve`` for this run;
        else the closest saved decision in pi's ``<agent dir>/trust.json`` (true or false); else a
        ``trustedProjects`` entry at or above ``cwd`` trusts it; else the global ``defaultProjectTrust``
        (``"always"`` trusts, ``"never"`` does not, without asking).
        """
        target = _normalize_project_path(cwd if cwd is not None else self.cwd)
        if self._trust_override is not None and _is_within(target, _normalize_project_path(self.cwd)):
            return self._trust_override
        store = self._trust_store()
        saved = store.get(target) if store is not None else None
        if saved is not None:
            return saved
        for entry in self.trusted_projects:
            if _is_within(target, _normalize_project_path(entry)):
                return True
        default = self._scopes["global"].get("defaultProjectTrust")
        return {"always": True, "never": False}.get(default) if isinstance(default, str) else None

    def is_project_trusted(self, cwd: str | os.PathLike[str] | None = None) -> bool:
        """Whether a decision trusts ``cwd`` (default: this manager's), or a directory above it (see
        `trust_decision`); what loading the project's files follows."""
        return self.trust_decision(cwd) is True

    def trust_state(
        self, cwd: str | os.PathLike[str] | None = None, *, extra: Iterable[str] = ()
    ) -> TrustState:
        """Where ``cwd`` (default: this manager's) stands: trusted by a decision (what loading follows,
        as `is_project_trusted`), or else with nothing to trust (pi reports it trusted; nothing more
        loads), or untrusted. ``--no-approve`` leaves nothing "with nothing to trust". ``extra``: paths
        relative to ``cwd`` that loaded extensions read only once trusted (they count as needing trust).
        """
        target = _normalize_project_path(cwd if cwd is not None else self.cwd)
        if self.is_project_trusted(target):
            return TrustState.TRUSTED
        overridden = self._trust_override is not None and _is_within(target, _normalize_project_path(self.cwd))
        if overridden or has_trust_requiring_resources(target, extra):
            return TrustState.UNTRUSTED
        return TrustState.NOTHING_TO_TRUST

    def override_project_trust(self, decision: bool | None) -> None:
        """Decide trust of this manager's project for this run only, saving nothing (pi's
        ``--approve`` / ``--no-approve``); it beats every saved decision. None lifts the override.
        """
        self._trust_override = decision
        if decision is not None:
            self.set_project_trusted(decision)

    def _save_trust(self, target: str, decision: bool) -> None:
        store = self._trust_store()
        if store is None:
            return
        try:
            store.set(target, decision)
        except TrustStoreError as exc:  # pi-tui's own list still holds the decision
            self._record(str(exc))

    def trust_project(self, cwd: str | os.PathLike[str] | None = None) -> None:
        """Record ``cwd`` (default: this manager's) as trusted in the global settings."""
        target = _normalize_project_path(cwd if cwd is not None else self.cwd)
        entries = self.trusted_projects
        if target not in entries:
            self.set(TRUSTED_PROJECTS_KEY, [*entries, target])
        self._save_trust(target, True)  # pi reads the same decision from trust.json
        if _normalize_project_path(self.cwd) == target:
            self.set_project_trusted(True)

    def untrust_project(self, cwd: str | os.PathLike[str] | None = None) -> None:
        """Remove ``cwd`` (default: this manager's) from the trusted directories."""
        target = _normalize_project_path(cwd if cwd is not None else self.cwd)
        entries = self.trusted_projects
        if target in entries:
            remaining = [entry for entry in entries if entry != target]
            self.set(TRUSTED_PROJECTS_KEY, remaining or None)
        self._save_trust(target, False)  # pi's "Do not trust"

    # -- resource lists --------------------------------------------------------------------

    def resource_entries(self, kind: ResourceKind) -> list[ResourceEntry]:
        """Entries of ``extensions``/``skills``/``prompts``/``themes`` from both files.

        Unlike other settings these lists are additive: project entries (when trusted) come first,
        then global ones, each with the directory its relative paths are resolved against.
        """
        entries: list[ResourceEntry] = []
        if self._project_trusted:
            for value in string_list(self._scopes["project"].get(kind)):
                entries.append(ResourceEntry(value, self.project_path.parent, "project"))
        for value in string_list(self._scopes["global"].get(kind)):
            entries.append(ResourceEntry(value, self.agent_dir, "global"))
        return entries
