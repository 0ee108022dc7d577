"""Extension events around compaction and branch summaries, wired to the runtime's compaction hooks.

`pi_tui.compaction.CompactionController` calls ``before_compact`` / ``on_compact`` / ``before_tree`` /
``on_tree``; these forward to ``session_before_compact`` / ``session_compact`` /
``session_before_tree`` / ``session_tree``. Handlers see the preparation as an `Event`-like record
(``event.preparation.first_kept_entry_id`` or ``event.preparation["firstKeptEntryId"]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.util.json_types import JsonObject

from .events import Event, to_camel, to_snake

if TYPE_CHECKING:
    from pi_tui.ai.stream import AbortSignal
    from pi_tui.compaction.branch_summary import TreePreparation
    from pi_tui.compaction.controller import CompactionController
    from pi_tui.compaction.prepare import CompactionPreparation
    from pi_tui.session.entries import ContextTransformEntry, SessionEntry

    from .runner import ExtensionRunner

__all__ = ["CompactionHooks"]


def _record(kind: str, value: CompactionPreparation | TreePreparation) -> Event:
    return Event(kind, **{to_snake(str(k)): v for k, v in value.to_json().items()})


def _camel_keys(result: JsonObject) -> JsonObject:
    return {to_camel(k): v for k, v in result.items()}


class CompactionHooks:
    """Sets the compaction controller's hook points to the extensions' session events."""

    def __init__(self, runner: ExtensionRunner) -> None:
        self._runner = runner

    def install(self, compaction: CompactionController) -> None:
        compaction.before_compact = self.before_compact
        compaction.on_compact = self.on_compact
        compaction.before_tree = self.before_tree
        compaction.on_tree = self.on_tree

    async def before_compact(
        self,
        preparation: CompactionPreparation,
        branch_entries: list[SessionEntry],
        custom_instructions: str | None,
        signal: AbortSignal,
    ) -> JsonObject | None:
        runner = self._runner
        if not runner.has_handlers("session_before_compact"):
            return None
        outcome = await runner.emit_session_before(
            "session_before_compact",
            preparation=_record("compaction_preparation", preparation),
            branch_entries=list(branch_entries),
            custom_instructions=custom_instructions,
            signal=signal,
        )
        if outcome.cancelled:
            return {"cancel": True}
        compaction = outcome.result.get("compaction")
        if isinstance(compaction, dict):
            return {"compaction": _camel_keys(compaction)}
        return None

    async def on_compact(self, entry: ContextTransformEntry, from_extension: bool) -> None:
        await self._runner.notify("session_compact", compaction_entry=entry, from_extension=from_extension)

    async def before_tree(self, preparation: TreePreparation, signal: AbortSignal) -> JsonObject | None:
        runner = self._runner
        # AgentSession.navigate runs next for the same move: it must not ask the extensions again.
        runner.tree_asked_for = preparation.target_id or "<root>"
        if not runner.has_handlers("session_before_tree"):
            return None
        outcome = await runner.emit_session_before(
            "session_before_tree", preparation=_record("tree_preparation", preparation), signal=signal
        )
        if outcome.cancelled:
            runner.tree_asked_for = None
            return {"cancel": True}
        return _camel_keys(outcome.result) if outcome.result else None

    async def on_tree(self, event: JsonObject) -> None:
        self._runner.tree_asked_for = None
        await self._runner.notify("session_tree", **{to_snake(k): v for k, v in event.items()})
