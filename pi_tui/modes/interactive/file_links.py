"""``file://`` addresses for the paths tool cards show, so a terminal can open them (OSC 8 links).

As pi 0.87.1 builds them: the path is made absolute the way its tools read it (``~`` is the home
directory, a ``file://`` address is its path, a relative path starts at the working directory, ``.`` and
``..`` are folded away), then written as Node's ``pathToFileURL`` writes it: ``file://`` with an empty
host, the path's UTF-8 bytes with everything but letters, digits and ``!$&'()*+,-./:;=@_`` as ``%XX``
(so a space is ``%20``, ``~`` is ``%7E`` and ``é`` is ``%C3%A9``).
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["LINKED_PATH_TOOLS", "file_url"]

LINKED_PATH_TOOLS = frozenset({"read", "edit", "write", "ls"})
"""The tools whose card title links its path (pi's grep and find titles name theirs as plain text)."""

_KEPT = frozenset(b"!$&'()*+,-./:;=@_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
"""The bytes ``pathToFileURL`` writes as they are; every other byte becomes ``%XX``."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _absolute(path: str, cwd: Path) -> str:
    """``path`` as an absolute, normalised path, relative ones taken from ``cwd``."""
    if path == "~":
        path = os.path.expanduser("~")
    elif path.startswith("~/"):
        path = posixpath.join(os.path.expanduser("~"), path[2:])
    elif path.startswith("file://"):
        path = unquote(urlparse(path).path)
    joined = posixpath.normpath(posixpath.join(os.fspath(cwd), path))
    # POSIX keeps a leading "//" apart; Node's path.resolve folds it into one "/" like any other
    return "/" + joined.lstrip("/") if joined.startswith("//") else joined


def file_url(path: str, cwd: Path) -> str:
    """The ``file://`` address pi links ``path`` (as a tool's argument, relative to ``cwd``) to.

    Args:
        path: The path as the model wrote it.
        cwd: The directory relative paths start at.

    Returns:
        ``file:///`` and the absolute path, percent-encoded as Node's ``pathToFileURL`` encodes it.
    """
    absolute = _absolute(path, cwd)
    # A lone surrogate (possible in JSON a model wrote) is written as U+FFFD, as a JavaScript string would be
    data = _SURROGATE.sub("\ufffd", absolute).encode("utf-8")
    encoded = "".join(chr(byte) if byte in _KEPT else f"%{byte:02X}" for byte in data)
    return "file://" + encoded
