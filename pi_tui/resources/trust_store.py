"""pi 0.79+'s saved project-trust decisions: ``<agent dir>/trust.json``, shared with pi.

The file maps canonical directory paths to ``true`` (trust), ``false`` (do not trust) or ``null``;
the decision of the closest directory at or above the project applies. pi writes it sorted by path,
two-space indented, under a lock directory ``trust.json.lock`` (the ``proper-lockfile`` convention);
pi-tui takes the same lock, so a decision made in either agent serves both.

Reading never raises: a file that does not parse, or holds other values, counts as "no decision" and
is never rewritten (the problem is logged), as pi refuses to use such a store.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pi_tui.util import json_safe

__all__ = [
    "TRUST_REQUIRING_PROJECT_PATHS",
    "ProjectTrustStore",
    "TrustChoice",
    "TrustState",
    "TrustStoreError",
    "canonical_dir",
    "has_trust_requiring_resources",
    "trust_choices",
    "trust_requiring_paths",
]

log = logging.getLogger(__name__)

_LOCK_ATTEMPTS = 50
_LOCK_DELAY_S = 0.02
_STALE_LOCK_S = 10.0  # proper-lockfile's default: an older lock belongs to a dead process


class TrustStoreError(OSError):
    """``trust.json`` cannot be read or written; the message names the file and the problem."""


def canonical_dir(path: str | os.PathLike[str]) -> str:
    """The canonical form pi keys decisions by: absolute, ``~`` expanded, symlinks resolved."""
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


# What in a project loads only once it is trusted, as pi 0.87 counts it: these entries of its ``.pi/``
# folder, and ``.agents/skills`` in it or in any folder above it (the user's own ``~/.agents/skills``
# excepted). Context files (AGENTS.md, CLAUDE.md) are plain instructions and need no trust.
TRUST_REQUIRING_PROJECT_PATHS = (
    ".pi/settings.json",
    ".pi/extensions",
    ".pi/skills",
    ".pi/prompts",
    ".pi/themes",
    ".pi/SYSTEM.md",
    ".pi/APPEND_SYSTEM.md",
)


def _agents_skills_dirs(start: Path) -> list[Path]:
    """The ``.agents/skills`` folders at or above ``start`` that exist, nearest first, without the
    user's own ``~/.agents/skills`` (a user resource, never gated, even when ``start`` is home)."""
    user_skills = Path(canonical_dir(Path.home())) / ".agents" / "skills"
    return [
        folder / ".agents" / "skills"
        for folder in (start, *start.parents)
        if folder / ".agents" / "skills" != user_skills and os.path.exists(folder / ".agents" / "skills")
    ]


def trust_requiring_paths(cwd: str | os.PathLike[str], extra: Iterable[str] = ()) -> list[Path]:
    """What in ``cwd`` loads only once the project is trusted and exists: pi's entries
    (`TRUST_REQUIRING_PROJECT_PATHS`), then ``extra`` (paths relative to ``cwd`` that an extension reads
    only once the project is trusted, such as ``.mcp.json``), then each ``.agents/skills`` folder in
    ``cwd`` or above it (not ``~/.agents/skills``)."""
    start = Path(canonical_dir(cwd))
    found = [start / rel for rel in (*TRUST_REQUIRING_PROJECT_PATHS, *extra) if os.path.exists(start / rel)]
    return found + _agents_skills_dirs(start)


def has_trust_requiring_resources(cwd: str | os.PathLike[str], extra: Iterable[str] = ()) -> bool:
    """Whether ``cwd`` has anything that loads only once it is trusted (see `trust_requiring_paths`):
    without it, pi 0.87 reports the project as trusted and never asks about it."""
    return bool(trust_requiring_paths(cwd, extra))


class TrustState(enum.Enum):
    """Where a project stands, kept apart so that what is reported never widens what is loaded.

    ``TRUSTED``: a decision trusts it (``trust.json``, ``trustedProjects``, ``defaultProjectTrust``,
    ``--approve``, "Trust (this session only)"); its files load. ``NOTHING_TO_TRUST``: no decision
    trusts it, but nothing in it loads only once trusted, so it is reported as trusted, as pi does; a
    file that appears later still stays unloaded. ``UNTRUSTED``: it has such files (or ``--no-approve``
    was given) and no decision trusts it.
    """

    TRUSTED = "trusted"
    NOTHING_TO_TRUST = "nothing to trust"
    UNTRUSTED = "untrusted"

    @property
    def reported_trusted(self) -> bool:
        """What ``/trust`` and ``ctx.is_project_trusted()`` say: trusted unless `UNTRUSTED`."""
        return self is not TrustState.UNTRUSTED


class ProjectTrustStore:
    """Decisions in ``<agent_dir>/trust.json``.

    Args:
        agent_dir: the agent directory holding ``trust.json``.
    """

    def __init__(self, agent_dir: str | os.PathLike[str]) -> None:
        self.path = Path(agent_dir) / "trust.json"

    def _read(self) -> dict[str, bool | None]:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TrustStoreError(f"Cannot read the trust store {self.path}: {exc}") from exc
        try:
            data = json_safe.loads(text)
        except json.JSONDecodeError as exc:
            raise TrustStoreError(f"Invalid trust store {self.path}: {exc}") from exc
        if not isinstance(data, dict) or any(v not in (True, False, None) for v in data.values()):
            raise TrustStoreError(
                f"Invalid trust store {self.path}: expected an object of true, false or null values"
            )
        return data

    def get(self, cwd: str | os.PathLike[str]) -> bool | None:
        """The decision of the closest directory at or above ``cwd``; None without one (or on error)."""
        entry = self.entry(cwd)
        return entry[1] if entry is not None else None

    def entry(self, cwd: str | os.PathLike[str]) -> tuple[str, bool] | None:
        """The closest saved decision at or above ``cwd`` with the directory it was saved for; None
        without one (or when the file cannot be used, which is logged)."""
        try:
            data = self._read()
        except TrustStoreError as exc:
            log.warning("%s", exc)
            return None
        current = canonical_dir(cwd)
        while True:
            value = data.get(current)
            if value is True or value is False:
                return current, value
            parent = os.path.dirname(current)
            if parent == current:
                return None
            current = parent

    def set(self, cwd: str | os.PathLike[str], decision: bool | None) -> None:
        """Save (or, with None, forget) the decision for ``cwd``."""
        self.set_many([(cwd, decision)])

    def set_many(self, decisions: Iterable[tuple[str | os.PathLike[str], bool | None]]) -> None:
        """Apply several decisions in one locked read-modify-write. Raises `TrustStoreError`."""
        with self._locked():
            data = self._read()
            for path, decision in decisions:
                key = canonical_dir(path)
                if decision is None:
                    data.pop(key, None)
                else:
                    data[key] = decision
            text = json.dumps({k: data[k] for k in sorted(data)}, indent=2) + "\n"
            from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

            try:
                # Atomic, mode kept, a killed write's temporary file removed by the next write.
                replace_file_bytes(self.path, text.encode("utf-8"))
            except OSError as exc:
                raise TrustStoreError(f"Cannot write the trust store {self.path}: {exc}") from exc

    @contextmanager
    def _locked(self) -> Iterator[None]:
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrustStoreError(f"Cannot create {self.path.parent}: {exc}") from exc
        for _ in range(_LOCK_ATTEMPTS):
            try:
                lock.mkdir()
                break
            except FileExistsError:
                try:
                    if time.time() - lock.stat().st_mtime > _STALE_LOCK_S:
                        lock.rmdir()
                        continue
                except OSError:
                    pass
                time.sleep(_LOCK_DELAY_S)  # waiting on another process's lock, not on our own work
        else:
            raise TrustStoreError(f"The trust store {self.path} is locked by another process ({lock})")
        try:
            yield
        finally:
            try:
                lock.rmdir()
            except OSError:
                pass


@dataclass(frozen=True)
class TrustChoice:
    """One answer of the ``/trust`` selector.

    Attributes:
        label: What the list shows.
        trusted: Whether the answer trusts the project.
        updates: The decisions to save (None forgets a directory's decision).
        saved_path: The directory whose saved decision this answer is (to mark the current one).
    """

    label: str
    trusted: bool
    updates: tuple[tuple[str, bool | None], ...]
    saved_path: str


def trust_choices(cwd: str | os.PathLike[str]) -> list[TrustChoice]:
    """pi's ``/trust`` answers for ``cwd``: trust it, trust its parent folder (the project's own
    decision is then forgotten, so the parent's applies), or do not trust it."""
    target = canonical_dir(cwd)
    choices = [TrustChoice("Trust", True, ((target, True),), target)]
    parent = os.path.dirname(target)
    if parent != target:
        choices.append(
            TrustChoice(f"Trust parent folder ({parent})", True, ((parent, True), (target, None)), parent)
        )
    choices.append(TrustChoice("Do not trust", False, ((target, False),), target))
    return choices
