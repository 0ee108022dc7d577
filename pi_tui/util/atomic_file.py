"""Replacing a file's content so that a crash, a kill or a full disk never leaves half of it.

The new bytes go to a temporary file in the same directory, which is flushed to disk and renamed over
the old name: anyone looking at the name sees either the whole old content or the whole new content.
What a user expects of "overwrite this file" is kept as well:

- a symbolic link is followed, and the file it points to is replaced (the link stays a link, as with
  pi's in-place write); a chain of links and a link to a file that does not exist yet work the same way;
- the permission bits (including the executable bit), the group and the extended attributes (user
  attributes, POSIX ACLs, security labels) carry over to the new file; a new file gets the usual mode
  (``0o666`` less the umask);
- where a rename would change what the user sees, the bytes are written in place instead: a file with
  more than one hard link (a rename would split the links), a file owned by someone else (the new file
  would belong to us), anything that is not a regular file (a device, a pipe), a file mounted over
  another (a bind mount, which cannot be renamed over), a directory in which we may not create
  files while the file itself is writable, and a file whose extended attributes cannot all be copied.
  Should such a write fail part way (a full disk), the old content is written back over it.

The temporary file is named ``.<name>.<8 hex digits>.tmp`` and held under an exclusive ``flock`` while it
exists. A process killed between creating and renaming it (``SIGKILL``, a power cut) leaves it behind:
the next write to the same file removes such leftovers, but only those of exactly that name pattern,
regular files of ours with one link, untouched for a minute, and not locked by a live writer.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path

from pi_tui.util.fd_write import write_all

try:  # POSIX only; elsewhere temporary files are not locked and leftovers are never removed
    import fcntl
except ImportError:  # pragma: no cover - exercised only on Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "STALE_TEMP_SECONDS",
    "FileChangedError",
    "lock_temp",
    "new_temp_path",
    "remove_stale_temps",
    "replace_file_bytes",
    "write_target",
]

# Creating the temporary file fails with these when the directory is not ours to write in; the
# file itself may still be writable, so the write falls back to going in place.
_NO_TEMP_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
# Renaming over the name fails with these when it is a mount point (a file bind-mounted into a
# container) or another filesystem: the content can still be written in place.
_NO_RENAME_ERRNOS = frozenset({errno.EBUSY, errno.EXDEV})
# Listing attributes fails with these where the filesystem has none: there is nothing to carry over.
_NO_XATTR_ERRNOS = frozenset({errno.ENOTSUP, errno.ENOSYS, errno.EOPNOTSUPP})
# A leftover temporary file younger than this is left alone, even when no lock is held on it: a writer
# that does not lock (an older version) may still be about to rename it.
STALE_TEMP_SECONDS = 60.0
_HEX = frozenset("0123456789abcdef")


class FileChangedError(OSError):
    """The file no longer has the content the caller computed its new content from: another program changed
    it meanwhile. Nothing was written."""


def write_target(path: Path) -> Path:
    """The file a write to ``path`` changes: ``path`` itself, or where its symbolic link(s) lead."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


def replace_file_bytes(
    path: Path,
    data: bytes,
    *,
    durable: bool = True,
    new_file_mode: int = 0o666,
    expected: bytes | None = None,
) -> None:
    """Make ``data`` the content of ``path`` (following symbolic links) without ever tearing it.

    Args:
        path: The file to write; its directory must exist.
        data: The complete new content.
        durable: Flush the new content to disk before it takes the old one's place, so a power loss
            leaves the old or the new content and not an empty file.
        new_file_mode: The mode of a file that does not exist yet, less the umask (``0o600`` for a
            file of secrets). An existing file keeps its own mode.
        expected: The content the file must still have for the write to happen (what ``data`` was
            computed from), compared just before the new content takes its place.

    Raises:
        FileChangedError: The file's content is not ``expected`` any more; nothing was written.
        OSError: The write failed (disk full, file too large, no permission). The file still has its
            old content (see the module docstring for a write in place).
    """
    target = write_target(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is None and expected is not None:
        raise FileChangedError(errno.ENOENT, "It was removed meanwhile", str(path))
    if old is not None and not _renamable(old):
        _write_in_place(target, data, expected)
        return
    remove_stale_temps(target)
    temp = new_temp_path(target)
    try:
        # Until it gets the old file's mode, the temporary file is readable by its owner only.
        mode = new_file_mode if old is None else 0o600
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except OSError as exc:
        if old is not None and exc.errno in _NO_TEMP_ERRNOS:
            _write_in_place(target, data, expected)
            return
        # the user asked for ``path``: the hidden temporary name beside it means nothing to them
        exc.filename = str(path)
        raise
    lock_temp(fd)
    try:
        try:
            if old is not None and not _carry_over(fd, old, target):
                os.close(fd)
                fd = -1
                os.unlink(temp)
                _write_in_place(target, data, expected)
                return
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            if fd >= 0:
                os.close(fd)
        if expected is not None:
            _check_unchanged(target, expected)
        try:
            os.replace(temp, target)
        except OSError as exc:
            if exc.errno not in _NO_RENAME_ERRNOS:
                raise
            os.unlink(temp)
            _write_in_place(target, data, expected)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _carry_over(fd: int, old: os.stat_result, target: Path) -> bool:
    """Give the temporary file the old one's group, extended attributes and mode.

    Returns False when one of them cannot be kept, so that the caller writes in place instead.
    """
    if os.fstat(fd).st_gid != old.st_gid:
        try:
            os.fchown(fd, -1, old.st_gid)
        except OSError:
            return False
    if not _copy_xattrs(target, fd):
        return False
    # Last: changing the group clears the set-group-ID bit on some systems, and an ACL sets the
    # group bits from its mask; the old file's mode is what the user had.
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    return True


def _copy_xattrs(source: Path, fd: int) -> bool:
    """Copy every extended attribute of ``source`` to ``fd``; False when one cannot be copied."""
    try:
        names = os.listxattr(source)
    except OSError as exc:
        return exc.errno in _NO_XATTR_ERRNOS
    for name in names:
        try:
            value = os.getxattr(source, name)
            with contextlib.suppress(OSError):
                if os.getxattr(fd, name) == value:
                    continue  # already set (a security label given to every new file alike)
            os.setxattr(fd, name, value)
        except OSError:
            return False
    return True


def new_temp_path(target: Path) -> Path:
    """A fresh name for a temporary file beside ``target``, of the pattern `remove_stale_temps` knows:
    ``.<name>.<8 hex digits>.tmp``."""
    return target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")


def lock_temp(fd: int) -> None:
    """Mark a temporary file as in use (an exclusive ``flock``, released when ``fd`` is closed), so that
    `remove_stale_temps` leaves it alone. Where locks are not supported nothing happens."""
    if fcntl is None:
        return
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_stale_temps(target: Path, *, now: float | None = None) -> list[Path]:
    """Remove the temporary files that killed writes of ``target`` left behind. Returns what was removed.

    Only names of exactly the pattern `new_temp_path` makes for ``target`` are considered, and of
    those only regular files owned by this user, with one link, unchanged for `STALE_TEMP_SECONDS`, on
    which no live process holds the lock. Nothing fails: what cannot be checked is left alone.
    """
    prefix = f".{target.name}."
    removed: list[Path] = []
    moment = time.time() if now is None else now
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp") and len(name) == len(prefix) + 12):
            continue
        if not set(name[len(prefix) : -4]) <= _HEX:
            continue
        with contextlib.suppress(OSError):
            if _remove_if_stale(Path(entry.path), moment):
                removed.append(Path(entry.path))
    return removed


def _remove_if_stale(path: Path, now: float) -> bool:
    seen = os.lstat(path)
    if not (stat.S_ISREG(seen.st_mode) and seen.st_nlink == 1 and seen.st_uid == os.geteuid()):
        return False
    if now - seen.st_mtime < STALE_TEMP_SECONDS or fcntl is None:
        return False
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it, or the filesystem cannot tell: leave it
        # Still the same file under that name (not renamed into place meanwhile): remove it.
        now_there = os.lstat(path)
        if (now_there.st_dev, now_there.st_ino) != (seen.st_dev, seen.st_ino) or now_there.st_nlink != 1:
            return False
        os.unlink(path)
        return True
    finally:
        os.close(fd)


def _renamable(old: os.stat_result) -> bool:
    return stat.S_ISREG(old.st_mode) and old.st_nlink <= 1 and old.st_uid == os.geteuid()


def _check_unchanged(target: Path, expected: bytes) -> None:
    try:
        fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileChangedError(errno.ENOENT, "It was removed meanwhile", str(target)) from None
    try:
        now = _read_all(fd)
    finally:
        os.close(fd)
    if now != expected:
        raise FileChangedError(errno.ESTALE, "Another program changed it meanwhile", str(target))


def _write_in_place(target: Path, data: bytes, expected: bytes | None = None) -> None:
    """Overwrite ``target``'s content where it is; should the write fail part way (a full disk), a regular
    file we may read gets its old content back, so a failed write leaves the file as it was here too."""
    try:
        fd, readable = os.open(target, os.O_RDWR | os.O_CLOEXEC), True
    except PermissionError:  # writable but not readable: written without a way back
        fd, readable = os.open(target, os.O_WRONLY | os.O_CLOEXEC), False
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        old = _read_all(fd) if regular and readable else None
        if expected is not None and old is not None and old != expected:
            raise FileChangedError(errno.ESTALE, "Another program changed it meanwhile", str(target))
        try:
            write_all(fd, data)
            if regular:
                os.ftruncate(fd, len(data))
        except OSError:
            if old is not None:
                _put_back(fd, old)
            raise
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _put_back(fd: int, old: bytes) -> None:
    """Write ``old`` over the start of the file again and cut it to that length (the space it needs was the
    file's before, so a full disk does not refuse it); nothing more can be done when it fails too."""
    with contextlib.suppress(OSError):
        view = memoryview(old)
        offset = 0
        while view:
            written = os.pwrite(fd, view, offset)
            view, offset = view[written:], offset + written
        os.ftruncate(fd, len(old))
