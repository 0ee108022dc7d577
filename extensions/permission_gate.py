"""Permission gate: asks the user before the model runs a destructive bash command.

Enable: ``pi-tui -e permission_gate``, or ``"extensions": ["bundled:permission_gate"]`` in settings.

What counts as destructive (checked on every command the line runs, see below):
``rm -r`` (any spelling: ``-rf``, ``-fr``, ``-r -f``, ``--recursive``), ``rm`` fed by ``xargs`` or
``find -exec``, ``find -delete``, ``git reset --hard``, ``git push --force``/``-f``/``--force-with-lease``/
``+refspec``/``--delete``/``--mirror``, ``git clean -f``, ``git checkout -- <paths>``/``git checkout .``,
``git restore`` of the worktree, ``git switch --discard-changes``, ``git branch -D``,
``git stash drop``/``clear``, ``git filter-branch``, ``dd of=…``, ``mkfs*``, ``wipefs``, ``fdisk``,
``parted``, ``shred``, ``chmod -R 777``, ``rsync --delete``, redirects to ``/dev/sd*`` and other disks,
``sudo``/``doas``/``su``/``pkexec``, and a shell reading commands from a pipe (``curl … | sh``).

Bypasses it sees through (via the shared ``_shell`` parser): ``;``/``&&``/``||``/``|``/newline chains,
``$(…)`` and backticks, ``sh -c``/``bash -c``/``eval``, quoting (``r''m``, ``"rm"``), ``\\rm``,
``command rm``, ``env rm``, ``/bin/rm``, ``sudo``/``xargs``/``timeout``/``nice`` wrappers, ``--`` and
reordered or combined flags. A command line it cannot parse is treated as destructive (fail closed).

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

import re
import runpy
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


RULES: tuple[Rule, ...] = (
    rule_rm,
    rule_find,
    rule_git,
    rule_disks,
    rule_permissions,
    rule_root,
    rule_stdin_shell,
)


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


def destructive_reasons(command: str, patterns: Sequence[Pattern] = ()) -> list[str]:
    """Why ``command`` needs approval (empty: it does not). Unparseable input needs approval."""
    try:
        commands = _shell.split_commands(command)
    except _shell.UnparseableCommand as exc:
        return [f"the command could not be parsed ({exc}), so it cannot be checked"]
    reasons = [reason for cmd in commands for reason in _reasons(cmd)]
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
        reasons = destructive_reasons(command, configured_patterns(settings))
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
