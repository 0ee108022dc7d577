"""Protected paths: blocks the model's writes to ``.env*``, ``.git/``, ``node_modules/`` and configured paths.

Enable: ``pi-tui -e protected_paths``, or ``"extensions": ["bundled:protected_paths"]`` in settings.

Checked before a tool runs (``tool_call``):
- ``write`` and ``edit``: their ``path`` (symlinks are followed, so a link to ``.env`` is ``.env``);
- ``bash``: every command of the line (through the shared ``_shell`` parser, so chains, ``$(…)``,
  ``sh -c`` and wrappers count) that writes a file: redirections (``>``, ``>>``, ``&>``, ``<>``), ``tee``,
  ``mv`` (source and destination), ``cp``/``ln``/``install`` (destination), ``rm``/``rmdir``/``unlink``/
  ``shred``/``truncate``/``touch``, ``sed -i``/``perl -i``, ``dd of=``, ``curl -o``/``wget -O``. Globs in a
  target (``rm .env*``) are expanded against the disk, and a recursive ``rm``/``mv`` of a folder holding a
  protected path (``rm -rf .``) counts as a write to it. A line that cannot be parsed, or runs a program
  whose name is computed at run time (``$w .env``), is blocked when it mentions a protected name.

Reading is never blocked (pair this with ``secret_redactor`` to keep secrets out of the context).

The block reason tells the model which path, why, and not to work around it.

Settings::

    "protectedPaths": ["secrets/", "*.pem", "config/prod/**", "!.env.example"]

Globs: a pattern without a ``/`` matches a file or folder name anywhere (``*.pem``); ``name/`` matches a
folder anywhere; a pattern with a ``/`` inside is relative to the cwd (``**`` spans folders) and also covers
everything below what it matches; ``/abs/path`` and ``~/path`` are absolute. ``!pattern`` exempts paths
(checked first), e.g. ``!.env.example``. The defaults always apply unless exempted.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import runpy
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

_here = Path(__file__).parent
_shell = SimpleNamespace(**runpy.run_path(str(_here / "_shell.py")))
_settings = SimpleNamespace(**runpy.run_path(str(_here / "_settings.py")))

_GLOB = re.compile(r"[*?\[]")


class Rule:
    """One protected (or, with ``!``, exempted) glob."""

    def __init__(self, pattern: str, why: str) -> None:
        self.pattern = pattern
        self.why = why
        body = pattern.rstrip("/")
        self.anywhere = "/" not in body and not pattern.startswith("~")
        self.absolute = pattern.startswith(("/", "~"))
        anchored = os.path.expanduser(body) if self.absolute else body
        self.regex = None if self.anywhere else re.compile(_glob_regex(anchored) + r"(?:/.*)?\Z")

    def matches(self, rel: str | None, absolute: str) -> bool:
        """``rel``: the path relative to the cwd (None outside it); ``absolute``: the full path."""
        if self.anywhere:  # a name: any component of the path (a file, or a folder on the way)
            name = self.pattern.rstrip("/")
            parts = (rel if rel is not None else absolute).split("/")
            return any(fnmatch.fnmatchcase(part, name) for part in parts if part)
        assert self.regex is not None
        target = absolute if self.absolute else rel
        return target is not None and bool(self.regex.match(target))


def _glob_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            out.append("[" + pattern[i + 1 : end].replace("!", "^", 1) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


DEFAULT_RULES = (
    Rule(".env*", "environment files hold secrets"),
    Rule(".git/", "it is git's own data; change the repository only through git commands"),
    Rule("node_modules/", "it holds installed packages; change them through the package manager"),
)


class Guard:
    """The rules for one cwd; answers "is this path protected, and why"."""

    def __init__(self, cwd: str, patterns: Sequence[Any]) -> None:
        self.cwd = os.path.realpath(cwd)
        self.rules = list(DEFAULT_RULES)
        self.exempt: list[Rule] = []
        for raw in patterns:
            if not isinstance(raw, str) or not raw.strip("!"):
                continue
            if raw.startswith("!"):
                self.exempt.append(Rule(raw[1:], ""))
            else:
                self.rules.append(Rule(raw, f'it matches "{raw}" in the protectedPaths setting'))
        self._existing: list[str] | None = None

    def _forms(self, path: str) -> Iterator[tuple[str | None, str]]:
        lexical = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))
        for absolute in dict.fromkeys((lexical, os.path.realpath(lexical))):
            rel = os.path.relpath(absolute, self.cwd)
            yield (None if rel == ".." or rel.startswith("../") else rel.replace(os.sep, "/")), absolute

    def why(self, path: str) -> str | None:
        """Why ``path`` (relative to the cwd, or absolute) is protected, or None."""
        for rel, absolute in self._forms(path):
            if rel == ".":
                continue
            if any(rule.matches(rel, absolute) for rule in self.exempt):
                continue
            for rule in self.rules:
                if rule.matches(rel, absolute):
                    return rule.why
        return None

    def protected_inside(self, folder: str) -> str | None:
        """A protected path that exists inside ``folder`` (for ``rm -r``/``mv`` of a whole folder)."""
        base = os.path.realpath(os.path.join(self.cwd, os.path.expanduser(folder)))
        if not os.path.isdir(base):
            return None
        for path in self.existing():
            if path == base or path.startswith(base.rstrip("/") + "/"):
                return path
        return None

    def existing(self) -> list[str]:
        """Protected paths that exist in the cwd (defaults, and settings globs anchored at the cwd)."""
        if self._existing is None:
            found = [*glob.glob(os.path.join(self.cwd, ".env*"))]
            found += [os.path.join(self.cwd, ".git"), os.path.join(self.cwd, "node_modules")]
            for rule in self.rules[len(DEFAULT_RULES) :]:
                if not rule.anywhere and not rule.absolute:
                    found += glob.glob(os.path.join(self.cwd, rule.pattern.rstrip("/")), recursive=True)
            self._existing = [os.path.realpath(p) for p in found if os.path.lexists(p) and self.why(p)]
        return self._existing

    def mentions(self, text: str) -> str | None:
        """A protected name the raw text mentions (for lines that cannot be parsed)."""
        for token in (".env", ".git", "node_modules"):
            if token in text:
                return token
        for rule in self.rules[len(DEFAULT_RULES) :]:
            literal = _GLOB.split(rule.pattern.strip("/"))[0].strip("/")
            if literal and literal in text:
                return literal
        return None


# --- which files a bash command writes --------------------------------------------------------------------


def _operands(args: Sequence[str], value_options: frozenset[str] = frozenset()) -> list[str]:
    out: list[str] = []
    skip = False
    after_dashes = False
    for arg in args:
        if skip:
            skip = False
        elif after_dashes or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            after_dashes = True
        elif arg in value_options:
            skip = True
    return out


def _option_value(args: Sequence[str], short: str, long: str) -> list[str]:
    values = []
    for i, arg in enumerate(args):
        if arg in (short, long) and i + 1 < len(args):
            values.append(args[i + 1])
        elif arg.startswith(long + "="):
            values.append(arg.split("=", 1)[1])
        elif short and arg.startswith(short) and len(arg) > len(short) and not arg.startswith("--"):
            values.append(arg[len(short) :])
    return values


def _in_place_files(args: Sequence[str]) -> list[str] | None:
    """The files ``sed -i``/``perl -i`` edit, or None when it does not edit in place."""
    in_place, has_script, files, i = False, False, [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("--in-place",) or arg.startswith("--in-place="):
            in_place = True
        elif arg in ("--expression", "--file") or arg.startswith(("--expression=", "--file=")):
            has_script = True
            i += 0 if "=" in arg else 1
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter == "i":  # the rest is the backup suffix
                    in_place = True
                    break
                if letter in "ef":
                    has_script = True
                    if j == len(arg) - 1:
                        i += 1  # the script is the next argument
                    break
        else:
            files.append(arg)
        i += 1
    if not in_place:
        return None
    return files if has_script else files[1:]


_VERBS = {"truncate": "truncating", "touch": "touching"}


def written_paths(cmd: Any, cwd: str = ".") -> Iterator[tuple[str, str]]:
    """``(verb, path)`` for each file ``cmd`` (a parsed simple command) writes, moves or deletes."""
    for op, target in cmd.redirects:
        if ">" in op:
            yield "writing to", target
    name, args = cmd.name, list(cmd.argv[1:])
    if name == "tee":
        yield from (("writing to", p) for p in _operands(args))
    elif name == "mv":
        for target in _option_value(args, "-t", "--target-directory"):
            yield "moving into", target
        yield from (("moving", p) for p in _operands(args, frozenset({"-t", "-S", "--suffix"})))
    elif name in ("cp", "ln", "install"):
        values = frozenset({"-t", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"})
        operands = _operands(args, values)
        targets = _option_value(args, "-t", "--target-directory")
        if not targets and len(operands) >= 2:
            targets = [operands[-1]]
            sources = operands[:-1]
        else:
            sources = operands
        into_folder = bool(_option_value(args, "-t", "--target-directory"))
        for target in targets:
            yield "writing to", target
            if into_folder or target.endswith("/") or os.path.isdir(os.path.join(cwd, target)):
                for source in sources:
                    yield "writing to", os.path.join(target, os.path.basename(source.rstrip("/")))
    elif name in ("rm", "rmdir", "unlink", "shred", "truncate", "touch"):
        values = frozenset(
            {"-s", "--size", "-r", "--reference", "-d", "--date", "-t"}
            if name in ("truncate", "touch")
            else ()
        )
        yield from ((_VERBS.get(name, "deleting"), p) for p in _operands(args, values))
    elif name in ("sed", "perl"):
        yield from (("editing", p) for p in _in_place_files(args) or ())
    elif name == "dd":
        yield from (("writing to", a[3:]) for a in args if a.startswith("of="))
    elif name == "curl":
        yield from (("writing to", p) for p in _option_value(args, "-o", "--output"))
    elif name == "wget":
        yield from (("writing to", p) for p in _option_value(args, "-O", "--output-document"))


def _recursive(cmd: Any) -> bool:
    if cmd.name == "mv":
        return True
    return cmd.name == "rm" and any(
        a in ("--recursive",) or (a.startswith("-") and not a.startswith("--") and set(a[1:]) & {"r", "R"})
        for a in cmd.argv[1:]
    )


def bash_violation(guard: Guard, command: str) -> tuple[str, str, str] | None:
    """``(verb, path, why)`` for the first protected path ``command`` writes, or None."""
    try:
        commands = _shell.split_commands(command)
    except _shell.UnparseableCommand as exc:
        token = guard.mentions(command)
        if token is None:
            return None
        return (
            "running an unparseable command that mentions",
            token,
            f"the command could not be checked ({exc})",
        )
    for cmd in commands:
        if cmd.dynamic:  # `w=tee; echo x | $w .env`: what runs is only known at run time
            token = guard.mentions(command)
            if token is not None:
                return (
                    "running a command computed at run time that mentions",
                    token,
                    f"what {cmd.name} runs cannot be checked",
                )
        for verb, path in written_paths(cmd, guard.cwd):
            if _shell.SUBSTITUTION in path:
                path = path.replace(_shell.SUBSTITUTION, "*")
            candidates = [path]
            if _GLOB.search(path):
                candidates += glob.glob(os.path.join(guard.cwd, os.path.expanduser(path)))
            for candidate in candidates:
                why = guard.why(candidate)
                if why:
                    return verb, candidate, why
                if _recursive(cmd):
                    inside = guard.protected_inside(candidate)
                    if inside:
                        return (
                            verb,
                            candidate,
                            f'it holds the protected "{os.path.relpath(inside, guard.cwd)}"',
                        )
    return None


def _shown(guard: Guard, path: str) -> str:
    absolute = os.path.normpath(os.path.join(guard.cwd, os.path.expanduser(path)))
    rel = os.path.relpath(absolute, guard.cwd)
    return absolute if rel.startswith("..") else rel


def register(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    def guard_writes(event: Event, ctx: ExtensionContext) -> dict[str, Any] | None:
        if event.tool_name not in ("write", "edit", "bash"):
            return None
        patterns = _settings.read_settings(ctx).get("protectedPaths") or []
        guard = Guard(ctx.cwd, patterns if isinstance(patterns, list) else [])
        if event.tool_name == "bash":
            found = bash_violation(guard, str(event.input.get("command", "")))
            if found is None:
                return None
            verb, path, why = found
        else:
            path = str(event.input.get("path", "")).removeprefix("@")
            why = guard.why(path) if path else None
            if why is None:
                return None
            verb = "writing to" if event.tool_name == "write" else "editing"
        return {
            "block": True,
            "reason": (
                f'Blocked by protected_paths: {verb} "{_shown(guard, path)}" is not allowed because {why}. '
                f"The user protects this path; do not try to change it another way. If the task needs it, "
                f"tell the user what to change there."
            ),
        }
