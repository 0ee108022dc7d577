"""Writing a session file: append-only whole lines, durable at sensible points, never a silent loss.

- Every entry is one ``write`` of its JSON plus newline on an ``O_APPEND`` descriptor, so it reaches the
  OS at once; a crash of pi-tui loses nothing written, a crash of the machine at most what was not yet
  fsync'ed. Messages, compactions, summaries and context transforms are fsync'ed as they are written,
  by a background thread (group commit: one fsync covers every line written before it starts), so no
  step of the agent waits for the disk; small bookkeeping entries (labels, names, model changes, custom
  state) ride on the next fsync. `sync` and `close` wait until everything written is on disk.
- A failed write (disk full) is cut back off, so the file never keeps half a line.
- A failed fsync is not trusted to be reported twice: Linux drops the pages it could not write and a later
  fsync succeeds without them. So every line written since the last good fsync is kept in memory until an
  fsync covers it; after a failure those lines are written again at their places (`take_sync_error`
  tells the owner once, who tells the user), and fsync'ed with the next line, until the disk takes them.
- Before the first append to an existing file, a last line without its newline gets one: an incomplete
  line (a torn write) then stays in the file as a line that every load skips (pi does the same), so the
  new entry never glues onto it and no byte is cut off.
- If the file grew behind our back (another writer), the next append first makes sure it starts on a
  fresh line, and the change is logged. If another file was renamed over it, appends follow the name
  (`follow`), as pi's do.
- A whole-file rewrite (migration, missing header) first keeps the original as ``<file>.<tag>.bak``
  (a hard link to the same, already durable, data when possible; a copy is fsync'ed before going on),
  then writes a temporary file and renames it over the original. A killed process therefore leaves
  either the original or the complete new file under the name, never a mix; the new file and the
  directory are fsync'ed by the background thread like any durable append, so the request that
  triggered the rewrite does not wait for the disk. Should the machine lose power before that fsync,
  the original is still in the backup. (A new session's first write leaves its directory's fsync to the
  same thread.)
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

from pi_tui.session.errors import SessionError
from pi_tui.session.report import TornTail
from pi_tui.util.fd_write import write_all

__all__ = ["SessionFile", "backup_path"]

log = logging.getLogger(__name__)


def backup_path(path: Path, tag: str) -> Path:
    """``<name>.<tag>.bak`` beside ``path``, numbered when that name is taken."""
    candidate = path.with_name(f"{path.name}.{tag}.bak")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{tag}.{n}.bak")
        n += 1
    return candidate


def _fsync_dir(directory: Path) -> None:
    # Makes a new or renamed file's directory entry survive a power loss; not possible everywhere.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _encode(lines: Sequence[str | bytes]) -> bytes:
    return b"".join((line if isinstance(line, bytes) else line.encode("utf-8")) + b"\n" for line in lines)


def _same_file(a: Path, b: Path) -> bool:
    try:
        first, second = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Syncer:
    """fsyncs one descriptor on a background thread, coalescing requests (group commit).

    `request` returns at once; the thread fsyncs whenever lines were written since its last fsync
    started, and ends after `_IDLE_SECONDS` with nothing to do (starting a thread costs the caller about
    a millisecond, so one thread serves a whole run of appends). `wait` blocks until every requested
    fsync is done; the owner calls it before closing or replacing the descriptor.
    """

    _IDLE_SECONDS = 2.0

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._fd: int | None = None  # the descriptor with lines awaiting an fsync
        self._dir: Path | None = None  # a directory whose entries (a new or renamed file) await one
        self._busy = False
        self._thread: threading.Thread | None = None
        self.failures = 0
        # (offset, bytes) written since the last fsync started, and those whose fsync failed: kept until
        # an fsync covers them, so that they can be written again.
        self._written: list[tuple[int, bytes]] = []
        self._lost: list[tuple[int, bytes]] = []
        self._lost_dir: Path | None = None
        self._failing = False  # the last fsync failed (a new failure after a success is reported again)
        self._error: OSError | None = None  # a failure not yet taken by the owner

    def note(self, offset: int, data: bytes, failures_before: int | None = None) -> None:
        """Remember that ``data`` was written at ``offset``, until an fsync started after it succeeds.

        ``failures_before`` is `failures` as read before the write: when an fsync failed since, the bytes
        may have been on the pages it dropped, and they are kept for writing again."""
        with self._cond:
            if failures_before is not None and failures_before != self.failures:
                self._lost.append((offset, data))
            else:
                self._written.append((offset, data))

    def take_lost(self) -> tuple[list[tuple[int, bytes]], Path | None]:
        """What failed fsyncs did not make durable (the chunks and a directory), forgotten here."""
        with self._cond:
            lost, directory = self._lost, self._lost_dir
            self._lost, self._lost_dir = [], None
            return lost, directory

    def give_back(self, lost: list[tuple[int, bytes]], directory: Path | None) -> None:
        """Put back what `take_lost` gave when it could not be written again."""
        with self._cond:
            self._lost[:0] = lost
            self._lost_dir = self._lost_dir or directory

    def take_error(self) -> OSError | None:
        """The failure of an fsync, once per run of failures (None when there is nothing new to tell)."""
        with self._cond:
            error, self._error = self._error, None
            return error

    def forget(self) -> None:
        """Drop what is kept for rewriting (the descriptor is closed, or another file took the name)."""
        with self._cond:
            self._written, self._lost, self._lost_dir = [], [], None

    def fsync_now(self, fd: int) -> None:
        """fsync ``fd`` in the caller's thread (after `wait`), with the bookkeeping of the background one.

        Raises:
            OSError: the fsync failed; what it covered is kept for writing again.
        """
        with self._cond:
            chunks, self._written = self._written, []
        self._synced(fd, None, chunks)

    def request(self, fd: int, directory: Path | None = None) -> None:
        """fsync ``fd`` soon (and then ``directory``, when a file was created or renamed in it)."""
        with self._cond:
            self._fd = fd
            if directory is not None:
                self._dir = directory
            self._cond.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="session-fsync", daemon=True)
                self._thread.start()

    def wait(self) -> None:
        with self._cond:
            while self._fd is not None or self._busy:
                self._cond.wait()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._fd is None:
                    self._cond.wait(self._IDLE_SECONDS)
                fd, directory = self._fd, self._dir
                if fd is None:
                    self._thread = None
                    self._cond.notify_all()
                    return
                self._fd = self._dir = None
                self._busy = True
                chunks, self._written = self._written, []
            try:
                self._synced(fd, directory, chunks)
            except OSError:
                pass  # kept for writing again and reported through `take_error`
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _synced(self, fd: int, directory: Path | None, chunks: list[tuple[int, bytes]]) -> None:
        try:
            os.fsync(fd)
            if directory is not None:
                _fsync_dir(directory)
        except OSError as exc:
            # Only the durability of written lines is in doubt, but the kernel will not say so again:
            # keep them for writing again, and have the owner tell the user once.
            with self._cond:
                self.failures += 1
                # Lines written after this fsync took its list but before it failed were on the pages it
                # failed to write as well: the next fsync would report them durable without writing them.
                self._lost.extend(chunks)
                self._lost.extend(self._written)
                self._written = []
                self._lost_dir = self._lost_dir or directory
                if not self._failing:
                    self._error = exc
                self._failing = True
            log.warning("fsync of a session file failed: %s", exc)
            raise
        with self._cond:
            self._failing = False


class SessionFile:
    """The append handle of one session file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = 0
        self.external_changes = 0
        self.made_backup: Path | None = None  # the backup `rewrite` kept, even when it then failed
        self._syncer = _Syncer()

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def _open(self, create: bool) -> int:
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        return os.open(self.path, flags, 0o644)

    def create(self, lines: list[str]) -> None:
        """Start the file with ``lines`` (header and buffered entries). An existing blank file is reused."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = self._open(create=True)
        size = os.fstat(fd).st_size
        if size:
            existing = os.pread(fd, min(size, 1 << 16), 0)
            if size > len(existing) or existing.strip():
                os.close(fd)
                raise SessionError(
                    f"Session file {self.path} appeared with content while starting a new session; "
                    "nothing was written. Open it with --session to continue it instead."
                )
            os.ftruncate(fd, 0)
        self._fd = fd
        self._size = 0
        try:
            self._append_bytes(_encode(lines), durable=True, directory=self.path.parent)
        except BaseException:
            # Not opened after all (disk full): the caller keeps the lines and tries again later.
            self._fd = None
            os.close(fd)
            raise

    def open_existing(self, loaded_size: int, torn: TornTail | None, unterminated: bool) -> list[str]:
        """Open for appending and repair the tail seen at load. Returns what was repaired, for the report."""
        self._fd = self._open(create=False)
        self._size = os.fstat(self._fd).st_size
        repairs: list[str] = []
        if self._size != loaded_size:
            # Changed since we read it: the tail we saw is stale; `_check_external` keeps lines whole.
            log.warning(
                "%s changed on disk since it was loaded (%d → %d bytes)", self.path, loaded_size, self._size
            )
            self.external_changes += 1
            self._size = -1
            return repairs
        if torn is not None and torn.offset + torn.length == self._size:
            # Ended with a newline and left in place, as pi does when it loads the file: the bytes stay
            # where they were, later loads (ours and pi's) skip that one line, and nothing is cut off a
            # file that another program (pi takes no lock) may be appending to at this very moment.
            self._append_bytes(b"\n", durable=True)
            repairs.append(f"ended the incomplete last line {torn.line_no} with a newline, keeping its bytes")
        elif unterminated:
            self._append_bytes(b"\n", durable=True)
            repairs.append("ended the last line, which lacked its newline")
        return repairs

    def follow(self) -> bool:
        """Make sure appends go to the file that now has this name. False: the name is gone (removed).

        Another program may have replaced the file (written a new one and renamed it over, as editors,
        sync tools and ``git checkout`` do): the open descriptor would then append to a file no name
        leads to, and every later line would be lost. pi appends by name each time, so it follows
        such a change; so does this, by opening the new file (its last line is ended first if needed).
        """
        if self._fd is None:
            raise SessionError(f"Session file {self.path} is not open for writing")
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(self._fd)
        if (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
            return True
        log.warning("%s was replaced on disk by another file; appending to the new one", self.path)
        self.external_changes += 1
        self._syncer.wait()
        fd = self._open(create=False)
        old, self._fd = self._fd, fd
        with contextlib.suppress(OSError):
            os.fsync(old)
        self._syncer.forget()  # offsets in the old file: nothing to write again in the new one
        os.close(old)
        self._size = -1  # unknown: `_check_external` looks at the new file's end before the next line
        return True

    def _check_external(self) -> None:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size == self._size:
            return
        if self._size >= 0:
            self.external_changes += 1
            log.warning(
                "%s changed on disk outside this session (%d → %d bytes)", self.path, self._size, size
            )
        self._size = size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            self._append_bytes(b"\n", durable=False)

    def _append_bytes(self, data: bytes, durable: bool, directory: Path | None = None) -> None:
        assert self._fd is not None
        before = self._size
        failures = self._syncer.failures
        try:
            write_all(self._fd, data)
        except OSError:
            self._cut_partial(before, data)
            raise
        self._size = before + len(data) if before >= 0 else os.fstat(self._fd).st_size
        self._syncer.note(self._size - len(data), data, failures)
        if durable:
            self._syncer.request(self._fd, directory)

    def _write_lost(self, *, soon: bool = True) -> None:
        """Write again, at their places, the bytes a failed fsync did not make durable, and (``soon``) have
        them fsync'ed in the background (else the caller fsyncs them).

        Raises:
            OSError: they could not be written (they are kept for the next try).
        """
        lost, directory = self._syncer.take_lost()
        if not lost and directory is None:
            return
        assert self._fd is not None
        try:
            # A second descriptor without O_APPEND: on Linux a positioned write to an O_APPEND one appends.
            fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            self._syncer.give_back(lost, directory)
            raise
        try:
            named, held = os.fstat(fd), os.fstat(self._fd)
            if (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino):
                log.warning("%s was replaced before lost lines could be written again", self.path)
                return
            for offset, data in lost:
                view = memoryview(data)
                while view:
                    view = view[os.pwrite(fd, view, offset + len(data) - len(view)) :]
        except OSError:
            self._syncer.give_back(lost, directory)
            raise
        finally:
            os.close(fd)
        for offset, data in lost:
            self._syncer.note(offset, data)
        if soon:
            self._syncer.request(self._fd, directory)
        elif directory is not None:
            _fsync_dir(directory)

    def take_sync_error(self) -> OSError | None:
        """The error of a failed fsync, once per run of failures: the lines it covered were (or are about to
        be) written again, but the user should know that the disk refused them once."""
        return self._syncer.take_error()

    def _cut_partial(self, before: int, data: bytes) -> None:
        """Remove the start of a line whose write failed (disk full, quota), so no half line stays.

        Only our own bytes are cut: the file's last bytes, when they are the start of ``data`` and begin
        a line. Whatever another program appended meanwhile (pi takes no lock) stays, even when it came
        between ``before`` and our bytes; when our bytes cannot be told apart, nothing is cut and the
        next append ends the file's last line first.
        """
        assert self._fd is not None
        self._size = -1  # unless shown otherwise below: `_check_external` looks before the next line
        with contextlib.suppress(OSError):
            size = os.fstat(self._fd).st_size
            if size == before:
                self._size = before  # nothing was written
                return
            if size < before:
                return
            # Fewer than all of ``data`` was written, so our bytes start after ``size - len(data)``.
            low = max(before, size - len(data) + 1, 0)
            # ``window[0]`` is the byte before ``low`` (a newline stands in for the file's start).
            if low > 0:
                window = os.pread(self._fd, size - low + 1, low - 1)
            else:
                window = b"\n" + os.pread(self._fd, size, 0)
            start = window.find(b"\n") + 1
            while 0 < start < len(window):
                if data.startswith(window[start:]):
                    cut = low + start - 1
                    os.ftruncate(self._fd, cut)
                    if cut == before:
                        self._size = before
                    return
                start = window.find(b"\n", start) + 1

    def append(self, line: str, durable: bool) -> None:
        """Append one entry line (no newline in ``line``)."""
        if self._fd is None:
            raise SessionError(f"Session file {self.path} is not open for writing")
        self._write_lost()
        self._check_external()
        self._append_bytes((line + "\n").encode("utf-8"), durable)

    def rewrite(self, lines: Sequence[str | bytes], tag: str, earlier: Path | None = None) -> Path:
        """Replace the file's content atomically, keeping the original as a backup. Returns the backup.

        The file stays open for appending; the fsync of the new content and of the rename is left to
        the background thread (see the module docstring for why nothing is lost meanwhile).

        Args:
            lines: The new content, one entry per line.
            tag: The backup's tag (``<name>.<tag>.bak``).
            earlier: The backup an earlier, failed attempt made (a full disk): kept as this one's when
                it is still a hard link to the file, so that retries do not pile up backups.
        """
        if earlier is not None and _same_file(earlier, self.path):
            backup = earlier
        else:
            backup = backup_path(self.path, tag)
        if backup != earlier and self.path.exists():
            try:
                os.link(self.path, backup)
            except OSError:
                shutil.copy2(self.path, backup)
                _fsync_path(backup)  # a copy is new data: on disk before the original's name is reused
        self.made_backup = backup
        self.close()
        # The temporary file has the name pattern and lock of `pi_tui.util.atomic_file`, so the one left
        # by a rewrite that was killed is removed by a later one, as that module removes its own.
        from pi_tui.util.atomic_file import lock_temp, new_temp_path, remove_stale_temps  # rewrites only

        remove_stale_temps(self.path)
        tmp = new_temp_path(self.path)
        data = _encode(lines)
        fd = os.open(tmp, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            lock_temp(fd)  # held by the descriptor, which stays open for appending: harmless
            write_all(fd, data)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._fd = fd
        self._size = len(data)
        self._syncer.note(0, data)
        self._syncer.request(fd, self.path.parent)
        return backup

    def sync(self) -> None:
        """Block until every line written so far is on disk.

        Raises:
            OSError: the disk did not take them (they are kept, and written again with the next line).
        """
        self._syncer.wait()
        if self._fd is not None:
            self._write_lost(soon=False)
            self._syncer.fsync_now(self._fd)

    def close(self) -> None:
        if self._fd is None:
            return
        self._syncer.wait()
        try:
            self._write_lost(soon=False)
            self._syncer.fsync_now(self._fd)
        except OSError as exc:
            log.warning("the last lines of %s may not be on disk: %s", self.path, exc)
        self._syncer.forget()
        fd, self._fd = self._fd, None
        os.close(fd)
