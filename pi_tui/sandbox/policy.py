"""What a sandboxed command may do: the mode, the writable roots, the hidden paths, the allowed hosts.

The policy is plain data built from the ``sandbox`` settings and the session's directory; the
platform back ends (`pi_tui.sandbox.bwrap`, `pi_tui.sandbox.seatbelt`) turn it into a launcher.
Every path is resolved (``~`` expanded, made absolute, symlinks followed) because bubblewrap mounts
on real paths only and a symlinked name would otherwise stay unmasked.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "MODES",
    "DEFAULT_MODE",
    "SandboxMode",
    "SandboxConfigError",
    "SandboxSettings",
    "SandboxPolicy",
    "CREDENTIAL_PATHS",
    "PROTECTED_NAMES",
    "build_policy",
    "check_host_pattern",
    "host_allowed",
    "project_root",
]

SandboxMode = Literal["off", "workspace-write", "read-only"]
MODES: tuple[str, ...] = ("off", "workspace-write", "read-only")
DEFAULT_MODE: SandboxMode = "workspace-write"

CREDENTIAL_PATHS: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gcloud",
    "~/.azure",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials.toml",
    "~/.cargo/credentials",
    "~/.vault-token",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.config/op",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.pi/agent/auth.json",
)
"""Never readable inside the sandbox (``sandbox.denyRead`` adds more). The agent directory's
``auth.json`` is added wherever ``PI_CODING_AGENT_DIR`` points."""

PROTECTED_NAMES: tuple[str, ...] = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitconfig",
    ".git/hooks",
    ".git/config",
    ".pi",
)
"""Read-only even inside a writable root: files that run code later, outside the sandbox (shell start-up
files, git hooks and config, pi's own project settings and extensions)."""


class SandboxConfigError(ValueError):
    """A ``sandbox`` setting cannot be honoured; the message is one line naming the setting."""


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The ``sandbox`` settings group as read from the files (see `SettingsManager.sandbox`).

    Attributes:
        mode: ``off``, ``workspace-write`` or ``read-only``; None when not set (the platform default).
        allow_write: ``sandbox.allowWrite``: more writable directories.
        deny_read: ``sandbox.denyRead``: more paths hidden from commands.
        allow_network: ``sandbox.allowNetwork``: hosts (``example.com``, ``*.example.com``) commands may reach.
        invalid_mode: A ``mode`` value that is not one of `MODES` (reported when a command runs).
    """

    mode: str | None = None
    allow_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    allow_network: tuple[str, ...] = ()
    invalid_mode: str | None = None


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """A resolved policy: real paths only.

    Attributes:
        mode: ``workspace-write`` or ``read-only`` (``off`` never builds a policy).
        project: The project root (the session cwd's git root, or the cwd).
        writable: Writable roots besides the private temp dir (empty in ``read-only``).
        protected: Paths inside writable roots that stay read-only.
        hidden: Paths that are not readable at all.
        hosts: Allowed host patterns (empty: no network).
    """

    mode: SandboxMode
    project: Path
    writable: tuple[Path, ...]
    protected: tuple[Path, ...]
    hidden: tuple[Path, ...]
    hosts: tuple[str, ...] = field(default=())

    def is_writable(self, path: Path, temp_dir: Path | None = None) -> bool:
        """Whether ``path`` (absolute) lies in a writable root and not under a protected path."""
        roots = [*self.writable, *([temp_dir] if temp_dir is not None else [])]
        if any(_under(path, p) for p in self.protected):
            return False
        return any(_under(path, root) for root in roots)


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def check_host_pattern(pattern: str) -> str:
    """Validate one ``sandbox.allowNetwork`` entry and return it lower-cased.

    Accepted: a host name (``pypi.org``), ``*.`` plus a name with at least two labels (``*.npmjs.org``),
    ``localhost``, an IP address. Rejected (`SandboxConfigError`): schemes, ports, paths, ``*`` alone,
    ``*.com``.
    """
    text = pattern.strip().lower()
    where = f"sandbox.allowNetwork: {pattern!r} is not a host pattern"
    if not text or any(c in text for c in "/:@ ?#") and not _is_ip(text):
        raise SandboxConfigError(
            f"{where} (write a host like pypi.org or *.npmjs.org, no scheme, port or path)"
        )
    if _is_ip(text):
        return text
    name = text[2:] if text.startswith("*.") else text
    labels = name.split(".")
    if "*" in name or not all(_LABEL.match(label) for label in labels):
        raise SandboxConfigError(f"{where} (write a host like pypi.org or *.npmjs.org)")
    if text.startswith("*.") and len(labels) < 2:
        raise SandboxConfigError(f"{where} (a wildcard needs a domain with two labels, like *.example.com)")
    return text


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def host_allowed(host: str, patterns: Sequence[str]) -> bool:
    """Whether ``host`` matches one of ``patterns`` (exact, or ``*.domain`` for any subdomain)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def project_root(cwd: Path) -> Path:
    """The git work tree holding ``cwd`` (a ``.git`` directory or file above it), else ``cwd``."""
    current = cwd
    while True:
        if (current / ".git").exists():
            return current
        if current.parent == current:
            return cwd
        current = current.parent


def git_dirs(project: Path) -> list[Path]:
    """Git directories outside ``project`` that git writes to (a worktree's gitdir and common dir)."""
    marker = project / ".git"
    if not marker.is_file():
        return []
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = (project / text.split(":", 1)[1].strip()).resolve()
    found = [gitdir]
    common_file = gitdir / "commondir"
    if common_file.is_file():
        try:
            common = (gitdir / common_file.read_text(encoding="utf-8").strip()).resolve()
        except OSError:
            common = None
        if common is not None:
            found.append(common)
    return [d for d in found if d.is_dir() and not _under(d, project)]


def nearest_existing(path: Path) -> Path:
    """``path`` if it exists, else its nearest existing parent (what "allow this path" can bind)."""
    target = path
    while not target.exists() and target.parent != target:
        target = target.parent
    return target


def _resolve(raw: str, base: Path, setting: str) -> Path:
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = base / path
    if not path.exists():
        raise SandboxConfigError(f"{setting}: {raw} does not exist (fix or remove it in settings.json)")
    return path.resolve()


def build_policy(
    settings: SandboxSettings,
    cwd: Path,
    *,
    mode: SandboxMode,
    agent_dir: Path,
    extra_writable: Sequence[Path] = (),
    extra_hosts: Sequence[str] = (),
) -> SandboxPolicy:
    """Resolve ``settings`` for a session in ``cwd``.

    Args:
        settings: The ``sandbox`` settings.
        cwd: The session's working directory.
        mode: The effective mode (``--sandbox`` wins over the setting); not ``off``.
        agent_dir: pi's agent directory (its ``auth.json`` is hidden).
        extra_writable: Paths the user allowed for this session after a refusal.
        extra_hosts: Hosts the user allowed for this session after a refusal.

    Raises:
        SandboxConfigError: A listed path does not exist, or a host pattern is malformed.
    """
    home = Path.home()
    project = project_root(cwd.resolve())
    hosts = tuple(dict.fromkeys([*(check_host_pattern(p) for p in settings.allow_network), *extra_hosts]))
    writable: list[Path] = []
    if mode == "workspace-write":
        writable.append(project)
        writable.extend(git_dirs(project))
        writable.extend(_resolve(p, project, "sandbox.allowWrite") for p in settings.allow_write)
        writable.extend(p.resolve() for p in extra_writable)
    hidden: list[Path] = []
    for raw in (*CREDENTIAL_PATHS, str(agent_dir / "auth.json")):
        path = Path(os.path.expanduser(raw))
        if path.exists() or path.is_symlink():
            hidden.append(path.resolve())
    hidden.extend(_resolve(p, project, "sandbox.denyRead") for p in settings.deny_read)
    protected: list[Path] = []
    for root in writable:
        bases = {root, home} if _under(home, root) else {root}
        for base in bases:
            for name in PROTECTED_NAMES:
                candidate = base / name
                if candidate.exists() and not candidate.is_symlink():
                    protected.append(candidate)
        for name in ("hooks", "config"):  # a worktree's common git directory
            candidate = root / name
            if root.name == ".git" or (root / "HEAD").is_file() and (root / "objects").is_dir():
                if candidate.exists() and not candidate.is_symlink():
                    protected.append(candidate)
    if _under(agent_dir.resolve(), project) or any(_under(agent_dir.resolve(), w) for w in writable):
        if agent_dir.exists():
            protected.append(agent_dir.resolve())
    return SandboxPolicy(
        mode=mode,
        project=project,
        writable=tuple(dict.fromkeys(writable)),
        protected=tuple(dict.fromkeys(protected)),
        hidden=tuple(dict.fromkeys(hidden)),
        hosts=hosts,
    )


def read_sandbox_settings(raw: object) -> SandboxSettings:
    """The ``sandbox`` settings value: a mode string, or ``{mode, allowWrite, denyRead, allowNetwork}``."""
    if isinstance(raw, str):
        raw = {"mode": raw}
    if not isinstance(raw, dict):
        return SandboxSettings()
    mode = raw.get("mode")
    invalid = mode if isinstance(mode, str) and mode not in MODES else None

    def strings(key: str) -> tuple[str, ...]:
        value = raw.get(key)
        return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()

    return SandboxSettings(
        mode=mode if isinstance(mode, str) and invalid is None else None,
        allow_write=strings("allowWrite"),
        deny_read=strings("denyRead"),
        allow_network=strings("allowNetwork"),
        invalid_mode=invalid,
    )
