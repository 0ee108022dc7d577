"""Replacing a file's content so that a crash, a kill or a full disk never leaves half of it.

The new bytes go to a temporary file in the same directory, which is flushed to disk and renamed over
the old name: anyone looking at the name sees either the whole old content or the whole new content.
What a user expects of "overwrite this file" is kept as well:

- a symbolic link is followed, and the file it points to is replaced (the link stays a link, as with
  pi's in-place write); a chain of links and a link to a file that does not exist yet work the same way;
- the permission bits (including the executable bit) and the group carry over to the new file; a new
  file gets the usual mode (``0o666`` less the umask);
- where a rename would change what the user sees, the bytes are written in place instead: a file with
  more than one hard link (a rename would split the links), a file owned by someone else (the new file
  would belong to us), anything that is not a regular file (a device, a pipe), a file mounted over
  another (a bind mount, which cannot be renamed over), and a directory in which we may not create
  files while the file itself is writable.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from pi_tui.util.fd_write import write_all

__all__ = ["replace_file_bytes", "write_target"]

# Creating the temporary file fails with these when the directory is not ours to write in; the
# file itself may still be writable, so the write falls back to going in place.
_NO_TEMP_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
# Renaming over the name fails with these when it is a mount point (a file bind-mounted into a
# container) or another filesystem: the content can still be written in place.
_NO_RENAME_ERRNOS = frozenset({errno.EBUSY, errno.EXDEV})


def write_target(path: Path) -> Path:
    """The file a write to ``path`` changes: ``path`` itself, or where its symbolic link(s) lead."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


def replace_file_bytes(path: Path, data: bytes, *, durable: bool = True, new_file_mode: int = 0o666) -> None:
    """Make ``data`` the content of ``path`` (following symbolic links) without ever tearing it.

    Args:
        path: The file to write; its directory must exist.
        data: The complete new content.
        durable: Flush the new content to disk before it takes the old one's place, so a power loss
            leaves the old or the new content and not an empty file.
        new_file_mode: The mode of a file that does not exist yet, less the umask (``0o600`` for a
            file of secrets). An existing file keeps its own mode.

    Raises:
        OSError: The write failed (disk full, file too large, no permission). The file still has its
            old content, or, when it is written in place (see the module docstring), the error says
            what the system refused.
    """
    target = write_target(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not _renamable(old):
        _write_in_place(target, data)
        return
    temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
    try:
        # Until it gets the old file's mode, the temporary file is readable by its owner only.
        mode = new_file_mode if old is None else 0o600
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except OSError as exc:
        if old is not None and exc.errno in _NO_TEMP_ERRNOS:
            _write_in_place(target, data)
            return
        raise
    try:
        try:
            if old is not None and not _carry_over(fd, old):
                os.close(fd)
                fd = -1
                os.unlink(temp)
                _write_in_place(target, data)
                return
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            if fd >= 0:
                os.close(fd)
        try:
            os.replace(temp, target)
        except OSError as exc:
            if exc.errno not in _NO_RENAME_ERRNOS:
                raise
            os.unlink(temp)
            _write_in_place(target, data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _carry_over(fd: int, old: os.stat_result) -> bool:
    """Give the temporary file the old one's mode and group; False when the group cannot be kept."""
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if os.fstat(fd).st_gid == old.st_gid:
        return True
    try:
        os.fchown(fd, -1, old.st_gid)
    except OSError:
        return False
    # Changing the group clears the set-group-ID bit on some systems: set the mode again.
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    return True


def _renamable(old: os.stat_result) -> bool:
    return stat.S_ISREG(old.st_mode) and old.st_nlink <= 1 and old.st_uid == os.geteuid()


def _write_in_place(target: Path, data: bytes) -> None:
    # Not truncated up front: should the write fail part way, what follows it is still the old content.
    fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
    try:
        write_all(fd, data)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
