"""The content-addressed blob store: file contents by SHA-256, zlib-compressed, one file per blob.

Blobs live in ``<agent dir>/checkpoints/blobs/ab/cdef…`` (the first two hex digits name a folder, as
git's loose objects do, so no folder grows past a few thousand entries). The same content is stored
once however many sessions, files or tool calls refer to it. A blob is written to a temporary name and
renamed into place, so a crash never leaves a half-written blob under a real name; the temporary file a
killed write leaves (``.tmp-…``) is removed by the garbage collection once it is old (`remove_leftovers`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

__all__ = ["BlobStore", "BlobMissingError", "content_hash"]

_COMPRESS_LEVEL = 3  # most of level 9's ratio on source code at a fraction of its time


def content_hash(data: bytes) -> str:
    """The store's key for ``data``: its SHA-256 in hex."""
    return hashlib.sha256(data).hexdigest()


class BlobMissingError(LookupError):
    """A checkpoint refers to a blob that is no longer in the store (garbage-collected or deleted)."""


class BlobStore:
    """Put and get file contents by hash under ``root`` (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self._prefix = str(self.blobs) + os.sep

    def path_for(self, digest: str) -> Path:
        return self.blobs / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        # a plain string path: a snapshot asks this for every file, and pathlib costs more than the stat
        return os.path.exists(f"{self._prefix}{digest[:2]}{os.sep}{digest[2:]}")

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store ``data`` (a no-op when it is already there) and return its hash."""
        digest = digest or content_hash(data)
        target = self.path_for(digest)
        if target.exists():
            return digest
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(zlib.compress(data, _COMPRESS_LEVEL))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        """The content stored under ``digest``.

        Raises:
            BlobMissingError: the blob is not in the store, or it is damaged.
        """
        try:
            data = zlib.decompress(self.path_for(digest).read_bytes())
        except FileNotFoundError as exc:
            raise BlobMissingError(f"Checkpoint content {digest[:12]} is no longer in {self.blobs}") from exc
        except zlib.error as exc:
            raise BlobMissingError(
                f"Checkpoint content {digest[:12]} in {self.blobs} is damaged: {exc}"
            ) from exc
        if content_hash(data) != digest:
            raise BlobMissingError(
                f"Checkpoint content {digest[:12]} in {self.blobs} does not match its hash"
            )
        return data

    def iter_blobs(self) -> Iterator[tuple[str, Path]]:
        """Every stored blob as ``(hash, path)``."""
        if not self.blobs.is_dir():
            return
        for folder in self.blobs.iterdir():
            if not folder.is_dir() or len(folder.name) != 2:
                continue
            for blob in folder.iterdir():
                if not blob.name.startswith("."):
                    yield folder.name + blob.name, blob

    def remove_leftovers(self, older_than_s: float, now: float | None = None) -> int:
        """Remove the temporary files of writes that were killed before their rename (``.tmp-…`` in a blob
        folder), once untouched for ``older_than_s``; returns how many. Nothing fails."""
        moment = time.time() if now is None else now
        removed = 0
        try:
            folders = [
                f for f in os.scandir(self.blobs) if len(f.name) == 2 and f.is_dir(follow_symlinks=False)
            ]
        except OSError:
            return removed
        for folder in folders:
            try:
                entries = list(os.scandir(folder.path))
            except OSError:
                continue
            for entry in entries:
                if not entry.name.startswith(".tmp-"):
                    continue
                try:
                    seen = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(seen.st_mode) and moment - seen.st_mtime > older_than_s:
                        os.unlink(entry.path)
                        removed += 1
                except OSError:
                    continue
        return removed

    def size_bytes(self) -> int:
        """The store's size on disk (compressed blobs only)."""
        total = 0
        for _, path in self.iter_blobs():
            try:
                total += path.stat().st_size
            except OSError:
                pass
        return total
