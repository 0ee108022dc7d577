"""The project's one ignore-file matcher: ``.gitignore``-style rules through `pathspec`.

Each ignore file is compiled with ``pathspec.GitIgnoreSpec``, whose patterns follow git's own rules
(comments, escapes, negation, directory-only and anchored patterns, ``*``/``?``/``[...]``/``**``), so
we keep no pattern translator of our own. Entries are checked one at a time as the walk meets them (a
directory with a trailing ``/``, which is how pathspec tells directories), and the last pattern that
matches the entry *itself* wins: a match that only covers a parent directory (pathspec's ``ps_d``
group ending before the path does) does not count, because the walk decided that directory when it
met it and never enters an ignored one. That is git's rule: ``*`` then ``!keep/`` re-includes the
directory ``keep`` but not the files in it (``git status --ignored`` agrees). ``check_file`` on the
whole spec answers a different question (a path list without a walk) and gets this case wrong in
both directions, so only the compiled patterns are used.

What stays ours is how files combine during a walk, because that is where ripgrep and fd (which pi
runs) differ from a single spec:

* rules of an ignore file apply only below its own directory, relative to it;
* the deepest ignore file with an opinion on a path decides (a nested ``!keep.tmp`` re-includes
  what a parent ignored); within one file the last matching rule wins;
* inside a git repository the ignore files between the repository root and the walk root, and
  ``.git/info/exclude``, apply too; outside a repository nothing above the walk root does;
* a walker never enters an ignored directory, so nothing inside it can be re-included (as in git).

Tools (grep, find, ls), resource discovery and ``@file`` completion all use `IgnoreStack`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_DIR_MARK = "ps_d"  # the group pathspec's gitignore regexes use for "this is a directory"

__all__ = ["IGNORE_FILE_NAMES", "IgnoreFile", "IgnoreStack", "find_git_root"]

IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".ignore")
"""Read in every directory: git's file and the ``.ignore`` that ripgrep and fd also obey."""


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a directory, or a worktree's file)."""
    current = Path(os.path.abspath(start))
    for candidate in (current, *current.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ignore file, placed relative to the root of a walk.

    Attributes:
        rules: ``(regex, ignores)`` per pattern line, last line first (the first that matches decides);
            ``ignores`` is False for a ``!`` line.
        inside: The file's directory relative to the walk root when it is the root or below it
            (``""`` for the root itself).
        above: The walk root relative to the file's directory when the file lives above the root.
    """

    rules: tuple[tuple[re.Pattern[str], bool], ...]
    inside: str = ""
    above: str = ""
    any_rule: re.Pattern[str] | None = None
    """All rules in one regex: most entries match none, and one search is cheaper than one per rule."""

    @classmethod
    def from_text(cls, text: str, *, inside: str = "", above: str = "") -> IgnoreFile | None:
        """Compile ignore-file text; None when it holds no rules (blank lines and comments only)."""
        # Imported here: most runs (one ``-p`` turn) never meet an ignore file, and pathspec costs ~9 ms.
        from pathspec import GitIgnoreSpec, RegexPattern

        # Strip a CR per line: pathspec keeps it as part of the pattern, git does not.
        lines = [line.rstrip("\r") for line in text.split("\n")]
        try:
            patterns = list(GitIgnoreSpec.from_lines(lines).patterns)
        except (ValueError, re.error):
            # git skips a line it cannot parse (a lone ``!``, ``[z-a]``) and keeps the rest; so do we.
            patterns = []
            for line in lines:
                try:
                    patterns.extend(GitIgnoreSpec.from_lines([line]).patterns)
                except (ValueError, re.error):
                    continue
        rules = tuple(
            (p.regex, p.include)
            for p in reversed(patterns)
            if isinstance(p, RegexPattern) and p.include is not None and p.regex is not None
        )
        if not rules:
            return None
        try:
            any_rule = re.compile(
                "|".join(f"(?:{regex.pattern.replace('(?P<ps_d>', '(?:')})" for regex, _ in rules)
            )
        except re.error:  # pathspec's regex shapes changed; the per-rule loop is still right
            any_rule = None
        return cls(rules, inside=inside, above=above, any_rule=any_rule)

    @classmethod
    def load(cls, path: Path, *, inside: str = "", above: str = "") -> IgnoreFile | None:
        """Read and compile ``path``; None when it is missing, unreadable or has no rules."""
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return cls.from_text(text, inside=inside, above=above)

    def decide(self, rel_path: str, is_dir: bool) -> bool | None:
        """``True`` ignored, ``False`` explicitly re-included (``!``), ``None`` when no rule matches.

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
        # pathspec tells directories by a trailing slash (that is how ``build/`` rules apply).
        subject = local + "/" if is_dir else local
        if self.any_rule is not None and self.any_rule.match(subject) is None:
            return None
        for regex, ignores in self.rules:
            match = regex.match(subject)
            if match is None:
                continue
            if match.groupdict().get(_DIR_MARK) is not None and match.end(_DIR_MARK) < len(subject):
                continue  # it matched a parent directory, not this entry
            return ignores
        return None


@dataclass(frozen=True, slots=True)
class IgnoreStack:
    """The ignore files in effect in one directory of a walk, shallowest first.

    Immutable: entering a directory makes a new stack with `entering`, so sibling directories never
    see each other's rules.
    """

    files: tuple[IgnoreFile, ...] = ()
    names: tuple[str, ...] = IGNORE_FILE_NAMES

    @classmethod
    def for_root(
        cls, root: Path, *, names: Iterable[str] = IGNORE_FILE_NAMES, in_repository: bool = True
    ) -> IgnoreStack:
        """The stack at the walk root ``root`` (an absolute path), with the root's own ignore files.

        Args:
            root: The directory the walk starts in.
            names: Ignore-file names read in each directory.
            in_repository: Also apply ``.git/info/exclude`` and the ignore files between the
                enclosing git repository's root and ``root``, as ripgrep and fd do.
        """
        stack = cls((), tuple(names))
        if in_repository:
            stack = cls(tuple(_repository_ignores(root, stack.names)), stack.names)
        return stack.entering(root, "")

    def entering(self, directory: Path, rel: str) -> IgnoreStack:
        """The stack inside ``directory`` (``rel``: its path relative to the walk root)."""
        found = [ignore for name in self.names if (ignore := IgnoreFile.load(directory / name, inside=rel))]
        return IgnoreStack(self.files + tuple(found), self.names) if found else self

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Whether the deepest ignore file with an opinion on ``rel_path`` ignores it."""
        for ignore in reversed(self.files):
            decision = ignore.decide(rel_path, is_dir)
            if decision is not None:
                return decision
        return False


def _repository_ignores(root: Path, names: tuple[str, ...]) -> list[IgnoreFile]:
    """Ignore files above ``root`` up to its repository root (none when not inside a repository)."""
    git_root = find_git_root(root)
    if git_root is None:
        return []
    found: list[IgnoreFile] = []
    exclude = IgnoreFile.load(git_root / ".git" / "info" / "exclude", above=_rel_above(root, git_root))
    if exclude is not None:
        found.append(exclude)
    directory = git_root
    while directory != root:
        for name in names:
            ignore = IgnoreFile.load(directory / name, above=_rel_above(root, directory))
            if ignore is not None:
                found.append(ignore)
        directory = directory / root.relative_to(directory).parts[0]
    return found


def _rel_above(root: Path, directory: Path) -> str:
    rel = root.relative_to(directory).as_posix()
    return "" if rel == "." else rel
