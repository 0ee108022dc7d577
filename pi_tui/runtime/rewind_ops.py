"""`AgentSession`'s checkpoint operations: record command changes, rewind, undo, diff.

A rewind moves the conversation (pi's ``/tree`` jump), the files (restored as they were at the entry),
or both. A file someone changed since the agent last wrote it is a conflict: it is overwritten only
with consent (``force``, a per-file resolution, or a ``confirm`` dialog in the interactive modes);
otherwise nothing at all is done and the conflicts come back with their diffs. Every restore is
recorded as a checkpoint entry holding what it overwrote, so a jump back (or ``/undo``) reverses it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pi_tui.agent.tool import AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.extensions.ui import NullUIBridge, UIBridge
from pi_tui.session.entries import MessageEntry
from pi_tui.session.errors import EntryNotFoundError

from ._host import SessionHost
from .events import CheckpointRestore

if TYPE_CHECKING:
    from pi_tui.ai.stream import AbortSignal

    # The rewind planner and the checkpoint records load when a rewind or a record happens: a run that
    # never rewinds (every print-mode run) does not import them.
    from pi_tui.checkpoints import Checkpointer, FilePlan, RewindPlan
    from pi_tui.checkpoints.records import CheckpointCarrier, FileChange
    from pi_tui.checkpoints.rewind import Resolution
    from pi_tui.checkpoints.snapshot import Snapshot

__all__ = ["RewindMode", "RewindResult", "RewindMixin", "REWIND_MODES"]

log = logging.getLogger(__name__)

RewindMode = Literal["conversation", "code", "both"]
REWIND_MODES: tuple[str, ...] = ("conversation", "code", "both")

_COMMAND_TOOLS = frozenset({"bash"})  # tools whose file changes only a project snapshot can see


@dataclass(slots=True)
class RewindResult:
    """What a rewind did (``applied``) or why it did nothing (``conflicts`` needing consent).

    Attributes:
        entry_id: The target entry.
        mode: ``conversation``, ``code`` or ``both``.
        applied: False when unresolved conflicts stopped it: then nothing was changed.
        restored: Paths written or deleted.
        kept: Conflicting paths left as they are (by the user's choice).
        conflicts: Files changed outside the agent, each with its diff (on disk → checkpoint).
        unrestorable: ``(path, reason)`` for changes whose content was never stored.
        editor_text: For a conversation jump to a user message: its text, for the editor.
        record_id: The restore's checkpoint entry (jump to its parent to undo it).
    """

    entry_id: str | None
    mode: str
    applied: bool = True
    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    conflicts: list[FilePlan] = field(default_factory=list)
    unrestorable: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    editor_text: str | None = None
    record_id: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "entryId": self.entry_id,
            "mode": self.mode,
            "applied": self.applied,
            "restored": list(self.restored),
            "kept": list(self.kept),
            "conflicts": [{"path": c.path, "diff": c.diff} for c in self.conflicts],
            "unrestorable": [{"path": p, "reason": r} for p, r in self.unrestorable],
            "failed": [{"path": p, "error": e} for p, e in self.failed],
            "editorText": self.editor_text,
            "recordId": self.record_id,
        }

    def summary(self) -> str:
        """One paragraph for a user."""
        if not self.applied:
            lines = [
                f"Rewind stopped: {len(self.conflicts)} file(s) changed since the agent last wrote them; "
                "nothing was changed. Choose per file, or force it (what is overwritten is kept and "
                "can be restored by jumping back)."
            ]
            lines += [c.diff or f"{c.path} differs" for c in self.conflicts]
            return "\n".join(lines)
        parts = []
        if self.mode != "conversation":
            parts.append(
                f"Restored {len(self.restored)} file(s)"
                + (f": {', '.join(self.restored)}" if self.restored else "")
            )
            if self.kept:
                parts.append(f"kept as they are: {', '.join(self.kept)}")
            if self.unrestorable:
                parts.append("not restorable: " + ", ".join(f"{p} ({r})" for p, r in self.unrestorable))
            if self.failed:
                parts.append("could not write: " + ", ".join(f"{p} ({e})" for p, e in self.failed))
        if self.mode != "code":
            parts.append("conversation moved")
        return "; ".join(parts) + "."


class RewindMixin(SessionHost):
    """Mixed into `AgentSession`; ``checkpoints`` is its `Checkpointer`."""

    checkpoints: Checkpointer
    ui: UIBridge
    mode: str

    # --- recording commands ---------------------------------------------------------------------

    def _checkpointed_tool(self, tool: AgentTool) -> AgentTool:
        """``bash`` wrapped in a before/after project snapshot; other tools unchanged."""
        if tool.name not in _COMMAND_TOOLS or not self.checkpoints.enabled:
            return tool
        checkpoints, original = self.checkpoints, tool.execute

        async def execute(
            call_id: str, params: dict[str, object], signal: AbortSignal, on_update: ToolUpdateFn | None
        ) -> ToolResult:
            try:
                before = await asyncio.to_thread(checkpoints.command_snapshot)
            except Exception:
                log.warning("checkpoint snapshot before %s failed", tool.name, exc_info=True)
                return await original(call_id, params, signal, on_update)
            try:
                result = await original(call_id, params, signal, on_update)
            except ToolError as exc:  # a failed command may still have changed files
                exc.details = await _with_checkpoint(checkpoints, before, exc.details)
                raise
            result.details = await _with_checkpoint(checkpoints, before, result.details)
            return result

        return dataclasses.replace(tool, execute=execute)

    async def checkpoint_before_user_bash(self) -> None:
        """Call just before running a ``!cmd``: the checkpoint recorded with its ``bashExecution``
        message then holds exactly the command's changes (without it: every change since the
        project's last snapshot)."""
        if not self.checkpoints.enabled:
            return
        try:
            await asyncio.to_thread(self.checkpoints.command_snapshot)
        except Exception:
            log.warning("checkpoint snapshot before a user command failed", exc_info=True)

    def _record_user_bash(self) -> None:
        """``!cmd``: what changed since the project's last snapshot, as a checkpoint entry."""
        if not self.checkpoints.enabled:
            return
        try:
            data = self.checkpoints.command_changes(None, "user_bash")
        except Exception:
            log.warning("checkpoint of a user command failed", exc_info=True)
            return
        if data.get("files"):
            from pi_tui.checkpoints.records import CUSTOM_TYPE

            self.session_manager.append_custom(CUSTOM_TYPE, data)

    async def _collect_checkpoint_garbage(self) -> None:
        """On close: write the snapshot baseline; at most daily, collect the store's garbage when it
        is over its budget."""
        try:
            await asyncio.to_thread(self.checkpoints.flush)
        except Exception:
            log.warning("saving the checkpoint snapshot baseline failed", exc_info=True)
        if not self.checkpoints.root.is_dir():
            return  # nothing was ever stored: nothing to collect (and no collector to import)
        from pi_tui.checkpoints.gc import maybe_collect_garbage
        from pi_tui.session.paths import sessions_root

        dirs = [sessions_root()]
        session_dir = self.session_manager.session_dir
        if session_dir is not None:
            dirs.append(session_dir)
        try:
            await asyncio.to_thread(
                maybe_collect_garbage,
                self.checkpoints.root,
                dirs,
                budget_bytes=self.checkpoints.limits.budget_mb * 1024 * 1024,
            )
        except Exception:
            log.warning("checkpoint garbage collection failed", exc_info=True)

    # --- rewind ---------------------------------------------------------------------------------

    def plan_rewind(self, entry_id: str | None) -> RewindPlan:
        """What restoring the files to ``entry_id``'s state would change (None: before the first entry).

        Raises:
            EntryNotFoundError: ``entry_id`` is not in this session.
        """
        if entry_id is not None and self.session_manager.get_entry(entry_id) is None:
            raise EntryNotFoundError(entry_id)
        from pi_tui.checkpoints.rewind import plan_restore

        path = self.session_manager.get_branch(entry_id) if entry_id is not None else []
        return plan_restore(
            self.checkpoints,
            self.session_manager.get_entries(),
            path,
            entry_id,
            self.session_manager.get_branch(),
        )

    async def rewind(
        self,
        entry_id: str | None,
        mode: str = "both",
        *,
        force: bool = False,
        resolutions: Mapping[str, Resolution] | None = None,
        ask: bool = True,
    ) -> RewindResult:
        """Rewind the conversation, the files, or both to ``entry_id``.

        Args:
            entry_id: The entry to go back (or forward) to; None is before the first entry.
            mode: ``conversation`` (pi's ``/tree``), ``code`` or ``both``.
            force: Overwrite files changed outside the agent (what is overwritten is still recorded).
            resolutions: Per conflicting path, ``restore`` or ``keep``.
            ask: In the interactive modes, ask the user about each unresolved conflict.

        Returns:
            A `RewindResult`; ``applied`` is False (and nothing changed) when conflicts were left
            unresolved.

        Raises:
            ValueError: an unknown mode.
            EntryNotFoundError: ``entry_id`` is not in this session.
            RuntimeError: the agent is running.
        """
        if mode not in REWIND_MODES:
            raise ValueError(f"Unknown rewind mode {mode!r}: use one of {', '.join(REWIND_MODES)}")
        self._require_idle("rewind")
        if entry_id is not None and self.session_manager.get_entry(entry_id) is None:
            raise EntryNotFoundError(entry_id)
        result = RewindResult(entry_id, mode)
        plan = self.plan_rewind(entry_id) if mode != "conversation" else None
        choices = dict(resolutions or {})
        if plan is not None and not await self._settle_conflicts(plan, result, choices, force, ask):
            return result
        if mode != "code":
            result.editor_text = await self.navigate(entry_id)
        if plan is not None:
            await self._write_restore(plan, result, choices, force, {"mode": mode})
        await self.emit(CheckpointRestore(result.to_json()))
        return result

    async def undo_restore(
        self,
        record_id: str | None = None,
        *,
        force: bool = False,
        resolutions: Mapping[str, Resolution] | None = None,
        ask: bool = True,
    ) -> RewindResult | None:
        """Undo a restore (a rewind or an ``/undo``): every file it wrote goes back to what it
        overwrote, including changes made outside the agent that a forced restore replaced.

        Args:
            record_id: The restore's checkpoint entry (default: the latest on this branch).

        Returns:
            None when there is no restore to undo.
        """
        self._require_idle("undo a restore")
        from pi_tui.checkpoints import checkpoint_of, plan_undo

        if record_id is None:
            restores = [e for e in self.session_manager.get_branch() if _is_restore(e)]
            latest = restores[-1].id if restores else None
            if latest is None:
                return None
            record_id = latest
        entry = self.session_manager.get_entry(record_id)
        checkpoint = checkpoint_of(entry) if entry is not None else None
        if entry is None or checkpoint is None or checkpoint.kind != "restore":
            raise EntryNotFoundError(record_id)
        result = RewindResult(record_id, "code")
        plan = plan_undo(self.checkpoints, checkpoint, record_id)
        choices = dict(resolutions or {})
        if not await self._settle_conflicts(plan, result, choices, force, ask):
            return result
        await self._write_restore(plan, result, choices, force, {"mode": "code", "undoes": record_id})
        await self.emit(CheckpointRestore(result.to_json()))
        return result

    async def undo(self, *, force: bool = False, ask: bool = True) -> tuple[str, RewindResult] | None:
        """``/undo``: undo the latest file change set on this branch.

        When the latest is a restore (a rewind or an earlier ``/undo``) that restore is undone, so a
        second ``/undo`` redoes; otherwise the files go back to how they were before the last prompt.

        Returns:
            ``("restore" | "prompt", result)``, or None when there is nothing to undo.
        """
        from pi_tui.checkpoints import checkpoint_of

        path = self.session_manager.get_branch()
        latest = next((e for e in reversed(path) if checkpoint_of(e) is not None), None)
        if latest is not None and _is_restore(latest):
            undone = await self.undo_restore(latest.id, force=force, ask=ask)
            return ("restore", undone) if undone is not None else None
        prompt = await self.undo_last_prompt(force=force, ask=ask)
        return ("prompt", prompt) if prompt is not None else None

    async def _settle_conflicts(
        self, plan: RewindPlan, result: RewindResult, choices: dict[str, Resolution], force: bool, ask: bool
    ) -> bool:
        """Resolve ``plan``'s conflicts (force, choices, or asking the user); False when some remain."""
        result.unrestorable = list(plan.unrestorable)
        open_conflicts = [c for c in plan.conflicts if not force and c.path not in choices]
        if open_conflicts and ask and self.mode in ("tui", "rpc") and not isinstance(self.ui, NullUIBridge):
            for conflict in open_conflicts:
                yes = await self.ui.confirm(
                    f"Overwrite {conflict.path}?",
                    "This file changed since the agent last wrote it. Restoring replaces it with the "
                    "checkpoint (its current content is kept in the checkpoint store: /undo brings it "
                    f"back).\n\n{conflict.diff}",
                )
                choices[conflict.path] = "restore" if yes else "keep"
            open_conflicts = []
        result.conflicts = open_conflicts or list(plan.conflicts)
        if open_conflicts:
            result.applied = False
            return False
        return True

    async def _write_restore(
        self,
        plan: RewindPlan,
        result: RewindResult,
        choices: dict[str, Resolution],
        force: bool,
        extra: dict[str, object],
    ) -> None:
        if plan.empty:
            return
        from pi_tui.checkpoints.records import CUSTOM_TYPE
        from pi_tui.checkpoints.rewind import apply_restore

        outcome = await asyncio.to_thread(apply_restore, self.checkpoints, plan, choices, force=force)
        result.restored, result.kept, result.failed = outcome.restored, outcome.kept, outcome.failed
        if outcome.checkpoint.files:
            data = {**outcome.checkpoint.to_json(), **extra}
            result.record_id = self.session_manager.append_custom(CUSTOM_TYPE, data).id

    async def undo_last_prompt(self, *, force: bool = False, ask: bool = True) -> RewindResult | None:
        """Restore the files as they were before the last prompt on this branch (the conversation
        stays). None when there is no prompt."""
        path = self.session_manager.get_branch()
        index = max(
            (i for i, e in enumerate(path) if isinstance(e, MessageEntry) and e.message.role == "user"),
            default=None,
        )
        if index is None:
            return None
        target = path[index - 1].id if index > 0 else None
        return await self.rewind(target, "code", force=force, ask=ask)

    def checkpoint_changes(self) -> list[tuple[str, list[tuple[str, FileChange]]]]:
        """The agent's recorded changes on this branch grouped by prompt: ``(prompt text, changes)``."""
        from pi_tui.ai.types import message_text
        from pi_tui.checkpoints import checkpoint_of

        groups: list[tuple[str, list[tuple[str, FileChange]]]] = []
        for entry in self.session_manager.get_branch():
            if isinstance(entry, MessageEntry) and entry.message.role == "user":
                groups.append((message_text(entry.message), []))
                continue
            checkpoint = checkpoint_of(entry)
            if checkpoint is None or not checkpoint.files:
                continue
            if not groups:
                groups.append(("(before the first prompt)", []))
            groups[-1][1].extend((checkpoint.kind, change) for change in checkpoint.files)
        return [(text, changes) for text, changes in groups if changes]


def _is_restore(entry: CheckpointCarrier) -> bool:
    from pi_tui.checkpoints import checkpoint_of

    checkpoint = checkpoint_of(entry)
    return checkpoint is not None and checkpoint.kind == "restore"


async def _with_checkpoint(checkpoints: Checkpointer, before: Snapshot | None, details: object) -> object:
    try:
        data = await asyncio.to_thread(checkpoints.command_changes, before, "bash")
    except Exception:
        log.warning("checkpoint snapshot after bash failed", exc_info=True)
        return details
    from pi_tui.checkpoints.records import CHECKPOINT_KEY

    if details is None:
        return {CHECKPOINT_KEY: data}
    if isinstance(details, dict):
        return {**details, CHECKPOINT_KEY: data}
    return details  # a shape we do not know: leave it alone
