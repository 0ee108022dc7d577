"""Command-line parsing, pi-compatible and import-light.

pi parses its arguments in a hand-written loop: unknown ``--flags`` are kept (an extension may claim them),
a bare word is a message and ``@path`` is a file argument. We do the same, so that ``--help`` and
``--version`` can answer without importing anything heavy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Args", "parse_args", "resolve_flag_words", "HELP_TEXT", "ArgsError"]

THINKING_CHOICES = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


class ArgsError(Exception):
    """A command line we cannot act on; the message is shown as is."""


@dataclass
class Args:
    help: bool = False
    version: bool = False
    print_mode: bool = False
    plain: bool = False  # --plain: the line-mode interface instead of the full-screen app
    mode: str = "text"  # text | json | rpc
    continue_session: bool = False
    resume: bool = False
    session: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    fork: str | None = None
    session_id: str | None = None  # --session-id: this project's session with that exact id, or a new one
    name: str | None = None  # --name/-n: the session's display name
    rewind: str | None = None  # --rewind ENTRY (checkpoints)
    rewind_mode: str = "both"  # --rewind-mode conversation|code|both
    rewind_force: bool = False  # --rewind-force: overwrite files changed outside the agent
    provider: str | None = None
    model: str | None = None
    models: list[str] = field(default_factory=list)
    api_key: str | None = None
    thinking: str | None = None
    list_models: bool = False
    list_models_search: str | None = None
    tools: list[str] | None = None  # -t/--tools: the allowlist, built-in and extension tools alike
    exclude_tools: list[str] = field(default_factory=list)  # -xt/--exclude-tools: never offered this run
    no_tools: bool = False  # -nt/--no-tools: no tools at all, extension tools included
    no_builtin_tools: bool = False  # -nbt/--no-builtin-tools: no built-ins; extension tools stay
    no_context_files: bool = False  # -nc/--no-context-files: no AGENTS.md / CLAUDE.md discovery
    use_theme: str | None = None  # --use-theme: the interactive theme for this run only
    tui_mode: str | None = None  # --tui-mode regular|fullscreen: accepted; pi-tui is always full-screen
    sandbox: str | None = None  # --sandbox off|workspace-write|read-only (wins over the setting)
    extensions: list[str] = field(default_factory=list)
    no_extensions: bool = False
    skills: list[str] = field(default_factory=list)
    no_skills: bool = False
    prompt_templates: list[str] = field(default_factory=list)
    no_prompt_templates: bool = False
    themes: list[str] = field(default_factory=list)
    no_themes: bool = False
    system_prompt: str | None = None
    append_system_prompt: list[str] = field(default_factory=list)  # repeatable, joined by blank lines
    export: str | None = None
    export_out: str | None = None
    verbose: bool = False
    offline: bool = False
    trust_project: bool = False
    approve: bool | None = None  # --approve (True) / --no-approve (False): project trust for this run only
    approve_here_only: bool = False  # ``approve`` came from the trust question: the start-up project only
    messages: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unknown_flags: dict[str, str | bool] = field(default_factory=dict)
    # ``--name word`` for a flag nobody has claimed yet: the word's position among the messages. Whether it
    # is the flag's value or a message is known only once extensions declared their flags.
    ambiguous: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


_VALUE_FLAGS = {
    "--mode": "mode",
    "--session": "session",
    "--session-dir": "session_dir",
    "--fork": "fork",
    "--session-id": "session_id",
    "--name": "name",
    "-n": "name",
    "--rewind": "rewind",
    "--rewind-mode": "rewind_mode",
    "--provider": "provider",
    "--model": "model",
    "--api-key": "api_key",
    "--thinking": "thinking",
    "--system-prompt": "system_prompt",
    "--sandbox": "sandbox",
    "--use-theme": "use_theme",
    "--tui-mode": "tui_mode",
}
_LIST_FLAGS = {
    "-e": "extensions",
    "--extension": "extensions",
    "--skill": "skills",
    "--prompt-template": "prompt_templates",
    "--theme": "themes",
    "--append-system-prompt": "append_system_prompt",
}
_COMMA_FLAGS = ("--tools", "-t", "--exclude-tools", "-xt", "--models")
_BOOL_FLAGS = {
    "-h": "help",
    "--help": "help",
    "-v": "version",
    "--version": "version",
    "-p": "print_mode",
    "--print": "print_mode",
    "--plain": "plain",
    "-c": "continue_session",
    "--continue": "continue_session",
    "-r": "resume",
    "--resume": "resume",
    "--no-session": "no_session",
    "--no-tools": "no_tools",
    "-nt": "no_tools",
    "--no-builtin-tools": "no_builtin_tools",
    "-nbt": "no_builtin_tools",
    "--no-context-files": "no_context_files",
    "-nc": "no_context_files",
    "--no-extensions": "no_extensions",
    "-ne": "no_extensions",
    "--no-skills": "no_skills",
    "-ns": "no_skills",
    "--no-prompt-templates": "no_prompt_templates",
    "-np": "no_prompt_templates",
    "--no-themes": "no_themes",
    "--verbose": "verbose",
    "--offline": "offline",
    "--trust-project": "trust_project",
    "--rewind-force": "rewind_force",
}


_SESSION_ID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def check_session_flags(args: Args) -> None:
    """The session flags that cannot go together, as pi 0.87.1 checks them before anything starts.

    Raises:
        ArgsError: ``--fork`` with ``--session``/``-c``/``-r``/``--no-session``; ``--session-id`` with
            ``--session``/``-c``/``-r``, or an id pi would not accept.
    """
    picked = [
        ("--session", bool(args.session)),
        ("--continue", args.continue_session),
        ("--resume", args.resume),
    ]
    if args.fork:
        clashing = [flag for flag, given in [*picked, ("--no-session", args.no_session)] if given]
        if clashing:
            raise ArgsError(f"--fork cannot be combined with {', '.join(clashing)}")
    if args.session_id is None:
        return
    clashing = [flag for flag, given in picked if given]
    if clashing:
        raise ArgsError(f"--session-id cannot be combined with {', '.join(clashing)}")
    if not _SESSION_ID.match(args.session_id):
        raise ArgsError(
            "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
            "and start and end with an alphanumeric character"
        )


def parse_args(argv: list[str]) -> Args:
    """Parse ``argv`` (without the program name). Raises `ArgsError` for a flag missing its value."""
    args = Args()
    i = 0
    n = len(argv)

    def value(flag: str) -> str:
        nonlocal i
        if i + 1 >= n:
            raise ArgsError(f"{flag} needs a value")
        i += 1
        return argv[i]

    while i < n:
        arg = argv[i]
        if "=" in arg and arg.startswith("--"):
            flag, _, inline = arg.partition("=")
            if flag in _VALUE_FLAGS or flag in _LIST_FLAGS or flag in _COMMA_FLAGS:
                argv = [*argv[:i], flag, inline, *argv[i + 1 :]]
                n = len(argv)
                arg = flag
        if arg == "--":  # the rest are messages and @files, even when they start with "-"
            for rest in argv[i + 1 :]:
                if rest.startswith("@") and len(rest) > 1:
                    args.files.append(rest[1:])
                else:
                    args.messages.append(rest)
            break
        if arg in _BOOL_FLAGS:
            setattr(args, _BOOL_FLAGS[arg], True)
        elif arg in _VALUE_FLAGS:
            setattr(args, _VALUE_FLAGS[arg], value(arg))
        elif arg in _LIST_FLAGS:
            getattr(args, _LIST_FLAGS[arg]).append(value(arg))
        elif arg in ("--approve", "-a", "--no-approve", "-na"):
            args.approve = arg in ("--approve", "-a")
        elif arg in ("--tools", "-t"):
            args.tools = [t.strip() for t in value(arg).split(",") if t.strip()]
        elif arg in ("--exclude-tools", "-xt"):
            args.exclude_tools.extend(t.strip() for t in value(arg).split(",") if t.strip())
        elif arg == "--models":
            args.models.extend(t.strip() for t in value(arg).split(",") if t.strip())
        elif arg == "--list-models":
            args.list_models = True
            if i + 1 < n and not argv[i + 1].startswith("-") and not argv[i + 1].startswith("@"):
                i += 1
                args.list_models_search = argv[i]
        elif arg == "--export":
            args.export = value(arg)
            if i + 1 < n and not argv[i + 1].startswith("-"):
                i += 1
                args.export_out = argv[i]
        elif arg.startswith("@") and len(arg) > 1:
            args.files.append(arg[1:])
        elif arg.startswith("-") and len(arg) > 1:
            name = arg.lstrip("-")
            # An unknown flag: kept for extensions (`--name value` or a boolean `--name`); start-up refuses
            # one that no loaded extension declares, as pi does.
            if i + 1 < n and not argv[i + 1].startswith("-") and not argv[i + 1].startswith("@"):
                args.unknown_flags[name] = argv[i + 1]
                args.ambiguous[name] = len(args.messages)
                i += 1
            else:
                args.unknown_flags[name] = True
        else:
            args.messages.append(arg)
        i += 1

    if args.mode not in ("text", "json", "rpc"):
        raise ArgsError(f"--mode must be text, json or rpc (got {args.mode!r})")
    if args.sandbox is not None and args.sandbox not in ("off", "workspace-write", "read-only"):
        raise ArgsError(f"--sandbox must be off, workspace-write or read-only (got {args.sandbox!r})")
    if args.rewind_mode not in ("conversation", "code", "both"):
        raise ArgsError(f"--rewind-mode must be conversation, code or both (got {args.rewind_mode!r})")
    if args.tui_mode is not None and args.tui_mode not in ("regular", "fullscreen"):
        raise ArgsError(f"--tui-mode must be regular or fullscreen (got {args.tui_mode!r})")
    if args.tui_mode == "regular":
        args.warnings.append(
            "--tui-mode regular: pi-tui has no inline mode and runs full-screen; --plain gives a line mode"
        )
    if args.thinking is not None and args.thinking not in THINKING_CHOICES:
        args.warnings.append(
            f"Invalid thinking level {args.thinking!r}; expected one of {', '.join(THINKING_CHOICES)}"
        )
        args.thinking = None
    return args


def resolve_flag_words(args: Args, flag_types: Mapping[str, str]) -> None:
    """pi's second argument pass, once extensions declared their flags (``name -> "boolean" | "string"``).

    ``--name word``: a string flag keeps ``word`` as its value; for a boolean flag, or a flag no extension
    claimed, ``word`` goes back among the messages where it stood. Unclaimed flags are then dropped.
    """
    for name, position in sorted(args.ambiguous.items(), key=lambda item: -item[1]):
        if flag_types.get(name) == "string":
            continue
        word = args.unknown_flags[name]
        args.unknown_flags[name] = True
        if isinstance(word, str):
            args.messages.insert(position, word)
    args.ambiguous.clear()
    for name in [n for n in args.unknown_flags if n not in flag_types]:
        del args.unknown_flags[name]


HELP_TEXT = """\
pi-tui - a terminal coding agent built around context engineering

Usage:
  pi-tui [options] [--] [@files...] [messages...]
  pi-tui install <source> [-l] | remove <source> [-l] | update [source] | list
  pi-tui login [provider] | logout [provider]   Sign in to a subscription (Claude Pro/Max, ...)
  pi-tui auth check|print-api-key|print-bearer-token --provider <p>   Credentials for scripts (auth --help)

Modes:
  (default)                      Full-screen interactive mode
  -p, --print                    Answer the prompt(s), print the final text, exit
  --mode text|json|rpc           json: one event per line; rpc: stdin/stdout protocol
  --plain                        Line mode (prompt-toolkit); automatic when TERM=dumb or not a terminal

Model:
  --provider <name>              Provider for --model (anthropic, openai, faux, or one from models.json)
  --model <pattern>              provider/id, an id, or a fuzzy pattern; ':level' sets thinking (sonnet:high)
  --models <a,b,...>             Models to cycle with Ctrl+P (globs allowed)
  --api-key <key>                Key for this run only (never saved); needs --model or --models
  --thinking <level>             off, minimal, low, medium, high, xhigh, max
  --list-models [search]         List models that have a key, and exit

Sessions:
  -c, --continue                 Continue the most recent session in this directory
  -r, --resume                   List this directory's sessions (newest first) to resume one
  --session <path|id>            Open a session file, or the session whose id starts with <id>
  --fork <path|id>               Start a new session forked from another (a copy filed in this directory)
  --session-id <id>              This project's session with exactly this id, created when missing
  --name, -n <name>              Set the session's display name
  --session-dir <dir>            Where sessions are stored (else PI_CODING_AGENT_SESSION_DIR, sessionDir)
  --rewind <entry>               Print mode: rewind the session (-c/--session) to an entry id (or prefix)
  --rewind-mode <mode>           both (default), code (files only) or conversation (pi's /tree)
  --rewind-force                 Overwrite files changed outside the agent (they stay recoverable)
  --no-session                   Keep nothing on disk
  --export <session> [out.html]  Write a session as a self-contained HTML page, and exit

Tools and resources:
  -t, --tools <a,b,...>          Only these tools (built-in: read,bash,edit,write,grep,find,ls; or extension)
  -xt, --exclude-tools <a,b,...> Never these tools
  -nbt, --no-builtin-tools       No built-in tools (extension tools stay)
  -nt, --no-tools                No tools at all
  -nc, --no-context-files        Do not load AGENTS.md / CLAUDE.md
  --sandbox <mode>               Run commands in the OS sandbox: workspace-write (default where
                                 bubblewrap works), read-only, or off
  -e, --extension <path>         Load an extension (repeatable)
  --no-extensions                Do not discover extensions (explicit -e still loads)
  --skill <path> / --no-skills   Extra skill / no skill discovery
  --prompt-template <path> / --no-prompt-templates
  --theme <path> / --no-themes
  --use-theme <name>             Theme for this run (not saved)
  --tui-mode regular|fullscreen  Accepted for pi's scripts; pi-tui is always full-screen
  --system-prompt <text|file>    Replace the base system prompt
  --append-system-prompt <text|file>   (repeatable)

Other:
  --offline                      No network except the model provider
  --trust-project                Trust this directory's .pi/ (settings, extensions, skills, prompts)
  --approve, -a                  Trust project-local files for this run (nothing saved)
  --no-approve, -na              Ignore project-local files for this run
  --verbose                      Show the full start-up header
  -v, --version                  Print the version
  -h, --help                     Print this help

Keys come from --api-key, ~/.pi/agent/auth.json, ANTHROPIC_API_KEY / OPENAI_API_KEY, or
~/.pi/agent/models.json (PI_CODING_AGENT_DIR moves ~/.pi/agent). Try it without a key: --provider faux.
"""
