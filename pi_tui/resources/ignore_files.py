"""A small ``.gitignore`` matcher for resource discovery.

Supports what ignore files in skill folders actually contain: comments, blank lines, ``!``
negation, a trailing ``/`` for directories only, anchoring by a leading or inner ``/``, and the
``*``, ``?``, ``[...]`` and ``**`` wildcards. The last matching rule wins, as in git. Rules only
apply below the directory whose ignore file holds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IGNORE_FILE_NAMES", "IgnoreMatcher"]

IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".ignore", ".fdignore")


@dataclass(frozen=True)
class _Rule:
    base: Path
    regex: re.Pattern[str]
    negate: bool
    directory_only: bool
    anchored: bool


def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            if pattern.startswith("**", index):
                at_start = index == 0 or pattern[index - 1] == "/"
                after = pattern[index + 2 : index + 3]
                if at_start and after == "/":
                    out.append("(?:.*/)?")  # "**/" matches zero or more directories
                    index += 3
                    continue
                if at_start and after == "":
                    out.append(".*")
                    index += 2
                    continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = pattern.find("]", index + 1)
            if close < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                index = close
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


class IgnoreMatcher:
    """Accumulates ignore rules while a directory tree is walked top-down."""

    def __init__(self) -> None:
        self._rules: list[_Rule] = []

    def add_rules_from_dir(self, directory: Path) -> None:
        """Read the ignore files of ``directory`` (missing or unreadable ones are skipped)."""
        for name in IGNORE_FILE_NAMES:
            try:
                text = (directory / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                self.add_rule(directory, line)

    def add_rule(self, base: Path, line: str) -> None:
        """Add one ignore-file line whose patterns are relative to ``base``."""
        pattern = line.rstrip("\n").rstrip()
        if not pattern or pattern.startswith("#"):
            return
        negate = pattern.startswith("!")
        if negate:
            pattern = pattern[1:]
        elif pattern.startswith("\\"):
            pattern = pattern[1:]
        directory_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        if not pattern:
            return
        anchored = "/" in pattern
        pattern = pattern.lstrip("/")
        regex = re.compile(_glob_to_regex(pattern) + r"\Z", re.DOTALL)
        self._rules.append(_Rule(base, regex, negate, directory_only, anchored))

    def is_ignored(self, path: Path, *, is_dir: bool) -> bool:
        """Whether ``path`` is ignored by the rules of its ancestors' ignore files."""
        ignored = False
        for rule in self._rules:
            if rule.directory_only and not is_dir:
                continue
            try:
                relative = path.relative_to(rule.base).as_posix()
            except ValueError:
                continue
            if relative in ("", "."):
                continue
            subject = relative if rule.anchored else path.name
            if rule.regex.match(subject):
                ignored = not rule.negate
        return ignored
