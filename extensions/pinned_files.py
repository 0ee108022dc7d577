"""Pinned files: files kept in view of the model in a live "Pinned files" panel that follows their changes.

Enable: ``pi-tui -e pinned_files``, or ``"extensions": ["bundled:pinned_files"]`` in settings.

- ``/pin <path>`` and ``/unpin <path>`` (``/unpin all`` clears; ``/pin`` alone lists), and a ``pin`` tool
  the model may call (``pin``, ``unpin``, ``list``). Paths are relative to the cwd.
- **One panel for all pinned files** ("Pinned files"), in pin order, each under a ``File: <path>`` line.
  The extension API registers panels but cannot remove one, so a panel per file would leave dead panels
  behind after ``/unpin``; one panel whose text lists the current set has no such leftovers. Each file is
  capped (``pinnedFiles.maxBytes``, default 20000, cut at a line end) with a note saying how much was
  left out; binary files and folders are described, not shown; a deleted file shows ``(file deleted)``.
- Refresh: a background watcher (watchfiles, on the pinned files' folders) starts on ``session_start``
  and stops on ``session_shutdown``; a change to a pinned file emits ``pinned_files:changed`` on
  ``pi.events``, which marks the panel for re-rendering (its ``refresh_on``). Edits by the agent's own
  tools are also caught at ``tool_execution_end``, so the next request never shows a stale file even
  before the watcher reports.
- State: each change appends a ``pinned-files`` custom entry with the whole list; it is rebuilt from the
  active branch on ``session_start`` and after ``/tree``.
- Placement: ``"tail"`` by default; ``--pinned-files-placement prefix`` or settings
  ``{"pinnedFiles": {"placement": "prefix"}}`` move it to the cached prefix.
"""

from __future__ import annotations

import asyncio
import logging
import os
import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext, ToolError, text_result

_settings = SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name("_settings.py"))))

log = logging.getLogger(__name__)

PANEL = "Pinned files"
ENTRY_TYPE = "pinned-files"
CHANGED = "pinned_files:changed"
WATCHING = "pinned_files:watching"
DEFAULT_MAX_BYTES = 20_000
DEBOUNCE_MS = 100


def render_file(cwd: Path, shown: str, max_bytes: int) -> str:
    """One file's part of the panel."""
    path = cwd / shown
    try:
        if path.is_dir():
            return f"File: {shown}\n(is a folder, not a file)"
        data = path.read_bytes()
    except FileNotFoundError:
        return f"File: {shown}\n(file deleted)"
    except OSError as exc:
        return f"File: {shown}\n(cannot be read: {exc.strerror or exc})"
    if b"\x00" in data[:8192]:
        return f"File: {shown}\n(binary file, {len(data)} bytes, not shown)"
    text = data.decode("utf-8", "replace")
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    counted = f"{lines} line{'' if lines == 1 else 's'}"
    if len(data) <= max_bytes:
        return f"File: {shown} ({counted})\n{text.rstrip(chr(10))}"
    head = data[:max_bytes].decode("utf-8", "ignore")
    head = head[: head.rfind("\n")] if "\n" in head else head
    kept = head.count("\n") + 1
    note = (
        f"[truncated: showing the first {kept} of {lines} lines ({len(head.encode())} of {len(data)} bytes); "
        f"use the read tool with an offset for the rest]"
    )
    return f"File: {shown} ({counted})\n{head}\n{note}"


def register(pi: ExtensionAPI) -> None:
    state: dict[str, Any] = {"cwd": None, "paths": [], "max_bytes": DEFAULT_MAX_BYTES}
    watcher: dict[str, Any] = {"task": None, "stop": None, "all": set()}

    def render() -> str:
        if state["cwd"] is None or not state["paths"]:
            return ""
        cwd = Path(state["cwd"])
        return "\n\n".join(render_file(cwd, p, state["max_bytes"]) for p in state["paths"])

    pi.register_flag(
        "pinned-files-placement",
        type="string",
        default=None,
        description="Pinned files panel: prefix or tail",
    )
    refresh_on = (CHANGED, "tool_execution_end", "agent_start")
    pi.register_panel(PANEL, render, placement="tail", refresh_on=refresh_on)

    # --- paths and state ---------------------------------------------------------------------------

    def normalize(raw: str) -> str:
        """The form a path is pinned under: relative to the cwd when inside it (POSIX slashes)."""
        text = raw.strip().removeprefix("@")
        if not text:
            raise ValueError("Give a file's path, e.g. src/app.py")
        cwd = Path(state["cwd"] or os.getcwd())
        path = Path(os.path.normpath(cwd / Path(text).expanduser()))
        try:
            return path.relative_to(cwd).as_posix()
        except ValueError:
            return str(path)

    def save() -> None:
        pi.append_entry(ENTRY_TYPE, {"paths": list(state["paths"])})
        pi.events.emit(CHANGED)
        restart_watcher()

    def pin(raw: str) -> str:
        shown = normalize(raw)
        if shown in state["paths"]:
            return f"{shown} is already pinned"
        if not (Path(state["cwd"] or os.getcwd()) / shown).exists():
            raise ValueError(f"{shown} does not exist")
        state["paths"].append(shown)
        save()
        return f"Pinned {shown}"

    def unpin(raw: str) -> str:
        if raw.strip() == "all":
            state["paths"] = []
            save()
            return "Unpinned every file"
        shown = normalize(raw)
        if shown not in state["paths"]:
            raise ValueError(f"{shown} is not pinned (pinned: {', '.join(state['paths']) or 'nothing'})")
        state["paths"].remove(shown)
        save()
        return f"Unpinned {shown}"

    def listing() -> str:
        return "Pinned: " + (", ".join(state["paths"]) or "nothing")

    def rebuild(ctx: ExtensionContext) -> None:
        paths: list[str] = []
        for saved in ctx.session_manager.get_custom_data(ENTRY_TYPE):
            data = saved if isinstance(saved, dict) else {}
            paths = [str(p) for p in data.get("paths", [])]
        state["paths"] = paths

    # --- the watcher -------------------------------------------------------------------------------

    async def watch(stop: asyncio.Event, folders: list[Path], files: set[Path]) -> None:
        from watchfiles import awatch

        changes_seen = awatch(*folders, stop_event=stop, debounce=DEBOUNCE_MS, step=50, recursive=False)
        try:
            first = asyncio.ensure_future(anext(changes_seen, None))
            await asyncio.sleep(0)  # awatch installs its watches on its first step, before it awaits
            pi.events.emit(WATCHING, [str(f) for f in sorted(files)])
            changes = await first
            while changes is not None:
                if any(Path(path).resolve() in files for _, path in changes):
                    pi.events.emit(CHANGED)
                changes = await anext(changes_seen, None)
        except Exception:  # a failing watcher must not take the session down; refresh_on still works
            log.warning("pinned_files: the file watcher stopped", exc_info=True)
        finally:
            await changes_seen.aclose()

    def restart_watcher() -> None:
        stop_watcher_soon()
        if state["cwd"] is None or not state["paths"]:
            return
        cwd = Path(state["cwd"])
        files = {(cwd / p).resolve() for p in state["paths"]}
        folders = sorted({f.parent for f in files if f.parent.is_dir()})
        if not folders:
            return
        stop = asyncio.Event()
        task = asyncio.ensure_future(watch(stop, folders, files))
        watcher["stop"], watcher["task"] = stop, task
        watcher["all"].add(task)
        task.add_done_callback(watcher["all"].discard)

    def stop_watcher_soon() -> None:
        stop = watcher["stop"]
        watcher["task"] = watcher["stop"] = None
        if stop is not None:
            stop.set()

    # --- events, commands, tool --------------------------------------------------------------------

    @pi.on("session_start")
    def on_start(event: Event, ctx: ExtensionContext) -> None:
        settings = _settings.section(ctx, "pinnedFiles")
        state["cwd"] = ctx.cwd
        state["max_bytes"] = max(100, int(settings.get("maxBytes", DEFAULT_MAX_BYTES)))
        rebuild(ctx)
        chosen = pi.get_flag("pinned-files-placement") or settings.get("placement") or "tail"
        pi.register_panel(
            PANEL, render, placement=chosen if chosen in ("prefix", "tail") else "tail", refresh_on=refresh_on
        )
        pi.events.emit(CHANGED)
        restart_watcher()

    @pi.on("session_tree")
    def on_tree(event: Event, ctx: ExtensionContext) -> None:
        rebuild(ctx)
        pi.events.emit(CHANGED)
        restart_watcher()

    @pi.on("session_shutdown")
    async def on_shutdown(event: Event) -> None:
        stop_watcher_soon()
        if watcher["all"]:  # the current watcher and any still winding down after a restart
            await asyncio.gather(*watcher["all"], return_exceptions=True)

    def command(action: Any) -> Any:
        async def handler(args: str, ctx: ExtensionContext) -> None:
            try:
                message = action(args) if args.strip() or action is unpin else listing()
                ctx.ui.notify(message, "info")
            except ValueError as exc:
                ctx.ui.notify(str(exc), "error")

        return handler

    def pinned_completions(prefix: str) -> list[str] | None:
        return [p for p in state["paths"] if p.startswith(prefix)] or None

    pi.register_command("pin", handler=command(pin), description="Pin a file into the model's context")
    pi.register_command(
        "unpin",
        handler=command(unpin),
        description="Unpin a file (or 'all')",
        get_argument_completions=pinned_completions,
    )

    def execute(tool_call_id: str, params: dict[str, Any]) -> Any:
        action, path = params.get("action"), str(params.get("path") or "")
        try:
            if action == "list":
                return text_result(listing())
            if action == "pin":
                return text_result(pin(path))
            if action == "unpin":
                return text_result(unpin(path))
        except ValueError as exc:
            raise ToolError(str(exc)) from exc
        raise ToolError(f"Unknown action {action!r}: use pin, unpin or list")

    pi.register_tool(
        name="pin",
        label="Pin",
        description=(
            "Pin a file so that its current content is always shown to you in the 'Pinned files' panel, "
            "refreshed whenever it changes; unpin it when you no longer need it. Actions: pin, unpin, list."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["pin", "unpin", "list"]},
                "path": {"type": "string", "description": "The file, relative to the working directory"},
            },
            "required": ["action"],
        },
        execute=execute,
        prompt_snippet="Pin files you keep referring to; they stay visible and up to date",
        prompt_guidelines=(
            "Pin a file you will consult repeatedly instead of re-reading it; unpin it when done to save context.",
        ),
    )
