"""The project's file list for command snapshots: `pi_tui.tools.walk`'s rules, with directory listings
kept between snapshots.

The files are those the tools' walk yields (hidden files in, ``.git`` out, ``.gitignore``/``.ignore``
obeyed through `pi_tui.util.ignore.IgnoreStack`, ignored directories never entered, symlinks not
followed). A directory whose modification time has not changed since the last listing has the same
entries, so its cached listing is reused and only the directory itself is stat'ed. An ignore file that
changed in place does not touch its directory's time: the caller then asks for a full listing
(`DirectoryCache.clear`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from pi_tui.util.ignore import IgnoreStack

__all__ = ["DirectoryCache", "list_files"]

_ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(slots=True)
class _Listing:
    mtime_ns: int
    files: list[tuple[str, str]]  # (rel, path)
    dirs: list[tuple[str, str]]
    ignores: IgnoreStack


class DirectoryCache:
    """Listings by directory (relative path), valid while the directory's mtime is unchanged."""

    def __init__(self) -> None:
        self.listings: dict[str, _Listing] = {}

    def clear(self) -> None:
        self.listings.clear()


def list_files(root: Path, cache: DirectoryCache, deadline: float) -> tuple[list[tuple[str, str]], bool]:
    """Every file under ``root`` as ``(rel, absolute path)``, and whether the listing is complete
    (False when ``deadline``, a `time.monotonic` value, passed first)."""
    root_path = os.path.abspath(root)
    fresh: dict[str, _Listing] = {}
    files: list[tuple[str, str]] = []
    # (rel, path, the parent's ignore rules: None for the root)
    stack: list[tuple[str, str, IgnoreStack | None]] = [("", root_path, None)]
    complete = True
    while stack:
        if time.monotonic() > deadline:
            complete = False
            break
        rel, path, parent_ignores = stack.pop()
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        listing = cache.listings.get(rel)
        if listing is None or listing.mtime_ns != mtime:
            if parent_ignores is None:
                ignores = IgnoreStack.for_root(Path(root_path))
            else:
                ignores = parent_ignores.entering(Path(path), rel)
            listing = _list_directory(path, rel, mtime, ignores)
        fresh[rel] = listing
        files.extend(listing.files)
        stack.extend((child_rel, child_path, listing.ignores) for child_rel, child_path in listing.dirs)
    cache.listings = fresh if complete else {**cache.listings, **fresh}
    return files, complete


def _list_directory(path: str, rel: str, mtime: int, ignores: IgnoreStack) -> _Listing:
    files: list[tuple[str, str]] = []
    dirs: list[tuple[str, str]] = []
    try:
        with os.scandir(path) as scan:
            items = list(scan)
    except OSError:
        items = []
    for item in items:
        if item.name in _ALWAYS_SKIPPED:
            continue
        try:
            if item.is_symlink():
                continue  # reported by the walk but never followed or snapshotted
            is_dir = item.is_dir(follow_symlinks=False)
        except OSError:
            continue
        child_rel = f"{rel}/{item.name}" if rel else item.name
        if ignores.is_ignored(child_rel, is_dir):
            continue
        (dirs if is_dir else files).append((child_rel, item.path))
    return _Listing(mtime, files, dirs, ignores)
