"""A directory walk that behaves like ripgrep's and fd's: hidden files in, .git out, ignore files obeyed.

The walk is synchronous (call it from a worker thread) and yields entries in path order. Ignored
directories are never entered. Symlinks are reported but not followed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_tui.util.ignore import IgnoreStack, find_git_root

__all__ = ["WalkEntry", "walk", "find_git_root", "list_project_files"]

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
    ignores = IgnoreStack.for_root(root) if respect_ignore else None
    # Each frame: the listing of one directory and the ignore files in effect inside it.
    stack: list[tuple[Iterator[WalkEntry], IgnoreStack | None]] = [(_children(root, "", ignores), ignores)]
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
            inner = in_effect.entering(Path(entry.path), entry.rel) if in_effect is not None else None
            stack.append((_children(Path(entry.path), entry.rel, inner), inner))


def _children(directory: Path, rel: str, ignores: IgnoreStack | None) -> Iterator[WalkEntry]:
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
        if ignores is not None and ignores.is_ignored(child_rel, is_dir):
            continue
        yield WalkEntry(rel=child_rel, path=item.path, name=item.name, is_dir=is_dir, is_symlink=is_symlink)


def list_project_files(root: Path, *, limit: int | None = None, directories: bool = False) -> list[str]:
    """Paths under ``root`` for ``@file`` completion: relative, POSIX, in path order.

    The same walk as grep and find (hidden files in, ``.git`` out, .gitignore/.ignore obeyed, ignored
    directories never entered), so completion offers exactly what the tools would search.

    Args:
        root: The directory to list (normally the session's cwd).
        limit: Stop after this many paths (None: all of them).
        directories: Also list directories, with a trailing ``/``.
    """
    found: list[str] = []
    if limit is not None and limit <= 0:
        return found
    for entry in walk(root):
        if entry.is_dir:
            if not directories:
                continue
            found.append(entry.rel + "/")
        else:
            found.append(entry.rel)
        if limit is not None and len(found) >= limit:
            break
    return found
