"""A live "Git status" panel: ``git status --short --branch`` and the last few commits of the cwd.

Enable: ``pi-tui -e git_status``, or ``"extensions": ["bundled:git_status"]`` in settings.

- Refreshed by events, never on a timer: at the start of each prompt (``agent_start``), after each turn
  (``turn_end``), after a ``bash``, ``edit`` or ``write`` tool call finishes, and after a ``!command``.
  Between those it is not re-run, so an unchanged repository costs one ``git`` call per event.
- Outside a repository the panel reads ``(not a git repository)``. Only local commands run
  (``git --no-optional-locks status`` and ``git log``): no network, and no lock that could disturb the
  user's own git commands.
- Settings ``{"gitStatus": {"commits": 5, "maxLines": 40, "placement": "tail"}}``; placement is also
  ``--git-status-placement prefix|tail``. The default is the uncached tail: the status changes often,
  and in the tail a change never re-bills the cached conversation.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

_settings = SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name("_settings.py"))))

PANEL = "Git status"
DIRTY = "git_status:dirty"
TIMEOUT_S = 10.0
CHANGING_TOOLS = frozenset({"bash", "edit", "write"})


def format_status(status: str, log: str, max_lines: int) -> str:
    """The panel text from ``git status --short --branch`` and ``git log --oneline`` output."""
    lines = status.rstrip("\n").splitlines()
    branch, changes = (lines[0], lines[1:]) if lines and lines[0].startswith("##") else ("", lines)
    out = [branch] if branch else []
    if not changes:
        out.append("(working tree clean)")
    else:
        out += changes[:max_lines]
        if len(changes) > max_lines:
            out.append(f"… and {len(changes) - max_lines} more changed paths")
    if log.strip():
        out += ["", "Recent commits:", *log.rstrip("\n").splitlines()]
    return "\n".join(out)


def register(pi: ExtensionAPI) -> None:
    state: dict[str, Any] = {"cwd": None, "commits": 5, "max_lines": 40}

    async def git(*args: str) -> Any:
        return await pi.exec(
            "git",
            ["--no-optional-locks", "-c", "core.quotepath=off", *args],
            cwd=state["cwd"],
            timeout=TIMEOUT_S,
        )

    async def render() -> str:
        if state["cwd"] is None:
            return ""
        try:
            status = await git("status", "--short", "--branch")
        except FileNotFoundError:
            return "(git is not installed)"
        if status.code != 0:
            if "not a git repository" in status.stderr.lower():
                return "(not a git repository)"
            return f"(git status failed: {status.stderr.strip() or f'exit code {status.code}'})"
        log = await git("log", "--oneline", "--no-decorate", f"-n{state['commits']}")
        return format_status(status.stdout, log.stdout if log.code == 0 else "", state["max_lines"])

    pi.register_flag(
        "git-status-placement", type="string", default=None, description="Git status panel: prefix or tail"
    )
    refresh_on = ("agent_start", "turn_end", DIRTY)
    pi.register_panel(PANEL, render, placement="tail", refresh_on=refresh_on)

    @pi.on("session_start")
    def on_start(event: Event, ctx: ExtensionContext) -> None:
        settings = _settings.section(ctx, "gitStatus")
        state["cwd"] = ctx.cwd
        state["commits"] = max(0, int(settings.get("commits", 5)))
        state["max_lines"] = max(1, int(settings.get("maxLines", 40)))
        chosen = pi.get_flag("git-status-placement") or settings.get("placement") or "tail"
        pi.register_panel(
            PANEL, render, placement=chosen if chosen in ("prefix", "tail") else "tail", refresh_on=refresh_on
        )

    @pi.on("tool_execution_end")
    def on_tool_end(event: Event) -> None:
        if event.tool_name in CHANGING_TOOLS:
            pi.events.emit(DIRTY)

    @pi.on("user_bash")
    def on_user_bash(event: Event) -> None:
        pi.events.emit(DIRTY)
