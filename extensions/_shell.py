"""Which simple commands a bash command line runs: shared by the bundled guard extensions.

Not an extension (the leading underscore keeps discovery away); the guards load it with
``runpy.run_path`` next to their own file. It answers one question, conservatively: given the text the
``bash`` tool will run, what programs run with which arguments, and which files are redirected to?

Why not ``shlex.split`` alone: shlex has POSIX quoting right, and this tokenizer follows the same rules,
but shlex treats newlines as blanks (bash separates commands on them), cuts words at ``#`` anywhere (bash
only at a word's start), cannot tell ``2>file`` from ``2 >file``, and does not see ``$(…)``, backticks or
heredocs. Those are exactly where bypasses hide, so the tokenizer below handles them.

What it sees through:
- separators ``;`` ``&&`` ``||`` ``|`` ``&`` newlines, subshells ``( … )`` and groups ``{ …; }``;
- ``$(…)``, backticks, ``<(…)``/``>(…)`` (also inside double quotes and unquoted heredocs), parsed as
  commands of their own;
- quoting and escapes (``r''m``, ``\\rm``, ``"rm"``), absolute paths (``/bin/rm``), ``VAR=x`` prefixes;
- wrappers: ``env``, ``command``, ``builtin``, ``exec``, ``nice``, ``nohup``, ``time``, ``timeout``,
  ``stdbuf``, ``ionice``, ``setsid``, ``busybox``, ``sudo``/``doas``, ``xargs``;
- ``sh -c``/``bash -c``/``su -c``/``eval`` (the string is parsed again), ``env -S`` and ``find -exec``.

Anything it cannot follow raises `UnparseableCommand`; callers fail closed on it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["SimpleCommand", "UnparseableCommand", "split_commands", "SHELLS", "SUBSTITUTION"]

SUBSTITUTION = "\x00subst\x00"
"""Stands for the output of a ``$(…)`` in a word (the inner command is parsed separately)."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"})
MAX_DEPTH = 8

_SEPARATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "(", ")", "\n")
_REDIRECTS = ("&>>", "&>", ">>", ">&", ">|", "<<<", "<<-", "<<", "<&", "<>", ">", "<")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_PREFIX_WORDS = frozenset({"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until"})
_END_WORDS = frozenset({"}", "fi", "done", "esac", "then", "do", "else"})


class UnparseableCommand(ValueError):
    """The command line could not be followed (unbalanced quotes or parentheses, nesting too deep)."""


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One program run by a command line.

    Attributes:
        argv: The program and its arguments, after ``VAR=x`` prefixes and wrappers were taken off; the
            program is a bare name (``/bin/rm`` and ``\\rm`` become ``rm``).
        redirects: ``(operator, target)`` pairs such as ``(">", "out.txt")`` (fd duplications like
            ``2>&1`` and heredoc delimiters are left out).
        wrappers: The wrappers it ran under, outermost first (``("sudo", "xargs")``).
        stdin_script: A shell run without ``-c`` or a script: it executes whatever arrives on stdin.
    """

    argv: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()
    wrappers: tuple[str, ...] = ()
    stdin_script: bool = False

    @property
    def name(self) -> str:
        return self.argv[0] if self.argv else ""

    @property
    def text(self) -> str:
        """The command as one line (for pattern matching and messages)."""
        return " ".join(self.argv)


@dataclass(slots=True)
class _Token:
    kind: str  # "word", "sep", "redir"
    value: str


@dataclass(slots=True)
class _Lexed:
    tokens: list[_Token] = field(default_factory=list)
    substitutions: list[str] = field(default_factory=list)


def split_commands(text: str) -> list[SimpleCommand]:
    """Every simple command ``text`` runs, in order (substitutions after the command holding them).

    Raises:
        UnparseableCommand: Unbalanced quotes, parentheses or backticks, or nesting deeper than 8.
    """
    return list(_commands(text, 0))


def _commands(text: str, depth: int) -> Iterator[SimpleCommand]:
    if depth > MAX_DEPTH:
        raise UnparseableCommand("commands nested too deeply")
    lexed = _Lexer(text).run()
    for words, redirects in _group(lexed.tokens):
        yield from _expand(words, redirects, (), depth)
    for inner in lexed.substitutions:
        yield from _commands(inner, depth + 1)


# --- tokenizing --------------------------------------------------------------------------------------


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.out = _Lexed()
        self.word: list[str] = []
        self.in_word = False
        self.quoted = False
        self.heredocs: list[tuple[str, bool, bool]] = []  # delimiter, strip tabs, expands
        self.expect_heredoc_word: str | None = None

    def run(self) -> _Lexed:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in " \t\r":
                self.end_word()
                self.i += 1
            elif c == "\n":
                self.end_word()
                self.out.tokens.append(_Token("sep", "\n"))
                self.i += 1
                self.read_heredoc_bodies()
            elif c == "#" and not self.in_word:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif c == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2
                else:
                    self.add(text[self.i + 1] if self.i + 1 < len(text) else "\\", quoted=True)
                    self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise UnparseableCommand("unterminated single quote")
                self.add(text[self.i + 1 : end], quoted=True)
                self.i = end + 1
            elif c == '"':
                self.double_quoted()
            elif c == "$" and text.startswith("$(", self.i):
                self.substitution(self.i + 2)
            elif c == "`":
                self.backtick()
            elif c in "<>" and text.startswith("(", self.i + 1) and not self.in_word:
                self.substitution(self.i + 2)
            elif c in ";&|()<>":
                self.operator()
            else:
                self.add(c)
                self.i += 1
        self.end_word()
        if self.expect_heredoc_word is not None:
            raise UnparseableCommand("a heredoc without a delimiter")
        return self.out

    def add(self, chars: str, *, quoted: bool = False) -> None:
        self.word.append(chars)
        self.in_word = True
        self.quoted = self.quoted or quoted

    def end_word(self) -> None:
        if not self.in_word:
            return
        value = "".join(self.word)
        if self.expect_heredoc_word is not None:
            op = self.expect_heredoc_word
            self.heredocs.append((value, op == "<<-", not self.quoted))
            self.expect_heredoc_word = None
        self.out.tokens.append(_Token("word", value))
        self.word, self.in_word, self.quoted = [], False, False

    def double_quoted(self) -> None:
        text, i = self.text, self.i + 1
        self.add("", quoted=True)
        while i < len(text):
            c = text[i]
            if c == '"':
                self.i = i + 1
                return
            if c == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if nxt == "\n":
                    i += 2
                    continue
                self.add(nxt if nxt in '$`"\\' else "\\" + nxt)
                i += 2
            elif c == "$" and text.startswith("$(", i):
                i = self.substitution(i + 2, advance=False)
            elif c == "`":
                self.i = i
                self.backtick()
                i = self.i
            else:
                self.add(c)
                i += 1
        raise UnparseableCommand("unterminated double quote")

    def substitution(self, start: int, *, advance: bool = True) -> int:
        end = matching_paren(self.text, start)
        self.out.substitutions.append(self.text[start:end])
        self.add(SUBSTITUTION)
        if advance:
            self.i = end + 1
        return end + 1

    def backtick(self) -> None:
        text, i = self.text, self.i + 1
        inner: list[str] = []
        while i < len(text):
            if text[i] == "\\" and i + 1 < len(text):
                inner.append(text[i + 1] if text[i + 1] in "`$\\" else text[i : i + 2])
                i += 2
            elif text[i] == "`":
                self.out.substitutions.append("".join(inner))
                self.add(SUBSTITUTION)
                self.i = i + 1
                return
            else:
                inner.append(text[i])
                i += 1
        raise UnparseableCommand("unterminated backtick")

    def operator(self) -> None:
        text, i = self.text, self.i
        word = "".join(self.word)
        fd_prefix = self.in_word and not self.quoted and word.isdigit() and text[i] in "<>"
        for op in _REDIRECTS:
            if text.startswith(op, i):
                if fd_prefix:  # `2>file`: the digits belong to the redirection
                    self.word, self.in_word, self.quoted = [], False, False
                else:
                    self.end_word()
                self.out.tokens.append(_Token("redir", op))
                if op in ("<<", "<<-"):
                    self.expect_heredoc_word = op
                self.i = i + len(op)
                return
        self.end_word()
        for op in _SEPARATORS:
            if text.startswith(op, i):
                self.out.tokens.append(_Token("sep", op))
                self.i = i + len(op)
                return
        raise UnparseableCommand(f"unexpected {text[i]!r}")  # pragma: no cover - every char is covered

    def read_heredoc_bodies(self) -> None:
        """After a newline: skip the bodies of the heredocs opened on the previous line."""
        text = self.text
        for delimiter, strip_tabs, expands in self.heredocs:
            body: list[str] = []
            while self.i < len(text):
                end = text.find("\n", self.i)
                line = text[self.i : len(text) if end < 0 else end]
                self.i = len(text) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            if expands:
                self.out.substitutions.extend(_substitutions_in_plain_text("\n".join(body)))
        self.heredocs = []


def matching_paren(text: str, start: int) -> int:
    """The index of the ``)`` closing a ``(`` that opened just before ``start``.

    Raises:
        UnparseableCommand: It is never closed.
    """
    depth, i = 1, start
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise UnparseableCommand("unterminated single quote")
            i = end + 1
            continue
        if c == '"':
            i = _skip_double_quoted(text, i + 1)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise UnparseableCommand("unbalanced parentheses")


def _skip_double_quoted(text: str, i: int) -> int:
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        elif text.startswith("$(", i):
            i = matching_paren(text, i + 2) + 1
        else:
            i += 1
    raise UnparseableCommand("unterminated double quote")


def _substitutions_in_plain_text(body: str) -> list[str]:
    """``$(…)`` and backticks in an unquoted heredoc body (quotes are not special there)."""
    found: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
        elif body.startswith("$(", i):
            end = matching_paren(body, i + 2)
            found.append(body[i + 2 : end])
            i = end + 1
        elif body[i] == "`":
            end = body.find("`", i + 1)
            if end < 0:
                raise UnparseableCommand("unterminated backtick")
            found.append(body[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return found


# --- grouping into commands and taking wrappers off ---------------------------------------------------


def _group(tokens: list[_Token]) -> Iterator[tuple[list[str], list[tuple[str, str]]]]:
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.kind == "sep":
            if words or redirects:
                yield words, redirects
            words, redirects = [], []
        elif token.kind == "redir":
            if i + 1 >= len(tokens) or tokens[i + 1].kind != "word":
                raise UnparseableCommand(f"{token.value} without a target")
            target = tokens[i + 1].value
            i += 1
            duplicating = token.value in (">&", "<&") and (target.isdigit() or target.rstrip("-") == "")
            if token.value not in ("<<", "<<-", "<<<") and not duplicating:
                redirects.append((token.value, target))
        else:
            words.append(token.value)
        i += 1
    if words or redirects:
        yield words, redirects


def _expand(
    words: list[str], redirects: list[tuple[str, str]], wrappers: tuple[str, ...], depth: int
) -> Iterator[SimpleCommand]:
    argv = _strip_prefixes(words)
    wrappers = list(wrappers)
    while argv:
        argv[0] = _program(argv[0])
        name = argv[0]
        unwrapped = _unwrap(argv)
        if not unwrapped:  # not a wrapper, or one with nothing to run (`sudo -s`): it is the command
            break
        wrappers.append(name)
        argv = _strip_prefixes(unwrapped)
    if not argv:
        if redirects:
            yield SimpleCommand((), tuple(redirects), tuple(wrappers))
        return
    name = argv[0]
    if name in _END_WORDS and len(argv) == 1:
        if redirects:
            yield SimpleCommand((), tuple(redirects), tuple(wrappers))
        return
    nested = _nested_scripts(argv)
    stdin_script = name in SHELLS and nested is None and not _shell_has_script(argv)
    yield SimpleCommand(tuple(argv), tuple(redirects), tuple(wrappers), stdin_script)
    for script in nested or ():
        for command in _commands(script, depth + 1):
            yield SimpleCommand(
                command.argv, command.redirects, (*wrappers, name, *command.wrappers), command.stdin_script
            )
    if name == "find":
        for sub in _find_exec(argv):
            yield from _expand(sub, [], (*wrappers, "find"), depth + 1)


def _strip_prefixes(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) and (_ASSIGNMENT.match(words[i]) or words[i] in _PREFIX_WORDS):
        i += 1
    return list(words[i:])


def _program(word: str) -> str:
    """``/usr/bin/rm`` → ``rm``; ``\\rm`` was unescaped by the tokenizer already."""
    return os.path.basename(word.rstrip("/")) if "/" in word else word


# Options that take a value, per wrapper (the value is skipped with the option).
_WRAPPER_VALUE_OPTS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir"},
    "doas": {"-u", "-C"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"},
    "exec": {"-a"},
    "xargs": {
        "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof",
        "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var", "--replace",
    },
}  # fmt: skip
_SIMPLE_WRAPPERS = frozenset({"builtin", "nohup", "setsid", "busybox", "nocorrect", "noglob", "time"})


def _unwrap(argv: list[str]) -> list[str] | None:
    """The wrapped command of a wrapper (``sudo rm -rf x`` → ``rm -rf x``), else None."""
    name = argv[0]
    if name in _SIMPLE_WRAPPERS:
        rest = argv[1:]
        while rest and rest[0].startswith("-") and name != "busybox":
            rest = rest[1:]
        return rest
    if name == "command":
        rest = argv[1:]
        if any(a in ("-v", "-V") for a in rest[:2]):
            return None  # `command -v rm` only looks the name up
        while rest and rest[0] in ("-p", "--"):
            rest = rest[1:]
        return rest
    if name not in _WRAPPER_VALUE_OPTS:
        return None
    value_opts = _WRAPPER_VALUE_OPTS[name]
    rest = argv[1:]
    while rest:
        arg = rest[0]
        if arg == "--":
            rest = rest[1:]
            break
        if name == "env" and _ASSIGNMENT.match(arg):
            rest = rest[1:]
            continue
        if not arg.startswith("-") or arg == "-":
            if name == "env" and arg == "-":
                rest = rest[1:]
                continue
            break
        option = arg.split("=", 1)[0]
        if name == "env" and (option in ("-S", "--split-string") or arg.startswith("-S")):
            return _env_split(arg, rest[1:])
        takes_value = option in value_opts and "=" not in arg
        # A clustered short option whose last letter takes a value (`-un` …) is rare; `-uroot` carries it.
        if takes_value:
            rest = rest[2:]
        else:
            rest = rest[1:]
    if name == "timeout" and rest:
        rest = rest[1:]  # the duration
    if name == "xargs" and not rest:
        return ["echo"]
    return rest


def _shell_has_script(argv: list[str]) -> bool:
    """``bash script.sh`` runs a file; ``bash`` alone (or ``bash -s``) runs stdin."""
    for arg in argv[1:]:
        if arg == "--":
            continue
        if arg.startswith("-") or arg.startswith("+"):
            if arg in ("-s", "--stdin"):
                return False
            continue
        return True
    return False


def _nested_scripts(argv: list[str]) -> list[str] | None:
    """The command strings ``sh -c`` / ``eval`` run, or None."""
    name = argv[0]
    if name == "eval":
        return [" ".join(argv[1:])]
    if name in SHELLS or name == "su":
        for i, arg in enumerate(argv[1:], start=1):
            if arg == "--command" or (
                arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:] and name != "su"
            ):
                return [argv[i + 1]] if i + 1 < len(argv) else [""]
            if name == "su" and arg in ("-c", "--command"):
                return [argv[i + 1]] if i + 1 < len(argv) else [""]
    return None


def _find_exec(argv: list[str]) -> Iterator[list[str]]:
    """The commands of ``find … -exec cmd {} ;`` (and ``-execdir``, ``-ok``, ``-okdir``)."""
    i = 1
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(argv) and argv[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                yield list(argv[i + 1 : j])
            i = j
        i += 1


def _env_split(arg: str, after: list[str]) -> list[str]:
    """``env -S "rm -rf x"``: the string is split into words (no shell operators) and run."""
    if "=" in arg:
        value, rest = arg.split("=", 1)[1], after
    elif arg.startswith("-S") and len(arg) > 2:
        value, rest = arg[2:], after
    elif after:
        value, rest = after[0], after[1:]
    else:
        return []
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise UnparseableCommand(f"env -S: {exc}") from exc
    return _strip_prefixes(words) + rest
