"""`AgentSession`'s side of compaction and branch summaries (see `pi_tui.compaction`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pi_tui.agent.events import AgentEvent, TurnEnd
from pi_tui.ai.stream import (
    AbortSignal,
)
from pi_tui.ai.types import (
    THINKING_LEVELS,
    AssistantMessage,
)
from pi_tui.context.envelope import ContextEnvelope

from ._host import SessionHost

if TYPE_CHECKING:
    from pi_tui.compaction.persist import CompactionResult
    from pi_tui.compaction.summarize import SummaryBackend
    from pi_tui.compaction.tokens import Count
    from pi_tui.resources.settings_schema import BranchSummarySettings, CompactionSettings

log = logging.getLogger(__name__)


class CompactionMixin(SessionHost):
    """Mixed into `AgentSession`; uses its attributes (session, agent, extensions, engine, …)."""

    # --- compaction (pi_tui.compaction) -------------------------------------------------------------
    # The runtime side of compaction and branch summaries lives in this block; elsewhere there is one
    # line each in __init__ (_init_compaction), _preflight and abort.

    def _init_compaction(self) -> None:
        from pi_tui.compaction.controller import CompactionController

        self.compaction = CompactionController(
            session=lambda: self.session_manager,
            model=lambda: self.agent.model,
            settings=self._compaction_settings,
            backend=self.compaction_backend,
            emit=self.emit,
            on_applied=self._after_compaction,
            branch_settings=self._branch_summary_settings,
            # The counts /context keeps (and the screens' work ahead made): a compaction after them
            # counts only the messages that are new, and each message once.
            counter=self._message_counter,
            # The engine extends its last replay: the size check after a compaction (no usage yet)
            # does not replay the whole path again.
            history=lambda: self.engine.replay().cached,
            estimate_after=self._estimate_after_compaction,
        )
        """Compaction triggers and hook points (``before_compact``, ``on_compact``, ``review_summary``,
        ``before_tree``, ``on_tree``), which the extension layer and UIs set."""
        self.agent.on_context_overflow = self.compaction.on_overflow
        self.agent.subscribe(self._on_compaction_agent_event)

    def _message_counter(self, create: bool) -> Count:
        """The session's remembering estimate of a message's tokens; with ``create`` False, the plain
        estimate while the session holds no counts (the per-request threshold check of a short run
        then loads nothing of ``/context``)."""
        if create or self._has_token_cache():
            return self._token_cache().estimate
        from pi_tui.ai.tokens import count_message_tokens

        return count_message_tokens

    def _estimate_after_compaction(self) -> int:
        from pi_tui.context.report import pi_context_estimate

        return pi_context_estimate(self.engine.replay(), self._message_counter(False))

    def _compaction_settings(self) -> CompactionSettings:
        from pi_tui.resources.settings_schema import CompactionSettings

        if self.settings is None:
            return CompactionSettings()
        model = self.agent.model  # compaction.modelOverrides: the current model's own token settings
        return self.settings.compaction_for(model.provider, model.id)

    def _branch_summary_settings(self) -> BranchSummarySettings:
        from pi_tui.resources.settings_schema import BranchSummarySettings

        return self.settings.branch_summary if self.settings is not None else BranchSummarySettings()

    async def _on_compaction_agent_event(self, event: AgentEvent) -> None:
        from pi_tui.agent.events import AgentStart

        if isinstance(event, AgentStart):
            self.compaction.reset_run()
        elif isinstance(event, TurnEnd):
            await self.compaction.after_turn(event.message)

    def _after_compaction(self) -> None:
        # The agent's history becomes the compacted context. A trailing error is the overflow being
        # retried: the loop already took it out of the history, so it stays out.
        messages = list(self.engine.replay().cached)
        while messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
            messages.pop()
        self.agent.messages = messages

    async def compaction_backend(self, with_prefix: bool = True) -> SummaryBackend:
        """The summariser's model, stream and key; ``with_prefix``: also the session's request, which a
        compaction's summary request extends (a branch summary is standalone and needs none: building
        it converts every message of the context)."""
        from pi_tui.compaction.summarize import SummaryBackend
        from pi_tui.context.request import to_llm_request

        model = self.agent.model
        # The request the provider would get next, minus its request-only tail: the summary request
        # extends it, so everything but the instruction is served from the prompt cache.
        base = (
            to_llm_request(self.panels.place(self.engine.replay()), list(self.tools)) if with_prefix else None
        )
        if self._base_stream_fn is not None:
            stream_fn = self._base_stream_fn
        else:
            from pi_tui.ai.registry import stream as stream_fn
        thinking = self.agent.thinking
        last = self.engine.last
        if last is not None and last.options.get("reasoning") in THINKING_LEVELS:
            thinking = last.options["reasoning"]
        return SummaryBackend(
            model=model,
            stream_fn=stream_fn,
            api_key=await self._api_key(model.provider),
            thinking=thinking,
            session_id=self.session_manager.id,
            base_request=base,
        )

    async def _compaction_preflight(
        self, env: ContextEnvelope, signal: AbortSignal
    ) -> ContextEnvelope | None:
        from pi_tui.ai.tokens import estimate_tokens
        from pi_tui.context.request import tool_tokens

        # The same estimate as before (chars/4 of each definition's JSON), kept per definition object.
        overhead = estimate_tokens(env.system_compiled) + sum(tool_tokens(t) for t in env.tools)
        if await self.compaction.preflight(overhead, signal):
            return self.engine.replay()
        return None

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Compact now (``/compact [instructions]``); a running turn is aborted first, as pi does.

        Returns:
            The `pi_tui.compaction.CompactionResult`.

        Raises:
            pi_tui.compaction.CompactionError: "Nothing to compact (session too small)", "Already
                compacted", "Compaction cancelled" or "Summarization failed: …".
        """
        if self.agent.is_streaming:
            self.agent.abort()
            await self.agent.wait_for_idle()
        return await self.compaction.compact(custom_instructions, reason="manual")

    async def navigate_with_summary(
        self,
        target_id: str | None,
        summarize: bool,
        custom_instructions: str | None = None,
        *,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> str | None:
        """`navigate` with pi's branch summary of the path being left (``/tree`` → "Summarize").

        Extensions see ``before_tree`` (cancel, or supply the summary) and ``on_tree``.

        Returns:
            The text to put in the editor, or None.

        Raises:
            pi_tui.compaction.CompactionCancelled: aborted, or an extension cancelled (nothing moved).
            pi_tui.compaction.CompactionError: the summary failed (nothing moved).
        """
        if not summarize:
            return await self.navigate(target_id)
        self._require_idle("move in the session tree")
        old_leaf = self.session_manager.get_leaf_id()
        result, prep = await self.compaction.summarize_branch(
            target_id,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        summary = result.summary if result is not None else None
        editor_text = await self.navigate(target_id, summary=summary)
        new_leaf = self.session_manager.get_leaf_id()
        if prep.label and new_leaf is not None:
            self.label(new_leaf, prep.label)
        if self.compaction.on_tree is not None:
            try:
                await self.compaction.on_tree(
                    {
                        "newLeafId": new_leaf,
                        "oldLeafId": old_leaf,
                        "summaryEntry": self.session_manager.get_entry(new_leaf)
                        if summary and new_leaf
                        else None,
                        "fromExtension": bool(result is not None and result.from_hook),
                    }
                )
            except Exception:
                log.exception("on_tree hook failed")
        return editor_text
