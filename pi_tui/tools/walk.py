"""A directory walk that behaves like ripgrep's and fd's: hidden files in, .git out, ignore files obeyed.

The walk is synchronous (call it from a worker thread) and yields entries in path order. Ignored
directories are never entered. Symlinks are reported but not followed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .gitignore import IGNORE_FILE_NAMES, IgnoreFile, is_ignored

__all__ = ["WalkEntry", "walk", "find_git_root"]

_ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """One file or directory under the walk root.

    Attributes:
        rel: POSIX path relative to the root.
        path: Absolute path.
        name: The last path component.
        is_dir: A real directory (a symlink to one is not).
        is_symlink: The entry itself is a symbolic link.
    """

    rel: str
    path: str
    name: str
    is_dir: bool
    is_symlink: bool = False


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that contains ``.git``."""
    current = start
    while True:
        if os.path.lexists(current / ".git"):
            return current
        if current.parent == current:
            return None
        current = current.parent


def _ancestor_ignores(root: Path) -> list[IgnoreFile]:
    """Ignore files above ``root`` up to its repository root (none when not inside a repository)."""
    git_root = find_git_root(root)
    if git_root is None:
        return []
    found: list[IgnoreFile] = []
    exclude = IgnoreFile.load(git_root / ".git" / "info" / "exclude", above=_rel_above(root, git_root))
    if exclude is not None:
        found.append(exclude)
    directory = git_root
    chain: list[Path] = []
    while directory != root:
        chain.append(directory)
        directory = directory / root.relative_to(directory).parts[0]
    for directory in chain:
        for name in IGNORE_FILE_NAMES:
            ignore = IgnoreFile.load(directory / name, above=_rel_above(root, directory))
            if ignore is not None:
                found.append(ignore)
    return found


def _rel_above(root: Path, directory: Path) -> str:
    rel = root.relative_to(directory).as_posix()
    return "" if rel == "." else rel


def walk(
    root: Path,
    *,
    respect_ignore: bool = True,
    should_stop: Callable[[], bool] | None = None,
    skip: Callable[[WalkEntry], bool] | None = None,
) -> Iterator[WalkEntry]:
    """Yield every entry under ``root`` (not ``root`` itself) in path order.

    Args:
        root: An existing directory.
        respect_ignore: Obey .gitignore / .ignore files (and the repository's ``.git/info/exclude``).
        should_stop: Polled between entries; when it returns True the walk ends early.
        skip: Entries for which this returns True are neither yielded nor entered.
    """
    root = Path(os.path.abspath(root))
    ignores: tuple[IgnoreFile, ...] = ()
    if respect_ignore:
        ignores = tuple(_ancestor_ignores(root)) + tuple(_local_ignores(root, ""))
    # Each frame: the listing of one directory and the ignore files in effect inside it.
    stack: list[tuple[Iterator[WalkEntry], tuple[IgnoreFile, ...]]] = [
        (_children(root, "", ignores), ignores)
    ]
    while stack:
        if should_stop is not None and should_stop():
            return
        listing, in_effect = stack[-1]
        entry = next(listing, None)
        if entry is None:
            stack.pop()
            continue
        if skip is not None and skip(entry):
            continue
        yield entry
        if entry.is_dir:
            inner = in_effect + tuple(_local_ignores(Path(entry.path), entry.rel)) if respect_ignore else ()
            stack.append((_children(Path(entry.path), entry.rel, inner), inner))


def _local_ignores(directory: Path, rel: str) -> list[IgnoreFile]:
    found: list[IgnoreFile] = []
    for name in IGNORE_FILE_NAMES:
        ignore = IgnoreFile.load(directory / name, inside=rel)
        if ignore is not None:
            found.append(ignore)
    return found


def _children(directory: Path, rel: str, ignores: tuple[IgnoreFile, ...]) -> Iterator[WalkEntry]:
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for item in entries:
        if item.name in _ALWAYS_SKIPPED:
            continue
        try:
            is_dir = item.is_dir(follow_symlinks=False)
            is_symlink = item.is_symlink()
        except OSError:
            continue
        child_rel = f"{rel}/{item.name}" if rel else item.name
        if ignores and is_ignored(ignores, child_rel, item.name, is_dir):
            continue
        yield WalkEntry(rel=child_rel, path=item.path, name=item.name, is_dir=is_dir, is_symlink=is_symlink)
