"""Package sources: parsing, identity, where each kind is installed and how it is written to settings.

Three kinds, as pi has (with PyPI in place of npm, since pi-tui's extensions are Python):

- **PyPI**: ``pypi:name``, ``pypi:name==1.2`` (``pip:`` works too; ``pypi:name@1.2`` means ``==1.2``).
  Only an exact ``==`` version pins the package.
- **git**: ``git:host/path[@ref]``, ``git:user@host:path[@ref]``, ``https://…[@ref]``, ``ssh://…[@ref]``,
  ``http://``, ``git://`` and ``file://`` URLs, and ``git:/a/local/repository[@ref]``. The shorthand
  ``host/path`` and the ``user@host:path`` form are git only with the ``git:`` prefix (without it they are
  local paths, as in pi). The ref follows the first ``@`` after the host; a ref pins the package.
- **local**: anything else, a folder used in place; relative paths are taken against the working
  directory on the command line and against the settings file's folder in settings.

Identity (what makes two sources "the same package"): the normalised PyPI name, the git host and path
without the ref (so ``git:github.com/u/r`` and ``https://github.com/u/r.git@v1`` are one package), or the
resolved folder of a local path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from pi_tui.resources.paths import expand_home, resolve_path

from .errors import PackageSourceError

__all__ = [
    "LOCAL_HOST",
    "PackageSource",
    "SourceKind",
    "install_location",
    "normalize_pypi_name",
    "parse_source",
    "settings_value",
]

SourceKind = Literal["pypi", "git", "local"]

LOCAL_HOST = "local"
"""The host name git repositories on this machine are filed under (``<agent dir>/git/local/…``)."""

_PYPI_PREFIXES = ("pypi:", "pip:")
_URL_SCHEMES = ("https", "http", "ssh", "git", "file")
_SCP = re.compile(r"^(?P<user>[\w.+-]+)@(?P<host>[^:/\s@]+):(?P<path>.+)$")
_PYPI = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?P<extras>\[[^\]]*\])?\s*(?P<spec>.*)$"
)
_PYPI_AT_VERSION = re.compile(r"^(?P<name>[A-Za-z0-9._\-\[\],]+)@(?P<version>[A-Za-z0-9.+!_-]+)$")
_VERSION_SPEC = re.compile(
    r"^(===?|~=|!=|<=?|>=?)\s*[A-Za-z0-9*.+!_-]+(\s*,\s*(===?|~=|!=|<=?|>=?)\s*[^,\s]+)*$"
)


@dataclass(frozen=True, slots=True)
class PackageSource:
    """A parsed package source.

    Attributes:
        raw: The source as given (stripped).
        kind: ``"pypi"``, ``"git"`` or ``"local"``.
        identity: What deduplicates packages across scopes (``pypi:name``, ``git:host/path``,
            ``local:/real/path``).
        pinned: An exact version or a git ref was given: ``update`` leaves the package alone.
        name: PyPI: the normalised distribution name.
        requirement: PyPI: the requirement handed to pip (``name==1.2``).
        url: git: the clone URL without the ref.
        host: git: the host (``local`` for repositories on this machine).
        repo_path: git: the repository path below the host, without ``.git``.
        ref: git: the branch, tag or commit asked for.
        path: local: the folder (absolute, normalised, symlinks kept).
    """

    raw: str
    kind: SourceKind
    identity: str
    pinned: bool = False
    name: str | None = None
    requirement: str | None = None
    url: str | None = None
    host: str | None = None
    repo_path: str | None = None
    ref: str | None = None
    path: Path | None = None

    @property
    def needs_network(self) -> bool:
        """Whether installing or updating it goes over the network (refused when offline)."""
        if self.kind == "pypi":
            return True
        return self.kind == "git" and self.host != LOCAL_HOST

    def __str__(self) -> str:
        return self.raw


def normalize_pypi_name(name: str) -> str:
    """The PEP 503 form of a distribution name (``My_Package`` → ``my-package``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_source(raw: str, base_dir: Path) -> PackageSource:
    """Parse a package source.

    Args:
        raw: The source as typed or as found in settings.
        base_dir: What relative local paths are taken against: the working directory for a command
            line, the settings file's folder for a settings entry.

    Raises:
        PackageSourceError: The text is empty or malformed (the message says what is expected).
    """
    text = raw.strip()
    if not text:
        raise PackageSourceError("Empty package source: expected pypi:<name>, a git URL or a local path")
    lower = text.lower()
    for prefix in _PYPI_PREFIXES:
        if lower.startswith(prefix):
            return _parse_pypi(text, text[len(prefix) :].strip())
    if lower.startswith("npm:"):
        raise PackageSourceError(
            f'"{text}": npm packages are not supported (pi-tui extensions are Python); '
            "use pypi:<name>, a git URL or a local path"
        )
    if lower.startswith("git:"):
        return _parse_git(text, text[4:].strip(), base_dir, prefixed=True)
    scheme = lower.partition("://")[0]
    if "://" in lower and scheme in _URL_SCHEMES:
        return _parse_git(text, text, base_dir, prefixed=False)
    return _parse_local(text, base_dir)


def _parse_pypi(raw: str, body: str) -> PackageSource:
    at_version = _PYPI_AT_VERSION.match(body)
    if at_version:
        body = f"{at_version['name']}=={at_version['version']}"
    match = _PYPI.match(body)
    if not body or match is None:
        raise PackageSourceError(
            f'Invalid PyPI source "{raw}": expected pypi:<name> or pypi:<name>==<version>'
        )
    spec = re.sub(r"\s+", "", match["spec"])
    if spec and not _VERSION_SPEC.match(spec):
        raise PackageSourceError(
            f'Invalid version in "{raw}": use a specifier such as ==1.2 or >=1.0 after the name'
        )
    name = normalize_pypi_name(match["name"])
    pinned = spec.startswith("==") and "," not in spec and "*" not in spec
    return PackageSource(
        raw=raw,
        kind="pypi",
        identity=f"pypi:{name}",
        pinned=pinned,
        name=name,
        requirement=f"{match['name']}{match['extras'] or ''}{spec}",
    )


def _clean_repo_path(raw: str, path: str) -> str:
    parts = [part for part in path.strip("/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise PackageSourceError(
            f'Invalid git source "{raw}": the repository path is missing or contains ".."'
        )
    parts[-1] = parts[-1].removesuffix(".git")
    if not parts[-1]:
        raise PackageSourceError(f'Invalid git source "{raw}": the repository name is empty')
    return "/".join(parts)


def _split_ref(raw: str, location: str) -> tuple[str, str | None]:
    base, at, ref = location.partition("@")
    if at and not ref.strip():
        raise PackageSourceError(
            f'Invalid git source "{raw}": nothing follows "@" (expected a branch, tag or commit)'
        )
    return base, (ref.strip() if at else None)


def _git(raw: str, url: str, host: str, repo_path: str, ref: str | None) -> PackageSource:
    return PackageSource(
        raw=raw,
        kind="git",
        identity=f"git:{host}/{repo_path}",
        pinned=ref is not None,
        url=url,
        host=host,
        repo_path=repo_path,
        ref=ref,
    )


def _local_repository(raw: str, location: str, ref: str | None, base_dir: Path) -> PackageSource:
    real = Path(os.path.realpath(resolve_path(location, base_dir)))
    return _git(raw, str(real), LOCAL_HOST, _clean_repo_path(raw, str(real)), ref)


def _parse_git(raw: str, body: str, base_dir: Path, *, prefixed: bool) -> PackageSource:
    if not body:
        raise PackageSourceError(f'Invalid git source "{raw}": expected git:host/path, a URL or a path')
    if prefixed and (body.startswith(("/", "~", "./", "../")) or body in (".", "..")):
        location, ref = _split_ref(raw, body)
        return _local_repository(raw, location, ref, base_dir)
    if "://" in body:
        parts = urlsplit(body)
        scheme = parts.scheme.lower()
        if scheme not in _URL_SCHEMES:
            raise PackageSourceError(
                f'Unsupported git URL scheme in "{raw}": use https, ssh, git, http or file'
            )
        if parts.query or parts.fragment:
            raise PackageSourceError(f'Invalid git URL "{raw}": put a ref after "@", not in "?" or "#"')
        location, ref = _split_ref(raw, parts.path)
        if scheme == "file":
            return _local_repository(raw, unquote(location), ref, base_dir)
        host = (parts.hostname or "").lower()
        if not host:
            raise PackageSourceError(f'Invalid git URL "{raw}": no host')
        url = urlunsplit((scheme, parts.netloc, location, "", ""))
        return _git(raw, url, host, _clean_repo_path(raw, location), ref)
    scp = _SCP.match(body)
    if scp:
        location, ref = _split_ref(raw, scp["path"])
        host = scp["host"].lower()
        return _git(
            raw, f"{scp['user']}@{scp['host']}:{location}", host, _clean_repo_path(raw, location), ref
        )
    host, slash, rest = body.partition("/")
    if not slash or not rest or not ("." in host or host == "localhost"):
        raise PackageSourceError(
            f'Invalid git source "{raw}": expected git:host/path, git:user@host:path, a URL or a path'
        )
    location, ref = _split_ref(raw, rest)
    repo_path = _clean_repo_path(raw, location)
    return _git(raw, f"https://{host}/{location.strip('/')}", host.lower(), repo_path, ref)


def _parse_local(raw: str, base_dir: Path) -> PackageSource:
    path = resolve_path(raw, base_dir)
    return PackageSource(raw=raw, kind="local", identity=f"local:{os.path.realpath(path)}", path=path)


def install_location(source: PackageSource, scope_root: Path) -> Path:
    """Where ``source`` lives for a scope whose folder is ``scope_root`` (the agent dir or ``.pi``).

    git: ``<scope_root>/git/<host>/<path>``; PyPI: ``<scope_root>/pypi/<name>``; local: the folder itself.
    """
    if source.kind == "git":
        assert source.host is not None and source.repo_path is not None
        return scope_root / "git" / source.host / source.repo_path
    if source.kind == "pypi":
        assert source.name is not None
        return scope_root / "pypi" / source.name
    assert source.path is not None
    return source.path


def settings_value(source: PackageSource, settings_dir: Path) -> str:
    """How ``source`` is written to a settings file in ``settings_dir``.

    A relative local path is rewritten relative to the settings file's folder (as pi does), so the entry
    still points at the same folder when read back; ``~`` and absolute paths stay as typed. A local git
    repository is stored with its absolute path. Other sources are stored as typed.
    """
    if source.kind == "local":
        assert source.path is not None
        typed = source.raw.strip()
        if typed.startswith("~") or Path(expand_home(typed)).is_absolute():
            return typed if typed.startswith("~") else str(source.path)
        relative = os.path.relpath(source.path, settings_dir)
        return relative if relative.startswith("..") else ("." if relative == "." else f"./{relative}")
    if source.kind == "git" and source.host == LOCAL_HOST and not source.raw.lower().startswith("file://"):
        return f"git:{source.url}" + (f"@{source.ref}" if source.ref else "")
    return source.raw.strip()
