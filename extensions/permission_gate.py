"""Permission gate: asks the user before the model runs a destructive bash command.

Enable: ``pi-tui -e permission_gate``, or ``"extensions": ["bundled:permission_gate"]`` in settings.

Threat model: the gate stops accidents and careless models; the rewind checkpoints are the safety net.
Neither is a sandbox: a determined program can always hide what it does (a script file it wrote, a
binary, the network).

What counts as destructive (checked on every command the line runs, see below):
- deleting trees: ``rm -r`` (any spelling), ``rm`` fed by ``xargs`` or ``find -exec``, ``find -delete``,
  ``shred``, ``rsync --delete``/``--remove-source-files``, ``tar --remove-files``;
- git that loses work: ``reset --hard``, ``push --force``/``-f``/``--force-with-lease``/``+refspec``/
  ``--delete``/``--mirror``, ``clean -f``, ``checkout -- <paths>``/``checkout .``, ``restore`` of the
  worktree, ``switch --discard-changes``, ``branch -D``, ``stash drop``/``clear``, ``filter-branch``;
- content neither git nor the checkpoints bring back cheaply: ``truncate``, ``cp``/``cat`` from
  ``/dev/null`` or ``/dev/zero``, ``dd of=…``, ``>``/``tee`` onto a file git tracks, ``mv`` out of the
  project or onto an existing file, ``ln -f`` onto an existing file;
- what cannot be checked: a program whose name is computed at run time (``$r``, ``$(…)``, globs, word
  splitting; a variable set once to a literal on the same line is followed, so ``r=rm; $r -rf v`` is seen
  as ``rm``), ``alias``/``hash -p``,
  ``sh -c``/``eval`` of a string computed at run time, ``source <(…)``, an interpreter running inline
  code that deletes, writes or starts programs (``python -c``, ``perl -e``, ``ruby -e``, ``node -e``,
  ``php -r``, ``awk 'system(…)'``, also as a heredoc) or code piped into it, a shell reading a pipe;
- disks and permissions: ``mkfs*``, ``wipefs``, ``fdisk``, ``parted``, redirects to ``/dev/sd*``,
  ``chmod -R 777``/``000``, ``chown -R``; ``sudo``/``doas``/``su``/``pkexec``.

Not asked (users leave tools that nag): a plain ``rm`` of files, ``>`` onto an untracked file,
``git stash``, ``python script.py``, ``python -c 'print(…)'``, moves inside the project.

Commands are parsed by the shared ``_shell`` module (tree-sitter-bash): ``;``/``&&``/``||``/``|``/
newline chains, ``$(…)`` and backticks, ``sh -c``/``bash -c``/``eval``, quoting (``r''m``, ``"rm"``),
``\\rm``, ``command rm``, ``env rm``, ``/bin/rm``, ``sudo``/``xargs``/``timeout``/``nice`` wrappers,
``--`` and reordered or combined flags are all seen through. A line bash would reject is treated as
destructive (fail closed).

Settings (``settings.json``)::

    "permissionGate": {
      "patterns": ["\\\\bkubectl\\\\s+delete\\\\b", {"pattern": "npm publish", "reason": "publishes a package"}],
      "noUi": "deny"
    }

``patterns`` are regular expressions (an invalid one is matched literally), added to the built-in rules;
each is tried on the raw command line and on every command it runs (unquoted, wrappers removed).
``noUi``: what happens where nobody can be asked (print and JSON modes): ``"deny"`` (default) blocks the
command and tells the model why; ``"allow"`` lets it run. With a UI the user is asked through
``ctx.ui.confirm``; a refusal blocks the call with the reason shown to the model.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

_here = Path(__file__).parent
_shell = SimpleNamespace(**runpy.run_path(str(_here / "_shell.py")))
_settings = SimpleNamespace(**runpy.run_path(str(_here / "_settings.py")))

MAX_SHOWN = 400

# --- flags -------------------------------------------------------------------------------------------


def _options(args: tuple[str, ...]) -> tuple[set[str], list[str]]:
    """Short flags (letters of every ``-xyz`` cluster) plus long options, and the operands.

    Everything after ``--`` is an operand.
    """
    flags: set[str] = set()
    operands: list[str] = []
    after_dashes = False
    for arg in args:
        if after_dashes or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg == "--":
            after_dashes = True
        elif arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        else:
            flags.update(f"-{letter}" for letter in arg[1:])
    return flags, operands


# --- the rules: each returns why a command is destructive, or None -----------------------------------

Rule = Callable[[Any], "str | None"]

_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})


def _git_subcommand(argv: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in _GIT_VALUE_OPTIONS else 1
    return (argv[i], argv[i + 1 :]) if i < len(argv) else ("", ())


def rule_rm(cmd: Any) -> str | None:
    if cmd.name != "rm":
        return None
    flags, _ = _options(cmd.argv[1:])
    if flags & {"-r", "-R", "--recursive"}:
        return "rm -r deletes whole directory trees"
    if {"xargs", "find"} & set(cmd.wrappers):
        return "rm fed by xargs/find deletes every file the pipeline lists"
    return None


def rule_find(cmd: Any) -> str | None:
    if cmd.name == "find" and "-delete" in cmd.argv:
        return "find -delete deletes every match"
    return None


def rule_git(cmd: Any) -> str | None:
    if cmd.name != "git":
        return None
    sub, args = _git_subcommand(cmd.argv)
    flags, operands = _options(args)
    if sub == "reset" and flags & {"--hard", "--merge", "--keep"}:
        return "git reset --hard discards uncommitted changes"
    if sub == "push":
        forced = flags & {"-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror"}
        if forced or any(o.startswith("+") for o in operands):
            return "git push --force rewrites the remote's history"
        if flags & {"-d", "--delete"} or any(o.startswith(":") for o in operands):
            return "git push --delete deletes remote branches"
    if sub == "clean" and flags & {"-f", "--force"} and not flags & {"-n", "--dry-run"}:
        return "git clean -f deletes untracked files"
    if sub == "checkout" and ("--" in args or "." in operands or flags & {"-f", "--force"}):
        return "git checkout -- <paths> discards uncommitted changes"
    if sub == "restore" and (not flags & {"-S", "--staged"} or flags & {"-W", "--worktree"}):
        return "git restore discards uncommitted changes"
    if sub == "switch" and flags & {"--discard-changes", "-f", "--force"}:
        return "git switch --discard-changes discards uncommitted changes"
    if sub == "branch" and ("-D" in flags or (flags & {"-d", "--delete"} and flags & {"-f", "--force"})):
        return "git branch -D deletes a branch even if it is not merged"
    if sub == "stash" and operands[:1] in (["drop"], ["clear"]):
        return "git stash drop/clear deletes stashed changes"
    if sub in ("filter-branch", "filter-repo"):
        return f"git {sub} rewrites history"
    if any(a.startswith("alias.") and "!" in a for a in cmd.argv) or (
        sub == "config" and any(a.startswith("!") for a in args)
    ):
        return "a git alias starting with ! runs any shell command, which cannot be checked"
    if (
        sub == "reflog"
        and operands[:1] == ["expire"]
        or sub == "gc"
        and any(a.startswith("--prune=") and a != "--prune=2.weeks.ago" for a in args)
    ):
        return "git reflog expire / gc --prune drops what git could otherwise recover"
    return None


_DISK_TOOLS = {"wipefs", "fdisk", "sfdisk", "parted", "mkswap", "mke2fs"}
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|mapper/|loop)")


def world_writable(mode: str) -> bool:
    """``777``, ``0666``, ``o+w``, ``a=rwx``…: a mode that lets everyone write."""
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return bool(int(mode[-1]) & 2)
    for clause in mode.split(","):
        match = re.fullmatch(r"([ugoa]*)([+=])([rwxXst]*)", clause)
        if match and "w" in match.group(3) and {"o", "a"} & set(match.group(1)):
            return True
    return False


def rule_disks(cmd: Any) -> str | None:
    if cmd.name == "dd" and any(a.startswith("of=") for a in cmd.argv[1:]):
        return "dd of=… overwrites its target byte by byte"
    if cmd.name.startswith("mkfs") or cmd.name in _DISK_TOOLS:
        return f"{cmd.name} formats or repartitions a disk"
    if cmd.name == "shred":
        return "shred destroys files beyond recovery"
    for op, target in cmd.redirects:
        if ">" in op and _DEVICE.match(target):
            return f"writing to {target} overwrites a disk"
    return None


def rule_permissions(cmd: Any) -> str | None:
    if cmd.name == "chmod":
        flags, operands = _options(cmd.argv[1:])
        if flags & {"-R", "--recursive"} and any(world_writable(o) for o in operands[:1]):
            return "chmod -R 777 makes a whole tree writable by everyone"
    if cmd.name == "rsync":
        flags, _ = _options(cmd.argv[1:])
        if any(f.startswith("--delete") for f in flags):
            return "rsync --delete deletes files at the destination"
    return None


_ROOT = ("sudo", "doas", "su", "pkexec")


def rule_root(cmd: Any) -> str | None:
    for name in (*cmd.wrappers, cmd.name):
        if name in _ROOT:
            return f"{name} runs commands as root"
    return None


def rule_stdin_shell(cmd: Any) -> str | None:
    if cmd.stdin_script:
        return f"{cmd.name} runs whatever is piped into it, which cannot be checked"
    return None


# --- run-time programs and inline code ------------------------------------------------------------------

_SUBST = _shell.SUBSTITUTION
_computed = _shell.computed


def rule_dynamic(cmd: Any) -> str | None:
    if cmd.argv == (_SUBST,) and cmd.wrappers:  # what _shell yields for `sh -c "$cmd"`
        return f"{cmd.wrappers[-1]} runs a script that is only known at run time, so it cannot be checked"
    if cmd.dynamic:
        return f"the program it runs ({cmd.name}) is only known at run time, so it cannot be checked"
    if cmd.name == "alias" and any("=" in a for a in cmd.argv[1:]):
        return "alias renames commands, so what the line runs cannot be checked"
    if cmd.name == "hash" and "-p" in cmd.argv:
        return "hash -p renames a program, so what the line runs cannot be checked"
    if cmd.name in ("source", ".") and len(cmd.argv) > 1:
        target = cmd.argv[1]
        if _computed(target) or target in ("/dev/stdin", "-") or target.startswith("/dev/fd/"):
            return f"{cmd.name} runs code that is only known at run time"
    return None


# Interpreter → the options whose next argument (or the rest of a cluster) is inline code.
_INLINE_FLAGS: dict[str, tuple[str, ...]] = {
    "python": ("-c",), "pypy": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"), "bun": ("-e", "--eval", "-p", "--print"),
    "php": ("-r",), "lua": ("-e",), "rscript": ("-e",),
    "osascript": ("-e",), "deno": ("eval",),
}  # fmt: skip
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
# What inline code does to files or processes that git and the checkpoints cannot undo: deleting, overwriting,
# moving, running other programs (which could do anything), and the indirections that hide those.
_CODE_DANGER = re.compile(
    r"rmtree|remove_tree|\brm_r|\brm_rf|\brmdir|rmSync|\brm\s*\(|\bunlink|\bremove\b|truncate|shred|"
    r"\brename|os\.replace|shutil\.move|\bmove\s*\(|FileUtils|"
    r"(?:File|IO|Dir)\.(?:delete|write|open|truncate|unlink|rmdir|binwrite)|"
    r"write_text|write_bytes|writeFile|appendFile|createWriteStream|copyFile|"
    r"\bopen\s*\([^,)]*,\s*(?:mode\s*=\s*)?['\"][^'\"]*[wax+]|\.open\s*\(\s*['\"][^'\"]*[wax+]|"
    r"\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['\"]\s*[>+|]|"
    r"\bsystem\s*\(|\bsystem\s|\bexec[lv]?p?e?\s*[\s(]|popen|"
    r"subprocess|child_process|spawn|execSync|\bqx|`|__import__|importlib|getattr\s*\(|\beval\s*[\s(]|"
    r"\bcompile\s*\(|__builtins__|Deno\.(?:remove|write|truncate|run|Command)|\bchmod|\bchown|\bkill\b"
)
_AWK_DANGER = re.compile(r"system\s*\(|print[^;}]*[|>]|getline[^;}]*<\s*\"[^\"]*\|")


def _interpreter(name: str) -> str | None:
    base = name.lower()
    base = re.sub(r"[0-9.]+$", "", base) or base  # python3.12 → python, nodejs → node
    base = {"nodejs": "node"}.get(base, base)
    return base if base in _INLINE_FLAGS else None


def inline_code(cmd: Any) -> list[str] | None:
    """The code an interpreter runs from its arguments (``python -c CODE``), or None."""
    kind = _interpreter(cmd.name)
    args = list(cmd.argv[1:])
    if cmd.name in _AWK:
        for i, arg in enumerate(args):
            if arg in ("-f", "--file") or arg.startswith("-f"):
                return None
            if arg in ("-v", "-F"):
                continue
            if not arg.startswith("-") and (i == 0 or args[i - 1] not in ("-v", "-F")):
                return [arg]
        return None
    if kind is None:
        return None
    flags = _INLINE_FLAGS[kind]
    code: list[str] = []
    for i, arg in enumerate(args):
        if arg in flags or (arg.startswith("--") and arg.split("=", 1)[0] in flags and "=" in arg):
            if "=" in arg and arg.startswith("--"):
                code.append(arg.split("=", 1)[1])
            elif i + 1 < len(args):
                code.append(args[i + 1])
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            for j, letter in enumerate(arg[1:], start=1):  # clusters: perl -pe CODE, python -Sc CODE
                if f"-{letter}" in flags:
                    rest = arg[j + 1 :]
                    code.append(rest if rest else (args[i + 1] if i + 1 < len(args) else ""))
                    break
    return code or None


def _reads_code_from_stdin(cmd: Any) -> bool:
    kind = _interpreter(cmd.name)
    if kind is None or kind in ("osascript", "deno"):
        return False
    operands = [a for a in cmd.argv[1:] if not a.startswith("-") or a == "-"]
    return not operands or operands[0] == "-"


def _what(found: re.Match[str]) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+$", "", found.group(0))[:24] or found.group(0)[:24]


def rule_inline_code(cmd: Any) -> str | None:
    code = inline_code(cmd)
    danger = _AWK_DANGER if cmd.name in _AWK else _CODE_DANGER
    if code is not None:
        if any(_computed(c) for c in code):
            return f"{cmd.name} runs inline code that is only known at run time"
        for text in code:
            found = danger.search(text)
            if found:
                return f"{cmd.name} runs inline code that can delete or overwrite files ({_what(found)})"
        return None
    if _reads_code_from_stdin(cmd):
        if cmd.stdin_text is not None:
            found = _CODE_DANGER.search(cmd.stdin_text)
            if found:
                return f"{cmd.name} runs code that can delete or overwrite files ({_what(found)})"
        elif cmd.piped:
            return f"{cmd.name} runs whatever code is piped into it, which cannot be checked"
    return None


# --- content that neither git nor the checkpoints bring back cheaply ------------------------------------

_EMPTY_SOURCES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


def rule_overwrites(cmd: Any) -> str | None:
    if cmd.name == "truncate":
        return "truncate cuts files' content"
    if cmd.name in ("cp", "install", "cat") and any(a in _EMPTY_SOURCES for a in cmd.argv[1:]):
        if cmd.name != "cat" or any(">" in op for op, _ in cmd.redirects):
            return f"{cmd.name} from {next(a for a in cmd.argv[1:] if a in _EMPTY_SOURCES)} wipes its target"
    if cmd.name == "rsync" and "--remove-source-files" in cmd.argv:
        return "rsync --remove-source-files deletes the files it copied"
    if cmd.name in ("tar", "bsdtar") and "--remove-files" in cmd.argv:
        return "tar --remove-files deletes the files it archived"
    if cmd.name == "chown":
        flags, _ = _options(cmd.argv[1:])
        if flags & {"-R", "--recursive"}:
            return "chown -R changes the owner of a whole tree"
    if cmd.name == "chmod":
        flags, operands = _options(cmd.argv[1:])
        if (
            flags & {"-R", "--recursive"}
            and operands[:1]
            and re.fullmatch(r"0*|[ugoa]*-rwx|[ugoa]*=", operands[0])
        ):
            return "chmod -R takes every permission away from a whole tree"
    return None


RULES: tuple[Rule, ...] = (
    rule_rm,
    rule_find,
    rule_git,
    rule_disks,
    rule_permissions,
    rule_root,
    rule_stdin_shell,
    rule_dynamic,
    rule_inline_code,
    rule_overwrites,
)


# --- rules that look at the project (only with a cwd) -----------------------------------------------------


def _inside(cwd: str, path: str) -> bool:
    absolute = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    root = os.path.realpath(cwd)
    return absolute == root or absolute.startswith(root.rstrip("/") + "/")


def _tracked(cwd: str, path: str) -> bool:
    """Whether ``path`` is a file git tracks in ``cwd``'s repository (False outside a repository)."""
    full = os.path.join(cwd, os.path.expanduser(path))
    if not os.path.isfile(full):
        return False
    try:
        done = subprocess.run(
            ["git", "ls-files", "--error-unmatch", "--", full],
            cwd=cwd,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def project_reasons(cmd: Any, cwd: str) -> Iterator[str]:
    """Moves out of the project, overwrites of existing or tracked files."""
    for op, target in cmd.redirects:
        if op in (">", ">|", "&>") and not _computed(target) and _tracked(cwd, target):
            yield f"{op} {target} overwrites a file git tracks, losing its uncommitted changes"
    if cmd.name == "tee":
        flags, operands = _options(cmd.argv[1:])
        if not flags & {"-a", "--append"}:
            for target in operands:
                if _tracked(cwd, target):
                    yield f"tee {target} overwrites a file git tracks, losing its uncommitted changes"
    if cmd.name in ("mv", "ln"):
        flags, operands = _options(cmd.argv[1:])
        targets = [a.split("=", 1)[1] for a in cmd.argv if a.startswith("--target-directory=")]
        for i, arg in enumerate(cmd.argv[:-1]):
            if arg in ("-t", "--target-directory"):
                targets.append(cmd.argv[i + 1])
                operands = [o for o in operands if o != cmd.argv[i + 1]]
        if not targets and len(operands) >= 2:
            targets = [operands[-1]]
        for target in targets:
            if cmd.name == "mv" and _computed(target):
                yield "mv moves files to a place only known at run time"
            elif cmd.name == "mv" and not _inside(cwd, target):
                yield f"mv moves files out of the project ({target}), beyond git and the checkpoints"
            elif (
                not flags & {"-n", "--no-clobber", "-b", "--backup"}
                and os.path.isfile(os.path.join(cwd, target))
                and (cmd.name == "mv" or flags & {"-f", "--force"})
            ):
                yield f"{cmd.name} replaces the existing file {target}"


# --- configured patterns ------------------------------------------------------------------------------


class Pattern:
    def __init__(self, source: str, reason: str | None = None) -> None:
        try:
            self.regex = re.compile(source)
        except re.error:
            self.regex = re.compile(re.escape(source))
        self.reason = reason or f"it matches the configured pattern {source!r}"


def configured_patterns(settings: dict[str, Any]) -> list[Pattern]:
    patterns: list[Pattern] = []
    for item in settings.get("patterns") or []:
        if isinstance(item, str) and item:
            patterns.append(Pattern(item))
        elif isinstance(item, dict) and isinstance(item.get("pattern"), str) and item["pattern"]:
            reason = item.get("reason")
            patterns.append(Pattern(item["pattern"], str(reason) if reason else None))
    return patterns


def destructive_reasons(command: str, patterns: Sequence[Pattern] = (), cwd: str | None = None) -> list[str]:
    """Why ``command`` needs approval (empty: it does not). Unparseable input needs approval.

    With ``cwd`` (the project), moves out of it and overwrites of existing or git-tracked files count too.
    """
    try:
        commands = _shell.split_commands(command)
    except _shell.UnparseableCommand as exc:
        return [f"the command could not be parsed ({exc}), so it cannot be checked"]
    reasons = [reason for cmd in commands for reason in _reasons(cmd)]
    if cwd is not None:
        reasons += [reason for cmd in commands for reason in project_reasons(cmd, cwd)]
    texts = [command, *(c.text for c in commands)]
    reasons += [p.reason for p in patterns if any(p.regex.search(t) for t in texts)]
    return list(dict.fromkeys(reasons))


def _reasons(cmd: Any) -> Iterator[str]:
    for rule in RULES:
        reason = rule(cmd)
        if reason:
            yield reason


# --- the extension -------------------------------------------------------------------------------------


def _shown(command: str) -> str:
    command = command.strip()
    return command if len(command) <= MAX_SHOWN else command[:MAX_SHOWN] + " …"


def register(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    async def gate(event: Event, ctx: ExtensionContext) -> dict[str, Any] | None:
        if event.tool_name != "bash":
            return None
        command = str(event.input.get("command", ""))
        settings = _settings.section(ctx, "permissionGate")
        reasons = destructive_reasons(command, configured_patterns(settings), ctx.cwd)
        if not reasons:
            return None
        why = "; ".join(reasons)
        if not ctx.has_ui:
            if str(settings.get("noUi", "deny")).lower() == "allow":
                return None
            return {
                "block": True,
                "reason": (
                    f"Blocked by permission_gate: {why}. Destructive commands need the user's approval, and "
                    f"nobody can be asked in {ctx.mode} mode. Do not retry it in another form; find a "
                    f"non-destructive way, or tell the user which command to run themselves."
                ),
            }
        allowed = await ctx.ui.confirm("Allow a destructive command?", f"{_shown(command)}\n\nWhy: {why}")
        if allowed:
            return None
        return {
            "block": True,
            "reason": (
                f"Blocked by permission_gate: the user declined this command ({why}). Do not retry it in "
                f"another form; ask the user how to proceed."
            ),
        }
