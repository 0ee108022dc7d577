"""Which simple commands a bash command line runs: shared by the bundled guard extensions.

Not an extension (the leading underscore keeps discovery away); the guards load it with
``runpy.run_path`` next to their own file. It answers one question, conservatively: given the text the
``bash`` tool will run, what programs run with which arguments, and which files are redirected to?

The line is parsed by **tree-sitter-bash** (the grammar editors use; a dependency of pi-tui), so quoting,
escapes, ``$(…)``, backticks, process substitutions, heredocs, ``case``/``if``/loops, functions and
redirections are read as bash reads them. On top of the syntax tree this module:

- evaluates words: quotes and escapes removed (``r''m``, ``\\rm``, ``"rm"``, ``$'\\x72m'`` are ``rm``);
  variables assigned a literal earlier on the line are substituted (``r=rm; $r -rf v`` runs ``rm``);
  an unknown variable becomes `VARIABLE` and the output of a ``$(…)`` `SUBSTITUTION`, so a guard can
  see that a command's *name* is not a literal;
- parses ``$(…)``, backticks, ``<(…)``/``>(…)`` (also inside strings and unquoted heredocs) as commands
  of their own;
- takes wrappers off: ``env``, ``command``, ``builtin``, ``exec``, ``nice``, ``nohup``, ``time``,
  ``timeout``, ``stdbuf``, ``ionice``, ``setsid``, ``busybox``, ``sudo``/``doas``, ``xargs``; absolute
  paths (``/bin/rm``) and ``VAR=x`` prefixes;
- parses ``sh -c``/``bash -c``/``su -c``/``eval`` strings again, and ``env -S`` and ``find -exec``;
- records what a command reads on stdin (a heredoc or here-string body, or a pipe).

A line bash would reject (unbalanced quotes, a stray ``)``) raises `UnparseableCommand`; callers fail
closed on it.
"""

from __future__ import annotations

import codecs
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SimpleCommand",
    "UnparseableCommand",
    "split_commands",
    "computed",
    "SHELLS",
    "SUBSTITUTION",
    "VARIABLE",
]

SUBSTITUTION = "$(…)"
"""Stands for the output of a ``$(…)``, backticks or ``<(…)`` in a word (the inner command is parsed on its
own). Printable, so messages can show it; a literal ``$(…)`` in quotes only makes the guards more careful."""
VARIABLE = "${…}"
"""Stands for a variable (or arithmetic) whose value is not known before the line runs."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"})
MAX_DEPTH = 8

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_PREFIX_WORDS = frozenset({"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until"})
_END_WORDS = frozenset({"}", "fi", "done", "esac", "then", "do", "else"})
_REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_DYNAMIC_NAME = re.compile(r"[*?]|\{.*,.*\}|\[.+\]")


class UnparseableCommand(ValueError):
    """The command line could not be followed (unbalanced quotes or parentheses, nesting too deep)."""


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One program run by a command line.

    Attributes:
        argv: The program and its arguments, after ``VAR=x`` prefixes and wrappers were taken off; the
            program is a bare name (``/bin/rm`` and ``\\rm`` become ``rm``). What is computed at run
            time is `SUBSTITUTION` or `VARIABLE`.
        redirects: ``(operator, target)`` pairs such as ``(">", "out.txt")`` (fd duplications like
            ``2>&1`` and heredoc delimiters are left out).
        wrappers: The wrappers it ran under, outermost first (``("sudo", "xargs")``).
        stdin_script: A shell run without ``-c`` or a script: it executes whatever arrives on stdin.
        stdin_text: The heredoc or here-string it reads, when it reads one.
        piped: Its stdin is the previous command of a pipeline.
    """

    argv: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()
    wrappers: tuple[str, ...] = ()
    stdin_script: bool = False
    stdin_text: str | None = None
    piped: bool = False

    @property
    def name(self) -> str:
        return self.argv[0] if self.argv else ""

    @property
    def text(self) -> str:
        """The command as one line (for pattern matching and messages)."""
        return " ".join(self.argv)

    @property
    def dynamic(self) -> bool:
        """Its program is not a literal: a variable, a ``$(…)``, a glob or a brace expansion."""
        return bool(self.argv) and (computed(self.name) or bool(_DYNAMIC_NAME.search(self.name)))


def computed(word: str) -> bool:
    """Whether ``word`` holds a part only known at run time (`SUBSTITUTION` or `VARIABLE`)."""
    return SUBSTITUTION in word or VARIABLE in word


def split_commands(text: str) -> list[SimpleCommand]:
    """Every simple command ``text`` runs, in order (substitutions after the command holding them).

    Raises:
        UnparseableCommand: Bash would reject the line, or it nests deeper than 8.
    """
    return list(_commands(text, 0))


# --- parsing ---------------------------------------------------------------------------------------------

_parser: Any = None


def _parse(text: str) -> Any:
    global _parser
    if _parser is None:
        import tree_sitter
        import tree_sitter_bash

        _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _parser.parse(text.encode("utf-8", "surrogateescape")).root_node


def _commands(text: str, depth: int) -> Iterator[SimpleCommand]:
    if depth > MAX_DEPTH:
        raise UnparseableCommand("commands nested too deeply")
    root = _parse(text)
    if root.has_error:
        raise UnparseableCommand(_diagnose(text))
    walker = _Walker(depth)
    walker.vars, walker.ifs_changed = _literal_variables(root, depth)
    walker.statement(root)
    yield from walker.out


def _literal_variables(root: Any, depth: int) -> tuple[dict[str, str], bool]:
    """The variables a line sets once, to a literal, and touches nowhere else (``r=rm; $r -rf v``), and
    whether it assigns ``IFS``. A variable also set by a loop, ``read``, ``printf -v``, a second assignment
    or anything else is left out: its value is only known at run time."""
    assignments: dict[str, list[Any]] = {}
    mentions: dict[str, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "variable_assignment":
            name = node.child_by_field_name("name")
            if name is not None:
                assignments.setdefault(_text(name), []).append(node)
        elif node.type in ("variable_name", "word") and node.parent is not None:
            if node.parent.type not in ("variable_assignment", "simple_expansion", "expansion"):
                mentions[_text(node)] = mentions.get(_text(node), 0) + 1
        stack.extend(node.children)
    scratch = _Walker(depth)  # values are evaluated without variables, and their side effects dropped
    found: dict[str, str] = {}
    for name, nodes in assignments.items():
        value_node = nodes[0].child_by_field_name("value")
        if len(nodes) != 1 or mentions.get(name) or value_node is None:
            continue
        value = scratch.word(value_node)
        if not computed(value):
            found[name] = value
    return found, "IFS" in assignments


def _diagnose(text: str) -> str:
    """Why bash would reject ``text``, in the words of the most likely cause."""
    quote, depth, i = "", 0, 0
    while i < len(text):
        c = text[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif quote:
            quote = "" if c == quote else quote
        elif c in "'\"`":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;&|"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        i += 1
    names = {"'": "unterminated single quote", '"': "unterminated double quote", "`": "unterminated backtick"}
    if quote:
        return names[quote]
    if depth:
        return "unbalanced parentheses"
    return "a syntax error bash would reject"


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "surrogateescape")


def _unescape(word: str) -> str:
    """An unquoted word's backslashes: ``\\x`` is ``x``, a backslash-newline disappears."""
    return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), word, flags=re.S)


class _Walker:
    """Turns a syntax tree into `SimpleCommand`s (``out``), remembering literal variable values."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.vars: dict[str, str] = {}
        self.ifs_changed = False
        self.out: list[SimpleCommand] = []
        self.later: list[Any] = []  # substitutions, walked after the command holding them

    def statement(self, node: Any, *, piped: bool = False) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, [], piped=piped)
        elif kind == "redirected_statement":
            self.redirected(node, piped=piped)
        elif kind == "pipeline":
            first = True
            for child in node.named_children:
                self.statement(child, piped=not first or piped)
                first = False
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind in _SUBSTITUTIONS:
            self.substitution(node)
        elif kind in _REDIRECT_NODES:
            self.emit_redirects_only(node)
        else:
            for child in node.named_children:
                if child.type in ("word", "string", "concatenation", "simple_expansion", "expansion"):
                    self.word(child)  # a loop's list, a case subject: only their substitutions matter
                else:
                    self.statement(child)
        self.flush()

    def flush(self) -> None:
        while self.later:
            self.statement(self.later.pop(0))

    def assignment(self, node: Any) -> None:
        value_node = node.child_by_field_name("value")
        if value_node is not None:
            self.word(value_node)  # only for the substitutions it runs; values come from _literal_variables

    def substitution(self, node: Any) -> None:
        inner = [c for c in node.named_children]
        walker = _Walker(self.depth + 1)
        walker.vars, walker.ifs_changed = self.vars, self.ifs_changed
        if self.depth + 1 > MAX_DEPTH:
            raise UnparseableCommand("commands nested too deeply")
        for child in inner:
            walker.statement(child)
        self.out += walker.out

    def redirected(self, node: Any, *, piped: bool) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type in _REDIRECT_NODES]
        if body is not None and body.type == "command":
            self.command(body, redirects, piped=piped)
            return
        self.emit_redirects_only(*redirects)
        if body is not None:
            self.statement(body, piped=piped)

    def emit_redirects_only(self, *redirect_nodes: Any) -> None:
        redirects, _, _ = self.redirects(list(redirect_nodes))
        if redirects:
            self.out.append(SimpleCommand((), tuple(redirects)))

    def redirects(self, nodes: list[Any]) -> tuple[list[tuple[str, str]], str | None, list[Any]]:
        """``(operator, target)`` pairs, the stdin text, and statements hanging off a heredoc
        (``cat <<EOF | sh``: the ``| sh`` part)."""
        out: list[tuple[str, str]] = []
        stdin: str | None = None
        hanging: list[Any] = []
        for node in nodes:
            if node.type == "file_redirect":
                op = next((_text(c) for c in node.children if not c.is_named), "")
                target_node = node.child_by_field_name("destination") or (
                    node.named_children[-1] if node.named_children else None
                )
                target = self.word(target_node) if target_node is not None else ""
                duplicating = op in (">&", "<&") and (target.isdigit() or target.rstrip("-") == "")
                if not duplicating:
                    out.append((op, target))
            elif node.type == "herestring_redirect":
                stdin = "".join(self.word(c) for c in node.named_children)
            elif node.type == "heredoc_redirect":
                for child in node.named_children:
                    if child.type == "heredoc_body":
                        stdin = _text(child)
                        for sub in _descendants(child, _SUBSTITUTIONS):
                            self.later.append(sub)
                    elif child.type == "file_redirect":
                        more, _, _ = self.redirects([child])
                        out += more
                    elif child.type not in ("heredoc_start", "heredoc_end"):
                        hanging.append(child)
        return out, stdin, hanging

    def command(self, node: Any, outer: list[Any], *, piped: bool) -> None:
        words: list[str] = []
        redirect_nodes = list(outer)
        for child in node.named_children:
            if child.type == "variable_assignment":
                value = child.child_by_field_name("value")
                if value is not None:
                    self.word(value)  # `X=$(rm -rf v) true` runs the substitution
            elif child.type in _REDIRECT_NODES:
                redirect_nodes.append(child)
            elif child.type == "command_name":
                words.append("".join(self.word(c) for c in child.named_children) or _text(child))
            elif child.type != "comment":
                words.append(self.word(child))
        redirects, stdin, hanging = self.redirects(redirect_nodes)
        for i, command in enumerate(_expand(words, redirects, (), self.depth)):
            # Only the command itself reads the heredoc or the pipe, not what its `sh -c` string runs.
            self.out.append(_with_stdin(command, stdin, piped) if i == 0 else command)
        for child in hanging:
            self.statement(child, piped=True)
        self.flush()

    def word(self, node: Any, *, quoted: bool = False) -> str:
        """The value of a word as bash would pass it (run-time parts become `SUBSTITUTION`/`VARIABLE`)."""
        kind = node.type
        if kind == "word":
            return _unescape(_text(node))
        if kind == "raw_string":
            return _text(node)[1:-1]
        if kind == "ansi_c_string":
            try:
                return codecs.decode(
                    _text(node)[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape"
                )
            except (UnicodeDecodeError, ValueError):
                return VARIABLE
        if kind in ("simple_expansion", "expansion"):
            names = [c for c in node.named_children if c.type in ("variable_name", "special_variable_name")]
            plain = len(node.named_children) == 1 and names and names[0].type == "variable_name"
            if plain and _text(names[0]) in self.vars:
                value = self.vars[_text(names[0])]
                # Unquoted, bash splits the value into words (`c="rm -rf v"; $c`): not one literal word.
                if quoted or not (self.ifs_changed or re.search(r"\s", value)):
                    return value
            for sub in _descendants(node, _SUBSTITUTIONS):
                self.substitution(sub)
            return VARIABLE
        if kind in _SUBSTITUTIONS:
            self.substitution(node)
            return SUBSTITUTION
        if kind == "arithmetic_expansion":
            return VARIABLE
        if kind in ("string", "translated_string"):
            return self.joined(node, quoted=True)
        if kind == "concatenation":
            return self.joined(node, quoted=False)
        if kind == "string_content":
            return re.sub(r"\\([$`\"\\\n])", lambda m: "" if m.group(1) == "\n" else m.group(1), _text(node))
        for sub in _descendants(node, _SUBSTITUTIONS):
            self.substitution(sub)
        return _text(node)

    def joined(self, node: Any, *, quoted: bool) -> str:
        """A string or concatenation: its parts, and the text between them (quotes dropped)."""
        parts: list[str] = []
        pos = node.start_byte
        source = node.text
        base = node.start_byte
        for child in node.children:
            gap = source[pos - base : child.start_byte - base].decode("utf-8", "surrogateescape")
            parts.append(gap if quoted else _unescape(gap))
            if child.is_named:
                parts.append(self.word(child, quoted=quoted))
            elif child.type not in ('"', '$"'):
                parts.append(_text(child))
            pos = child.end_byte
        parts.append(source[pos - base :].decode("utf-8", "surrogateescape"))
        return "".join(parts)


def _descendants(node: Any, kinds: frozenset[str]) -> Iterator[Any]:
    """The outermost descendants of ``node`` of the given kinds."""
    for child in node.named_children:
        if child.type in kinds:
            yield child
        else:
            yield from _descendants(child, kinds)


def _with_stdin(command: SimpleCommand, stdin: str | None, piped: bool) -> SimpleCommand:
    if stdin is None and not piped:
        return command
    return SimpleCommand(
        command.argv, command.redirects, command.wrappers, command.stdin_script, stdin, piped
    )


# --- taking wrappers off -----------------------------------------------------------------------------------


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
        if computed(script):  # `sh -c "$cmd"`, `eval "$(…)"`: the script is only known at run time
            yield SimpleCommand((SUBSTITUTION,), (), (*wrappers, name))
            continue
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
    "watch": {"-n", "--interval", "-q", "--equexit"},
    "flock": {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"},
    "chroot": {"--userspec", "--groups"},
    "taskset": set(),
    "chrt": set(),
    "unshare": set(),
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
    if name in ("timeout", "flock", "chroot", "taskset", "chrt") and rest:
        rest = rest[1:]  # the duration, the lock file, the new root, the CPU mask, the priority
    if name == "watch" and len(rest) == 1:
        return _words(rest[0])  # `watch "rm -rf v"`: one string, run by sh -c
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


def _words(script: str) -> list[str]:
    try:
        return shlex.split(script)
    except ValueError as exc:
        raise UnparseableCommand(str(exc)) from exc


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
