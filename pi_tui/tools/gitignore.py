"""A .gitignore matcher: the rules git documents, for one ignore file at a time.

Supported: comments, escaped ``#``/``!``/trailing spaces, negation, directory-only patterns (trailing
``/``), anchored patterns (a ``/`` at the start or in the middle), patterns without a slash matching
at any depth, ``*``, ``?``, ``[...]`` and ``**``. Like git, a file inside an ignored directory cannot
be re-included: the walker never enters ignored directories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .globs import compile_glob

__all__ = ["IgnoreRule", "IgnoreFile", "parse_ignore_rules", "is_ignored", "IGNORE_FILE_NAMES"]

IGNORE_FILE_NAMES = (".gitignore", ".ignore")
"""Files read in every directory; ``.ignore`` is the ripgrep/fd convention, same syntax."""


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One compiled pattern line.

    Attributes:
        pattern: The line as written (for debugging).
        regex: Matches the name (``basename_only``) or the path relative to the ignore file's directory.
        negated: A ``!`` rule: re-includes what an earlier rule ignored.
        dir_only: Only matches directories (the pattern ended with ``/``).
        basename_only: The pattern had no ``/`` except a trailing one, so it matches at any depth.
    """

    pattern: str
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    basename_only: bool

    def matches(self, rel_path: str, name: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return self.regex.fullmatch(name if self.basename_only else rel_path) is not None


def _strip_trailing_spaces(line: str) -> str:
    # Trailing spaces are ignored unless escaped with a backslash.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def parse_ignore_rules(text: str) -> list[IgnoreRule]:
    """Compile the lines of a .gitignore file (in file order)."""
    rules: list[IgnoreRule] = []
    for raw in text.split("\n"):
        line = _strip_trailing_spaces(raw.rstrip("\r"))
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        if dir_only:
            line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        if line.startswith("/"):
            line = line[1:]
        try:
            regex = compile_glob(line)
        except re.error:
            continue  # git ignores patterns it cannot parse; so do we
        rules.append(IgnoreRule(raw, regex, negated, dir_only, basename_only=not anchored))
    return rules


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ignore file, positioned relative to the root of a walk.

    Attributes:
        rules: The compiled rules, in file order (the last matching rule decides).
        inside: The file's directory relative to the walk root when it is the root or below it
            (``""`` for the root itself).
        above: The walk root relative to the file's directory when the file lives above the root.
    """

    rules: tuple[IgnoreRule, ...]
    inside: str = ""
    above: str = ""

    @classmethod
    def load(cls, path: Path, *, inside: str = "", above: str = "") -> IgnoreFile | None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        rules = parse_ignore_rules(text)
        if not rules:
            return None
        return cls(tuple(rules), inside=inside, above=above)

    def decide(self, rel_path: str, name: str, is_dir: bool) -> bool | None:
        """``True`` ignored, ``False`` explicitly re-included, ``None`` when no rule matches.

        ``rel_path`` is the entry's POSIX path relative to the walk root.
        """
        if self.above:
            local = f"{self.above}/{rel_path}"
        elif self.inside:
            if not rel_path.startswith(self.inside + "/"):
                return None
            local = rel_path[len(self.inside) + 1 :]
        else:
            local = rel_path
        for rule in reversed(self.rules):
            if rule.matches(local, name, is_dir):
                return not rule.negated
        return None


def is_ignored(ignore_files: tuple[IgnoreFile, ...], rel_path: str, name: str, is_dir: bool) -> bool:
    """Whether the deepest ignore file with an opinion ignores the entry (files are ordered shallow first)."""
    for ignore in reversed(ignore_files):
        decision = ignore.decide(rel_path, name, is_dir)
        if decision is not None:
            return decision
    return False
