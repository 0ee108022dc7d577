"""Built-in slash commands that every mode shares (the TUI adds its own screens on top).

A mode installs `BuiltinCommands` as ``AgentSession.builtin_commands``; the prompt pipeline calls it
after the extensions' commands and ``input`` handlers, before skill/template expansion. Output goes to
the mode's ``write`` callback as markdown/plain text. Unknown ``/words`` are not handled here and reach
the model verbatim, as in pi.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.util.format import fmt_tokens

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["BuiltinCommands", "BUILTIN_COMMANDS"]

BUILTIN_COMMANDS: dict[str, str] = {
    "context": "Show exactly what the model sees: system parts, tools, messages, cache breakpoints, panels, costs",
    "session": "Session file, id, message counts, tokens and cost",
    "name": "Name the session: /name <name>",
    "compact": "Summarise older conversation now: /compact [focus instructions]",
    "summary": "Print the latest compaction summary on this branch, in full",
    "export": "Write the session as an HTML page: /export [file.html]",
    "reload": "Reload extensions, skills, prompts and context files",
    "undo": "Revert the last prompt's file changes (again: redo); /undo --force overwrites your own edits",
    "diff": "What the agent changed in this session, per prompt and per file: /diff [path]",
}


class BuiltinCommands:
    """``await commands(text) -> bool`` (True when the text was a built-in command and was handled)."""

    def __init__(self, session: AgentSession, write: Callable[[str], object]) -> None:
        self.session = session
        self.write = write
        self.reloads = "extensions, skills, prompts and context files"
        """What ``/reload`` says it reloaded (the full-screen app reloads its keys and themes too)."""
        self.handled_count = 0
        self._handlers: dict[str, Callable[[str], Awaitable[None]]] = {
            "context": self._cmd_context,
            "session": self._cmd_session,
            "name": self._cmd_name,
            "compact": self._cmd_compact,
            "summary": self._cmd_summary,
            "export": self._cmd_export,
            "reload": self._cmd_reload,
            "undo": self._cmd_undo,
            "diff": self._cmd_diff,
        }

    async def __call__(self, text: str) -> bool:
        name, _, rest = text[1:].partition(" ")
        handler = self._handlers.get(name)
        if handler is None:
            return False
        self.handled_count += 1
        try:
            await handler(rest.strip())
        except Exception as exc:  # a command failing is a message to the user, not a crash
            self.write(f"/{name} failed: {exc}")
        return True

    async def _cmd_context(self, _arg: str) -> None:
        self.write(await self.session.render_context())

    async def _cmd_session(self, _arg: str) -> None:
        s = self.session
        stats = s.stats()
        manager = s.session_manager
        lines = [
            f"Session: {manager.name or '(unnamed)'}",
            f"File: {manager.path or '(in memory)'}",
            f"ID: {manager.id}",
            f"Messages: {stats.user_messages} user, {stats.assistant_messages} assistant, "
            f"{stats.tool_calls} tool calls, {stats.tool_results} tool results",
            f"Tokens: {fmt_tokens(stats.input)} input, {fmt_tokens(stats.output)} output, "
            f"{fmt_tokens(stats.cache_read)} cache read, {fmt_tokens(stats.cache_write)} cache write, "
            f"{fmt_tokens(stats.total_tokens)} total",
            f"Cost: ${stats.cost:.4f}",
        ]
        from pi_tui.runtime.cache_warmer import warming_rows

        lines += [f"{label}: {value}" for label, value in warming_rows(s.cache_warmer)]
        self.write("\n".join(lines))

    async def _cmd_name(self, arg: str) -> None:
        if not arg:
            current = self.session.session_manager.name
            self.write(f"Session name: {current}" if current else "Usage: /name <name>")
            return
        import json

        self.session.set_session_name(arg)
        stored = self.session.session_manager.name or arg
        if stored != arg:  # as pi: say how the name was changed to fit on one line
            self.write(f"Session name was normalized from {json.dumps(arg)} to {json.dumps(stored)}")
        self.write(f"Session name set: {stored}")

    async def _cmd_compact(self, arg: str) -> None:
        result = await self.session.compact(arg or None)
        before = result.tokens_before
        self.write("Compacted." + (f" ({fmt_tokens(int(before))} tokens summarised)" if before else ""))

    async def _cmd_summary(self, _arg: str) -> None:
        from pi_tui.session.entries import CompactionEntry, ContextTransformEntry

        latest = None
        for entry in self.session.session_manager.get_branch():
            if isinstance(entry, CompactionEntry):
                latest = (entry.summary, entry.tokens_before, entry.timestamp)
            elif isinstance(entry, ContextTransformEntry):
                for op in entry.patch:
                    if isinstance(op, dict) and op.get("op") == "compaction_apply":
                        latest = (str(op.get("summary", "")), op.get("tokensBefore", 0), entry.timestamp)
        if latest is None:
            self.write("No compaction on this branch yet.")
            return
        summary, tokens_before, when = latest
        self.write(f"Compaction of {fmt_tokens(int(tokens_before or 0))} tokens ({when}):\n\n{summary}")

    async def _cmd_export(self, arg: str) -> None:
        target = _path_argument(arg)
        try:
            if target is not None and target.endswith(".jsonl"):  # as pi: the active branch as a session file
                from pi_tui.session.export_jsonl import export_branch_jsonl

                out = export_branch_jsonl(self.session.session_manager, target)
            else:
                from pi_tui.session.entries import MessageEntry
                from pi_tui.session.export_html import export_session_html

                manager = self.session.session_manager
                if not any(isinstance(e, MessageEntry) for e in manager.get_entries()):
                    # as pi: a page of an empty conversation is refused rather than written
                    self.write("Failed to export session: Nothing to export yet: start a conversation first")
                    return
                out = export_session_html(self.session.session_manager, Path(target) if target else None)
        except OSError as exc:  # a missing folder, no permission, a full disk: said as pi says it
            reason = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc)
            self.write(f"Failed to export session: {reason}")
            return
        self.write(f"Session exported to: {out}")

    async def _cmd_reload(self, _arg: str) -> None:
        runner = self.session.extensions
        errors_before = len(runner.errors) if runner is not None else 0
        notes = await self.session.reload()  # extensions that fail to load are reported meanwhile
        for note in notes:
            self.write(f"Warning: {note}")
        runner = self.session.extensions
        failed = [
            e for e in (runner.errors[errors_before:] if runner is not None else []) if e["event"] == "load"
        ]
        done = f"Reloaded {self.reloads}"
        if failed:
            names = ", ".join(str(e["extension"]) for e in failed)
            self.write(f"{done}; {len(failed)} extension(s) failed to load ({names}), see above.")
        else:
            self.write(f"{done}.")

    # --- checkpoints ---------------------------------------------------------------------

    async def _cmd_undo(self, arg: str) -> None:
        outcome = await self.session.undo(force=arg == "--force")
        if outcome is None:
            self.write("Nothing to undo: no prompt on this branch.")
            return
        what, result = outcome
        if not result.applied:
            self.write(result.summary() + "\nNothing was changed. /undo --force overwrites them.")
        elif not result.restored and not result.kept:
            self.write("Nothing to undo: the files are already as they were before the last prompt.")
        else:
            done = "Undid the previous restore" if what == "restore" else "Reverted the last prompt's changes"
            self.write(f"{done}. {result.summary()} /undo again to redo.")

    async def _cmd_diff(self, arg: str) -> None:
        from pi_tui.checkpoints.report import render_changes

        self.write(
            render_changes(self.session.checkpoints.store, self.session.checkpoint_changes(), arg or None)
        )


def _path_argument(arg: str) -> str | None:
    """A command's path argument as pi reads it: the first word, or a quoted path with spaces."""
    text = arg.strip()
    if not text:
        return None
    if text[0] in "\"'":
        end = text.find(text[0], 1)
        return text[1:end] if end > 0 else None
    return text.split()[0]
