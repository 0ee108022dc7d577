"""Plan mode: the model may only look around until the user approves its plan.

Enable the extension: ``pi-tui -e plan_mode``, or ``"extensions": ["bundled:plan_mode"]`` in settings.
Then ``/plan`` toggles plan mode, and ``--plan`` starts in it.

While plan mode is on:
- the active tools are ``read``, ``bash``, ``grep``, ``find``, ``ls`` (and ``todo`` when the todo extension
  is loaded: it changes no file); settings ``{"planMode": {"tools": [...]}}`` choose others;
- ``bash`` runs only read-only commands (``ls``, ``cat``, ``grep``, ``git status``/``log``/``diff``…, see
  ``READ_ONLY``; settings ``planMode.allowedCommands`` add names): every command of the line is checked
  (chains, ``$(…)``, ``sh -c``), output may only be redirected to ``/dev/null``, and a line that cannot be
  parsed is refused; any other tool call is blocked too (in case another extension re-enables a tool);
- the system prompt gets a plan-mode section (``before_agent_start``) asking for a numbered plan under a
  ``Plan:`` line.

Approval restores the tools that were active before and asks the model to carry the plan out: when an
answer holds a ``Plan:`` with numbered steps and a user can be asked, ``ctx.ui.confirm`` offers it;
``/plan approve`` does the same from the editor (or a later ``pi-tui -c -p "/plan approve"``).
``/plan off`` leaves plan mode without approving anything.

State (on/off and the tools to restore) is saved as ``plan-mode`` custom entries and rebuilt from the
active branch on ``session_start`` and after ``/tree``.
"""

from __future__ import annotations

import asyncio
import re
import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import AssistantMessage, Event, ExtensionAPI, ExtensionContext, message_text

_here = Path(__file__).parent
_shell = SimpleNamespace(**runpy.run_path(str(_here / "_shell.py")))
_settings = SimpleNamespace(**runpy.run_path(str(_here / "_settings.py")))

ENTRY_TYPE = "plan-mode"
APPROVED_EVENT = "plan_mode:approved"
PLAN_TOOLS = ("read", "bash", "grep", "find", "ls", "todo")

PROMPT = """

# Plan mode
You are in plan mode: explore and plan, change nothing. Only read-only tools work, and bash runs only
read-only commands (ls, cat, grep, find, git status/log/diff, …); writes, edits and other commands are
blocked. When you know enough, present your plan as a line "Plan:" followed by numbered steps, then stop
and wait: the user approves the plan before any change is made."""

APPROVED = (
    "The plan is approved and plan mode is off: all tools are available again. Carry out the plan now, "
    "step by step."
)

READ_ONLY = frozenset(
    {
        "ls", "cat", "head", "tail", "less", "more", "wc", "grep", "egrep", "fgrep", "rg", "ag", "find", "fd",
        "tree", "pwd", "file", "stat", "du", "df", "echo", "printf", "which", "whereis", "type", "date",
        "uname", "whoami", "id", "hostname", "env", "printenv", "basename", "dirname", "realpath",
        "readlink", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "cut", "tr", "uniq", "sort", "nl",
        "column", "jq", "od", "hexdump", "strings", "true", "false", "test", "[", "cd", "git", "seq",
    }
)  # fmt: skip
_FIND_WRITES = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_GIT_READS = frozenset(
    {"status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "rev-parse", "describe", "shortlog",
     "grep", "cat-file", "show-ref", "reflog", "branch", "tag", "remote", "stash", "config", "help", "version"}
)  # fmt: skip
_PLAN_HEADER = re.compile(r"^\s*(?:#+\s*|\*\*)?plan:?(?:\*\*)?:?\s*$", re.I | re.M)
_STEP = re.compile(r"^\s*\d+[.)]\s+\S", re.M)


def _git_reason(args: tuple[str, ...]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c") else 1
    sub, rest = (args[i], args[i + 1 :]) if i < len(args) else ("", ())
    if sub not in _GIT_READS:
        return f"git {sub or '(no subcommand)'} is not read-only"
    if any(a.startswith("--output") for a in rest):
        return "git --output writes a file"
    listing = {"-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--show-current", "--merged",
               "--no-merged", "--contains", "--verbose", "--get", "--get-all", "--get-regexp", "show",
               "get-url", "list"}  # fmt: skip
    if sub in ("branch", "tag", "remote", "stash", "config"):
        positional = [a for a in rest if not a.startswith("-")]
        flags = [a for a in rest if a.startswith("-")]
        lists = (
            not positional
            or "--list" in flags
            or "-l" in flags
            or positional[0] in ("show", "list", "get-url")
        )
        if sub == "config":
            lists = bool(set(flags) & {"--get", "--get-all", "--get-regexp", "--list", "-l"})
        if not lists or not set(flags) <= listing:
            return f"git {sub} may change the repository here"
    return None


def refusal(command: str, extra: frozenset[str] = frozenset()) -> str | None:
    """Why ``command`` is not read-only, or None when it may run in plan mode."""
    try:
        commands = _shell.split_commands(command)
    except _shell.UnparseableCommand as exc:
        return f"the command could not be checked ({exc})"
    for cmd in commands:
        for op, target in cmd.redirects:
            if ">" in op and target != "/dev/null":
                return f"it redirects output into {target}"
        if cmd.stdin_script:
            return f"{cmd.name} would run commands from its input"
        if cmd.name and cmd.name not in READ_ONLY and cmd.name not in extra:
            return f"{cmd.name} is not on the read-only list"
        if cmd.name == "find" and _FIND_WRITES & set(cmd.argv):
            return "find with -delete/-exec is not read-only"
        if cmd.name == "sort" and any(a == "-o" or a.startswith("--output") for a in cmd.argv):
            return "sort -o writes a file"
        if cmd.name == "git":
            reason = _git_reason(cmd.argv[1:])
            if reason:
                return reason
    return None


def find_plan(text: str) -> str | None:
    """The ``Plan:`` section of an answer when it has numbered steps."""
    header = _PLAN_HEADER.search(text)
    if header is None:
        return None
    plan = text[header.start() :].strip()
    return plan if _STEP.search(plan) else None


def register(pi: ExtensionAPI) -> None:
    state: dict[str, Any] = {"enabled": False, "previous": None, "tools": [], "extra": frozenset()}
    pending: set[asyncio.Future[Any]] = set()

    pi.register_flag(
        "plan", type="boolean", default=False, description="Start in plan mode (read-only tools)"
    )

    def plan_tools() -> list[str]:
        available = [t["name"] for t in pi.get_all_tools()]
        return [t for t in (state["tools"] or PLAN_TOOLS) if t in available]

    def save() -> None:
        pi.append_entry(ENTRY_TYPE, {"enabled": state["enabled"], "previous": state["previous"]})

    def enable(ctx: ExtensionContext) -> None:
        if state["enabled"]:
            return
        state["enabled"], state["previous"] = True, pi.get_active_tools()
        pi.set_active_tools(plan_tools())
        save()
        ctx.ui.set_status("plan_mode", "plan mode")
        ctx.ui.notify(f"Plan mode on: {', '.join(plan_tools())} (read-only)", "info")

    def disable(ctx: ExtensionContext, *, approved: bool) -> None:
        if not state["enabled"]:
            return
        previous = state["previous"]
        state["enabled"], state["previous"] = False, None
        if previous is not None:
            pi.set_active_tools(previous)
        save()
        ctx.ui.set_status("plan_mode", None)
        if approved:
            ctx.ui.notify("Plan approved: all tools are back", "info")
            pi.send_user_message(APPROVED, deliver_as="follow_up")
            pi.events.emit(APPROVED_EVENT)
        else:
            ctx.ui.notify("Plan mode off", "info")

    def rebuild(ctx: ExtensionContext) -> None:
        enabled, previous = False, None
        for saved in ctx.session_manager.get_custom_data(ENTRY_TYPE):
            data = saved if isinstance(saved, dict) else {}
            enabled, previous = bool(data.get("enabled")), data.get("previous")
        if enabled and not state["enabled"]:
            state["enabled"], state["previous"] = True, previous
            pi.set_active_tools(plan_tools())
        elif not enabled and state["enabled"]:
            state["enabled"] = False
            if state["previous"] is not None:
                pi.set_active_tools(state["previous"])
            state["previous"] = None
        ctx.ui.set_status("plan_mode", "plan mode" if state["enabled"] else None)

    @pi.on("session_start")
    def on_start(event: Event, ctx: ExtensionContext) -> None:
        settings = _settings.section(ctx, "planMode")
        tools = settings.get("tools")
        state["tools"] = [str(t) for t in tools] if isinstance(tools, list) else []
        state["extra"] = frozenset(str(c) for c in settings.get("allowedCommands") or [])
        rebuild(ctx)
        if event.reason == "startup" and pi.get_flag("plan"):
            enable(ctx)

    @pi.on("session_tree")
    def on_tree(event: Event, ctx: ExtensionContext) -> None:
        rebuild(ctx)

    @pi.on("session_shutdown")
    def on_shutdown(event: Event) -> None:
        for task in pending:
            task.cancel()

    @pi.on("before_agent_start")
    def add_prompt(event: Event) -> dict[str, Any] | None:
        if not state["enabled"]:
            return None
        return {"systemPrompt": event.system_prompt + PROMPT}

    @pi.on("tool_call")
    def read_only(event: Event) -> dict[str, Any] | None:
        if not state["enabled"]:
            return None
        allowed = plan_tools()
        if event.tool_name not in allowed:
            why = f"{event.tool_name} is not a read-only tool"
        elif event.tool_name == "bash":
            why = refusal(str(event.input.get("command", "")), state["extra"])
            if why is None:
                return None
        else:
            return None
        return {
            "block": True,
            "reason": (
                f"Blocked by plan mode: {why}. Only read-only tools ({', '.join(allowed)}) and read-only "
                f"commands work until the user approves a plan. Present your plan under a 'Plan:' line."
            ),
        }

    @pi.on("agent_end")
    def offer_approval(event: Event, ctx: ExtensionContext) -> None:
        if not state["enabled"] or not ctx.has_ui:
            return
        answers = [m for m in event.messages if isinstance(m, AssistantMessage)]
        plan = find_plan(message_text(answers[-1])) if answers else None
        if plan is None:
            return

        async def ask() -> None:
            # Its own task: a dialog can take minutes, longer than informational handlers are waited for.
            # agent_end comes before the agent is idle, and a message sent before then would wait for the
            # next prompt; the extension API has no idle event for handlers, so look every 50 ms.
            while not ctx.is_idle():
                await asyncio.sleep(0.05)
            if await ctx.ui.confirm("Approve this plan?", plan[:4000]):
                disable(ctx, approved=True)

        task = asyncio.ensure_future(ask())
        pending.add(task)
        task.add_done_callback(pending.discard)

    async def plan_command(args: str, ctx: ExtensionContext) -> None:
        action = args.strip().lower()
        if action in ("", "toggle"):
            (disable(ctx, approved=False) if state["enabled"] else enable(ctx))
        elif action == "on":
            enable(ctx)
        elif action == "off":
            disable(ctx, approved=False)
        elif action == "approve":
            if not state["enabled"]:
                ctx.ui.notify("Plan mode is not on", "warning")
            disable(ctx, approved=True)
        else:
            ctx.ui.notify("Usage: /plan [on|off|approve]", "warning")

    pi.register_command(
        "plan",
        handler=plan_command,
        description="Toggle plan mode (read-only tools); /plan approve restores them",
        get_argument_completions=lambda prefix: (
            [a for a in ("on", "off", "approve") if a.startswith(prefix)] or None
        ),
    )
