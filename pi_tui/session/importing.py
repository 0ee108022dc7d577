"""``/import``: file a session from elsewhere (a ``.jsonl`` another machine or agent wrote) among this
project's sessions, as pi 0.61+ does: a copy under the same name in the session folder, ``-1``, ``-2`` …
added before the extension when the name is taken. The original is never changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .errors import SessionError
from .listing import read_header

__all__ = ["SessionImportError", "import_session_file", "missing_session_cwd"]


class SessionImportError(SessionError):
    """The file cannot be imported; the message says which file and why."""


def import_session_file(source: str | os.PathLike[str], session_dir: Path) -> Path:
    """Copy the session file ``source`` into ``session_dir`` and return where the copy is.

    A file already in ``session_dir`` is used where it is. The copy is written next to its final name
    and only then put there, so a failed copy leaves nothing behind.

    Raises:
        SessionImportError: ``source`` is missing, a directory, not a session file (its first line is
            no session header), or cannot be read or copied.
    """
    path = Path(os.path.expanduser(os.fspath(source))).absolute()
    if not path.exists():
        raise SessionImportError(f"File not found: {path}")
    if path.is_dir():
        raise SessionImportError(f"{path} is a folder; name a session file (.jsonl)")
    if read_header(path) is None:
        raise SessionImportError(f"{path} is not a pi session file: its first line is not a session header")
    try:
        session_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SessionImportError(f"Cannot create the session folder {session_dir}: {exc}") from exc
    target = session_dir / path.name
    if target.exists() and os.path.samefile(target, path):
        return target
    stem, suffix = os.path.splitext(path.name)
    number = 1
    from pi_tui.util.atomic_file import lock_temp, new_temp_path, remove_stale_temps  # imports only

    # The copy goes to a temporary file of `pi_tui.util.atomic_file`'s pattern and lock, so the one an
    # import killed part way leaves behind is removed by a later import of the same name.
    remove_stale_temps(target)
    partial = new_temp_path(target)
    claimed: Path | None = None
    try:
        with path.open("rb") as original, open(partial, "xb") as copy:
            lock_temp(copy.fileno())
            shutil.copyfileobj(original, copy)
            copy.flush()
            os.fsync(copy.fileno())  # on disk before it takes a name: a session is the user's work
        while True:
            try:
                with open(target, "xb"):  # claims a free name; never overwrites a session
                    claimed = target
                os.replace(partial, target)  # the claimed (empty) name gets the whole copy at once
                claimed = None
                break
            except FileExistsError:
                target = session_dir / f"{stem}-{number}{suffix}"
                number += 1
    except OSError as exc:
        if claimed is not None:
            claimed.unlink(missing_ok=True)
        raise SessionImportError(f"Cannot copy {path} to {session_dir}: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return target


def missing_session_cwd(path: str | os.PathLike[str]) -> str | None:
    """The working directory the session file at ``path`` records, when that directory no longer exists.

    None when the file has no readable header, records no directory, or the directory is still there.
    """
    header = read_header(Path(os.path.expanduser(os.fspath(path))).absolute())
    recorded = header.cwd if header is not None else ""
    return recorded if recorded and not Path(recorded).is_dir() else None
