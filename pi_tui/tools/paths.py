"""Turning a path the model wrote into an absolute path.

Models copy paths from prose and from macOS screenshots, so a few forgiving rules apply: a leading
``@`` (the CLI's file-reference syntax) is dropped, ``~`` means the home directory, and the many
Unicode space characters count as a plain space. The read tool also tries the spellings macOS uses
on disk (a narrow no-break space before AM/PM, decomposed accents, a curly apostrophe).
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["normalize_path_input", "resolve_to_cwd", "resolve_read_path", "read_path_variants"]

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)
_NARROW_NBSP = "\u202f"


def normalize_path_input(path: str) -> str:
    """Apply the forgiving rules (spaces, ``@``, ``~``, ``file://``) without resolving."""
    text = _UNICODE_SPACES.sub(" ", path)
    if text.startswith("@"):
        text = text[1:]
    if text == "~":
        return os.path.expanduser("~")
    if text.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), text[2:])
    if text.startswith("file://"):
        return unquote(urlparse(text).path)
    return text


def resolve_to_cwd(path: str, cwd: Path | str) -> Path:
    """The absolute, normalised path ``path`` names when relative paths start at ``cwd``.

    Symlinks are not resolved, so messages show the path the way the model wrote it.
    """
    text = normalize_path_input(path)
    joined = text if os.path.isabs(text) else os.path.join(os.fspath(cwd), text)
    return Path(os.path.normpath(joined))


def read_path_variants(resolved: Path) -> list[Path]:
    """Other spellings of ``resolved`` that macOS may have used on disk, in the order to try."""
    text = str(resolved)
    am_pm = _AM_PM.sub(lambda m: f"{_NARROW_NBSP}{m.group(1)}.", text)
    nfd = unicodedata.normalize("NFD", text)
    curly = text.replace("'", "\u2019")
    nfd_curly = nfd.replace("'", "\u2019")
    variants: list[Path] = []
    for candidate in (am_pm, nfd, curly, nfd_curly):
        if candidate != text and Path(candidate) not in variants:
            variants.append(Path(candidate))
    return variants


def resolve_read_path(path: str, cwd: Path | str) -> Path:
    """Like `resolve_to_cwd`, but when nothing exists there, try the macOS spellings.

    Returns the plain resolution when no variant exists either, so the caller's "not found" error
    names the path the model asked for.
    """
    resolved = resolve_to_cwd(path, cwd)
    if os.path.lexists(resolved):
        return resolved
    for variant in read_path_variants(resolved):
        if os.path.lexists(variant):
            return variant
    return resolved
