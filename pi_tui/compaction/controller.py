"""`CompactionController`: when to compact, how, and who gets a say (the runtime owns one per session).

Triggers (context pipeline steps 3 and 8, pi §6.1):

- **threshold**, after a turn ends (`after_turn`) and before a request is sent (`preflight`, e.g. after a
  resume): ``context tokens > context window − reserveTokens``. No retry: the run simply goes on from the
  compacted context.
- **overflow**, when the provider rejects a request as too long (`on_overflow`, the agent loop's
  ``on_context_overflow``): compact, and the loop retries exactly once. A second overflow ends the run
  with `OVERFLOW_RECOVERY_FAILED`.
- **manual**, ``/compact [instructions]`` (`compact`).

Hook points, plain async callables the extension layer (or a UI) sets:

- ``before_compact(preparation, branch_entries, custom_instructions, signal)`` → ``{"cancel": True}``,
  ``{"compaction": {summary, firstKeptEntryId, tokensBefore, details}}`` (an extension's own summary) or
  None (observe only: the default summary is used);
- ``on_compact(entry, from_extension)`` after the entry is written;
- ``review_summary(summary)`` → None (apply unchanged), a replacement text, or ``""`` (cancel): lets a UI
  show the summary and let the user edit it before it is applied;
- ``before_tree(preparation, signal)`` / ``on_tree(event)`` around branch summaries.

Events go out through ``emit(type, data)``: ``auto_compaction_start {reason}``, ``auto_compaction_end
{result?, aborted, willRetry, errorMessage?}`` and, after every applied compaction, ``compaction
{entryId, result, reason, fromExtension}``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pi_tui.agent.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    CompactionApplied,
    RuntimeEvent,
)
from pi_tui.ai.errors import is_context_overflow
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.tokens import count_message_tokens
from pi_tui.ai.types import AssistantMessage, Message, Model
from pi_tui.resources.settings_schema import BranchSummarySettings, CompactionSettings
from pi_tui.session.entries import ContextTransformEntry, SessionEntry
from pi_tui.util.json_types import JsonObject

from .errors import (
    OVERFLOW_RECOVERY_FAILED,
    AlreadyCompacted,
    CompactionCancelled,
    CompactionError,
    NothingToCompact,
)
from .path import compaction_mark, entry_id
from .tokens import Count, context_tokens, should_compact

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager

    # Loaded when a compaction or branch summary runs: a run that stays under the threshold (every
    # short run) only needs the threshold check.
    from .branch_summary import BranchSummaryResult, TreePreparation
    from .persist import CompactionResult
    from .prepare import CompactionPreparation
    from .summarize import SummaryBackend

__all__ = [
    "CompactionController",
    "BeforeCompactHook",
    "OnCompactHook",
    "ReviewSummaryHook",
    "BeforeTreeHook",
    "OnTreeHook",
]

log = logging.getLogger(__name__)

BeforeCompactHook = Callable[["CompactionPreparation", list[SessionEntry], str | None, AbortSignal], Awaitable[Any]]
OnCompactHook = Callable[[ContextTransformEntry, bool], Awaitable[None]]
ReviewSummaryHook = Callable[[str], Awaitable[str | None]]
BeforeTreeHook = Callable[["TreePreparation", AbortSignal], Awaitable[Any]]
OnTreeHook = Callable[[JsonObject], Awaitable[None]]
EmitFn = Callable[[RuntimeEvent], Awaitable[None]]


class CompactionController:
    """Runs compactions for one runtime.

    Args:
        session: returns the current `SessionManager` (it changes on resume/new/fork).
        model: returns the current model.
        settings: returns the ``compaction.*`` settings.
        backend: builds the `SummaryBackend` (model, key, stream function, the session's base request).
        emit: sends a runtime event.
        on_applied: called after a compaction was written (the runtime rebuilds its messages).
        branch_settings: returns the ``branchSummary.*`` settings.
        counter: ``counter(create)`` returns how to estimate a message's tokens: the session's
            counter, which remembers each message's estimate, so a compaction counts only what nothing
            counted before (once). The checks before every request pass ``create=False``: they read
            the counts if the session has them, and never make the counter (a short run needs none).
        history: returns the active path's replayed history (the runtime's context engine extends its
            last replay), for the size check when no usage measured the context (after a compaction);
            None: the path is replayed for it.
        estimate_after: returns pi's estimate of the context once a compaction is applied (its
            ``estimatedTokensAfter``); None leaves it out of the result.
    """

    def __init__(
        self,
        *,
        session: Callable[[], SessionManager],
        model: Callable[[], Model],
        settings: Callable[[], CompactionSettings],
        backend: Callable[[bool], Awaitable[SummaryBackend]],
        emit: EmitFn,
        on_applied: Callable[[], None] = lambda: None,
        branch_settings: Callable[[], BranchSummarySettings] = BranchSummarySettings,
        counter: Callable[[bool], Count] = lambda create: count_message_tokens,
        history: Callable[[], Sequence[Message]] | None = None,
        estimate_after: Callable[[], int] | None = None,
    ) -> None:
        self._session = session
        self._model = model
        self._settings = settings
        self._backend = backend
        self._emit = emit
        self._on_applied = on_applied
        self._branch_settings = branch_settings
        self._counter = counter
        self._history = history
        self._estimate_after = estimate_after
        # The preparation the threshold check made, with the leaf it is for: the compaction it starts
        # uses it instead of preparing the same path again.
        self._prepared: tuple[str | None, CompactionPreparation] | None = None
        self.before_compact: BeforeCompactHook | None = None
        self.on_compact: OnCompactHook | None = None
        self.review_summary: ReviewSummaryHook | None = None
        self.before_tree: BeforeTreeHook | None = None
        self.on_tree: OnTreeHook | None = None
        self._signal: AbortSignal | None = None
        self._overflow_attempted = False
        self._failed_at: str | None = None  # leaf of the last failed auto compaction: don't retry it
        self.last_result: CompactionResult | None = None

    # --- state --------------------------------------------------------------------------------------

    @property
    def is_compacting(self) -> bool:
        return self._signal is not None

    def abort(self) -> None:
        """Cancel a running compaction or branch summary (no-op when none runs)."""
        if self._signal is not None:
            self._signal.abort()

    def reset_run(self) -> None:
        """A new agent run starts: the once-per-prompt overflow recovery is available again."""
        self._overflow_attempted = False

    def settings(self) -> CompactionSettings:
        return self._settings()

    def message_counter(self) -> Count:
        """How a compaction estimates a message's tokens: the session's counter, which remembers them."""
        return self._counter(True)

    def context_tokens(self, overhead_tokens: int = 0) -> int:
        """The active path's context size (see `pi_tui.compaction.tokens.context_tokens`)."""
        return context_tokens(
            self._session().get_branch(),
            overhead_tokens=overhead_tokens,
            count=self._counter(False),
            history=self._history,
        )

    # --- the compaction itself --------------------------------------------------------------------

    async def compact(
        self,
        custom_instructions: str | None = None,
        *,
        reason: str = "manual",
        signal: AbortSignal | None = None,
    ) -> CompactionResult:
        """Summarise the old part of the active path and append the compaction entry.

        Raises:
            AlreadyCompacted: the newest entry already is a compaction.
            NothingToCompact: nothing is old enough to summarise.
            CompactionCancelled: aborted, or cancelled by an extension or the review hook.
            CompactionError: the summary could not be made (``"Summarization failed: …"``) or applied.
        """
        if self._signal is not None:
            raise CompactionError("A compaction is already running")
        own = AbortSignal()
        self._signal = own
        unlink = signal.add_listener(own.abort) if signal is not None else None
        try:
            return await self._compact(custom_instructions, reason, own)
        finally:
            self._signal = None
            if unlink is not None:
                unlink()

    async def _compact(
        self, custom_instructions: str | None, reason: str, signal: AbortSignal
    ) -> CompactionResult:
        from .persist import CompactionResult, append_compaction
        from .prepare import prepare_compaction
        from .summarize import summarize_compaction

        session = self._session()
        path = session.get_branch()
        if path and compaction_mark(path[-1]) is not None:
            raise AlreadyCompacted()
        count = self._counter(True)
        prepared, self._prepared = self._prepared, None
        if prepared is not None and path and prepared[0] == entry_id(path[-1]):
            prep: CompactionPreparation | None = prepared[1]
        else:
            prep = prepare_compaction(path, self._settings(), count)
        if prep is None:
            raise NothingToCompact()
        result = await self._extension_result(prep, path, custom_instructions, signal)
        if result is None:
            backend = await self._backend(True)
            backend.count = count
            if backend.prefix_tokens is None:
                backend.prefix_tokens = prep.tokens_before  # the context's size, as pi measures it
            outcome = await summarize_compaction(
                prep, backend, signal=signal, custom_instructions=custom_instructions
            )
            details = {"readFiles": outcome.read_files, "modifiedFiles": outcome.modified_files}
            result = CompactionResult(outcome.summary, prep.first_kept_entry_id, prep.tokens_before, details)
        if self.review_summary is not None:
            reviewed = await self.review_summary(result.summary)
            if reviewed is not None:
                if not reviewed.strip():
                    raise CompactionCancelled()
                result = replace(result, summary=reviewed)
        if signal.aborted:
            raise CompactionCancelled()
        if session is not self._session() or session.get_leaf_id() != entry_id(path[-1]):
            raise CompactionError("The session changed while the summary was being written; compact again")
        entry = append_compaction(session, result)
        self._on_applied()
        if self._estimate_after is not None:  # pi's estimatedTokensAfter, of the context just applied
            result = replace(result, estimated_tokens_after=self._estimate_after())
        self.last_result = result
        if self.on_compact is not None:
            try:
                await self.on_compact(entry, result.from_hook)
            except Exception:
                log.exception("on_compact hook failed")
        await self._emit(
            CompactionApplied(
                entry_id=entry_id(entry),
                reason=reason,
                from_extension=result.from_hook,
                result=result.to_json(),
            )
        )
        return result

    async def _extension_result(
        self,
        prep: CompactionPreparation,
        path: list[SessionEntry],
        custom_instructions: str | None,
        signal: AbortSignal,
    ) -> CompactionResult | None:
        if self.before_compact is None:
            return None
        from .persist import CompactionResult

        try:
            answer = await self.before_compact(prep, list(path), custom_instructions, signal)
        except Exception:
            # A broken extension must not block compaction: the default summary is used.
            log.exception("before_compact hook failed; using the default summary")
            return None
        if signal.aborted:
            raise CompactionCancelled()
        if not isinstance(answer, dict):
            return None
        if answer.get("cancel"):
            raise CompactionCancelled()
        supplied = answer.get("compaction")
        if not isinstance(supplied, dict):
            return None
        summary = supplied.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise CompactionError("An extension supplied a compaction without a summary")
        first_kept = supplied.get("firstKeptEntryId") or prep.first_kept_entry_id
        if not any(entry_id(e) == first_kept for e in path):
            raise CompactionError(
                f"An extension's compaction keeps from {first_kept!r}, which is not on the path"
            )
        tokens = supplied.get("tokensBefore")
        return CompactionResult(
            summary,
            str(first_kept),
            int(tokens) if isinstance(tokens, int) else prep.tokens_before,
            supplied.get("details"),
            from_hook=True,
        )

    # --- automatic triggers -----------------------------------------------------------------------

    def _enabled(self) -> bool:
        return bool(self._settings().enabled)

    def _compactable(self, path: list[SessionEntry]) -> bool:
        if not path or compaction_mark(path[-1]) is not None:
            return False
        from .prepare import prepare_compaction

        prep = prepare_compaction(path, self._settings(), self._counter(True))
        self._prepared = (entry_id(path[-1]), prep) if prep is not None else None
        return prep is not None

    async def _auto(self, reason: str, *, will_retry: bool, signal: AbortSignal | None = None) -> bool:
        leaf = self._session().get_leaf_id()
        await self._emit(AutoCompactionStart(reason))
        try:
            result = await self.compact(reason=reason, signal=signal)
        except CompactionCancelled:
            self._failed_at = leaf  # not again before the conversation moves on
            await self._emit(AutoCompactionEnd(aborted=True, will_retry=False))
            return False
        except CompactionError as exc:
            self._failed_at = leaf
            await self._emit(AutoCompactionEnd(aborted=False, will_retry=False, error_message=str(exc)))
            return False
        self._failed_at = None
        await self._emit(AutoCompactionEnd(aborted=False, will_retry=will_retry, result=result.to_json()))
        return True

    async def _threshold(self, overhead_tokens: int, signal: AbortSignal | None) -> bool:
        if not self._enabled() or self._signal is not None:
            return False
        session = self._session()
        if session.get_leaf_id() is not None and session.get_leaf_id() == self._failed_at:
            return False
        # A deferred history (`SessionManager.open`'s ``defer_history``) keeps the usage this reads from
        # in its built end: it is built only when a compaction is due.
        path = session.get_kept_branch()
        tokens = context_tokens(
            path, overhead_tokens=overhead_tokens, count=self._counter(False), history=self._history
        )
        if not should_compact(tokens, self._model().context_window, self._settings()):
            return False
        if session.deferred_history is not None:
            session.complete_history()
            path = session.get_branch()
        if not self._compactable(path):
            return False
        return await self._auto("threshold", will_retry=False, signal=signal)

    async def after_turn(self, message: AssistantMessage) -> bool:
        """Step 8, after a turn ended: report a failed overflow recovery, or compact above the threshold.

        Returns:
            True when a compaction was applied.
        """
        if message.stop_reason == "aborted":
            return False
        if message.stop_reason == "error":
            if self._overflow_attempted and is_context_overflow(message, self._model().context_window):
                # The loop retried once after compacting and the provider still refused the request.
                self._overflow_attempted = False
                await self._emit(
                    AutoCompactionEnd(aborted=False, will_retry=False, error_message=OVERFLOW_RECOVERY_FAILED)
                )
            return False
        self._overflow_attempted = False
        return await self._threshold(0, None)

    async def preflight(self, overhead_tokens: int = 0, signal: AbortSignal | None = None) -> bool:
        """Step 3, before a request is sent: compact when it would already be over the threshold.

        Args:
            overhead_tokens: the request's system prompt and tools (counted when no usage measured them).

        Returns:
            True when a compaction was applied (the caller rebuilds the envelope).
        """
        return await self._threshold(overhead_tokens, signal)

    async def on_overflow(self, message: AssistantMessage) -> bool:
        """The agent loop's ``on_context_overflow``: compact so the request can be retried once.

        Returns:
            True when the history was compacted (the loop retries).
        """
        model = self._model()
        if not self._enabled() or self._signal is not None:
            return False
        if (message.provider, message.model) != (model.provider, model.id):
            return False  # an overflow of another model says nothing about this one's window
        if self._overflow_attempted:
            await self._emit(
                AutoCompactionEnd(aborted=False, will_retry=False, error_message=OVERFLOW_RECOVERY_FAILED)
            )
            return False
        session = self._session()
        if session.deferred_history is not None:
            session.complete_history()
        if not self._compactable(session.get_branch()):
            # nothing is old enough to summarise (a first prompt too long on its own): as pi, no
            # compaction starts and fails; the provider's refusal is what the user is told
            return False
        self._overflow_attempted = True
        return await self._auto("overflow", will_retry=True)

    # --- branch summaries -------------------------------------------------------------------------

    async def summarize_branch(
        self,
        target_id: str | None,
        *,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> tuple[BranchSummaryResult | None, TreePreparation]:
        """Summarise the branch being left for ``target_id`` (nothing is written here).

        Returns:
            ``(result, preparation)``; the result is None when there is nothing to summarise, and has
            ``from_hook`` set when an extension supplied it. ``preparation`` carries the label and
            instructions as extensions left them.

        Raises:
            CompactionCancelled: aborted, or an extension cancelled.
            CompactionError: the summariser failed.
        """
        if self._signal is not None:
            raise CompactionError("A compaction or branch summary is already running")
        from .branch_summary import (
            BranchSummaryResult,
            TreePreparation,
            collect_entries_for_branch_summary,
            generate_branch_summary,
        )

        session = self._session()
        entries, ancestor = collect_entries_for_branch_summary(session, session.get_leaf_id(), target_id)
        prep = TreePreparation(
            target_id,
            session.get_leaf_id(),
            ancestor,
            entries,
            True,
            custom_instructions,
            replace_instructions,
            label,
        )
        own = AbortSignal()
        self._signal = own
        try:
            if self.before_tree is not None:
                try:
                    answer = await self.before_tree(prep, own)
                except Exception:
                    log.exception("before_tree hook failed; summarising as usual")
                    answer = None
                if isinstance(answer, dict):
                    if answer.get("cancel"):
                        raise CompactionCancelled("Navigation cancelled")
                    if "customInstructions" in answer:
                        prep.custom_instructions = answer["customInstructions"]
                    if "replaceInstructions" in answer:
                        prep.replace_instructions = answer["replaceInstructions"]
                    if "label" in answer:
                        prep.label = answer["label"]
                    supplied = answer.get("summary")
                    if isinstance(supplied, dict) and isinstance(supplied.get("summary"), str):
                        details = supplied.get("details")
                        result = BranchSummaryResult(summary=supplied["summary"], from_hook=True)
                        if isinstance(details, dict):
                            result.read_files = list(details.get("readFiles") or [])
                            result.modified_files = list(details.get("modifiedFiles") or [])
                        return result, prep
            if not entries:
                return None, prep
            backend = await self._backend(False)  # a branch summary is a standalone request
            backend.count = self._counter(True)
            result = await generate_branch_summary(
                entries,
                backend,
                signal=own,
                custom_instructions=prep.custom_instructions,
                replace_instructions=bool(prep.replace_instructions),
                reserve_tokens=self._branch_settings().reserve_tokens,
            )
        finally:
            self._signal = None
        if result.aborted:
            raise CompactionCancelled("Branch summary cancelled")
        if result.error is not None:
            raise CompactionError(result.error)
        return result, prep
