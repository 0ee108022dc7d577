"""`AgentSession`'s session-tree operations: navigate, label, name, switch, new, fork."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.ai.thinking import clamp_thinking_level
from pi_tui.ai.types import (
    UserMessage,
    message_text,
)
from pi_tui.session.entries import CustomMessageEntry, MessageEntry
from pi_tui.session.errors import EntryNotFoundError

from ._host import PendingState, SessionHost
from .events import SessionSwitched, SessionTreeMoved

if TYPE_CHECKING:
    from pi_tui.session.manager import SessionManager

    from .cwd_services import CwdServices

log = logging.getLogger(__name__)


class SessionTreeMixin(SessionHost):
    """Mixed into `AgentSession`; uses its attributes (session, agent, extensions, engine, …)."""

    # --- the session tree -------------------------------------------------------------------------

    def _require_idle(self, action: str) -> None:
        if self.agent.is_streaming:
            raise RuntimeError(f"Cannot {action} while the agent is working; wait for it or abort first")

    def _rebuild_messages(self) -> None:
        """The agent's history is what the next request will carry: the envelope replayed from the
        session (compactions, detached history and persisted transforms applied)."""
        self.agent.messages = list(self.engine.replay().cached)

    async def navigate(self, entry_id: str | None, *, summary: str | None = None) -> str | None:
        """Move the active leaf to ``entry_id`` (pi's ``/tree`` selection) and rebuild the agent's messages.

        Selecting a user message (or a custom message) moves the leaf to its parent, so the next prompt
        replaces it, and returns its text for the editor; any other entry becomes the leaf itself. None
        moves before the first entry (an empty context). With ``summary``, a branch summary of the path
        being left is appended at the new position. Nothing is written unless a summary is given.

        Returns:
            The text to put in the editor, or None.

        Raises:
            EntryNotFoundError: ``entry_id`` is not in this session.
            RuntimeError: the agent is running.
        """
        self._require_idle("move in the session tree")
        editor_text: str | None = None
        target = entry_id
        if entry_id is not None:
            entry = self.session_manager.get_entry(entry_id)
            if entry is None:
                raise EntryNotFoundError(entry_id)
            if entry_id == self.session_manager.get_leaf_id() and summary is None:
                return None
            message = entry.message if isinstance(entry, MessageEntry) else None
            if isinstance(message, UserMessage) or isinstance(entry, CustomMessageEntry):
                target = entry.parent_id
                editor_text = message_text(message if message is not None else entry)
        # --- extensions: session_before_tree may cancel, or give the summary and a label ---
        old_leaf, tree_label = self.session_manager.get_leaf_id(), None
        if self.extensions is not None:
            summary, tree_label = await self.extensions.before_tree(entry_id, old_leaf, summary)
        # --- end extensions ---
        if summary is not None:
            self.session_manager.branch_with_summary(target, summary)
        elif target is None:
            self.session_manager.reset_leaf()
        else:
            self.session_manager.branch(target)
        self._rebuild_messages()
        await self.emit(SessionTreeMoved(self.session_manager.get_leaf_id()))
        if self.extensions is not None:  # extensions
            await self.extensions.after_tree(old_leaf, tree_label, summary is not None)
        return editor_text

    def label(self, entry_id: str, label: str | None) -> None:
        """Label an entry (shown in the tree, never sent to the model); empty or None clears the label."""
        self.session_manager.append_label(entry_id, label)

    def set_session_name(self, name: str) -> None:
        """Name the session (shown by the resume list instead of the first message)."""
        self.session_manager.append_session_info(name)

    async def switch_session(self, manager: SessionManager) -> None:
        """Rebind the runtime to another `SessionManager` (resume, fork, new).

        Aborts a running turn, clears the queues, closes the current session, restores the new one's
        model (when it is known and has a key) and thinking level, and rebuilds the agent's messages from
        its active path.
        """
        # A session recorded in another directory works there, as pi: it is checked (and what works
        # there is built) before anything changes, so a refusal leaves the current session as it was.
        services, notes = self._services_for_switch(manager)
        # --- extensions: session_before_switch for a resume (new/fork send their own) ---
        reason, self._switch_reason = self._switch_reason, None
        if self.extensions is not None and reason is None and manager is not self.session_manager:
            await self.extensions.before_switch("resume", str(manager.path or ""))
        # --- end extensions ---
        if self.agent.is_streaming:
            self.agent.abort()
            await self.agent.wait_for_idle()
        self.agent.clear_queues()
        old = self.session_manager
        if manager is old:
            return
        # As pi builds a new runtime for every switch: the extensions loaded end here, and those of the
        # directory the session works in are loaded afresh once it has switched.
        reason = reason or "resume"
        replaced = self.extensions is not None or services is not None
        if self.extensions is not None:
            await self.extensions.leave_session(reason, str(manager.path) if manager.path else None)
        self.cache_warmer.cancel()  # the cache worth keeping warm was the session's we leave, as pi's runtime
        restored = manager.restore_state()
        model = self.agent.model
        if restored.model is not None and self.registry is not None:
            found = self.registry.find(restored.model.provider, restored.model.model_id)
            if found is not None and (
                self._base_stream_fn is not None
                or not self.registry.requires_api_key(found)
                or self.registry.get_api_key(found)
            ):
                model = found
        # the level the session file recorded, as it was written (the clamp fits it to the model)
        recorded = restored.thinking_level
        thinking = clamp_thinking_level(model, recorded if restored.has_messages else self.agent.thinking)
        old.close()
        self.session_manager = manager
        self.switch_warnings = notes
        if services is not None:
            self._work_in(services)
        self.agent.model = model
        self.agent.thinking = thinking
        self.engine.last = None
        self.engine.ledger.reset()  # the cache ledger is the session's: the new one starts afresh
        self._rebuild_messages()
        self._pending_state = PendingState()  # unwritten changes belonged to the session we left
        self._record_model_if_changed(restored, model, thinking)
        self.restore_panel_layouts()
        if replaced:
            # the extensions of the directory the session works in: its project's own once trusted there
            previous = str(old.path) if old.path else None
            self.switch_warnings += await self._extensions_enter_session(reason, previous)
        await self.emit(SessionSwitched(manager.id, str(manager.path or "")))
        if self.extensions is not None:  # extensions written to the older API
            await self.extensions.after_switch(reason, str(old.path or ""))

    def _services_for_switch(self, manager: SessionManager) -> tuple[CwdServices | None, list[str]]:
        """What works in the directory ``manager`` records, when that is not this one (None: stay).

        Raises:
            MissingSessionCwdError: that directory is gone; the caller may ask the user and call again
                after ``manager.work_in(session.cwd)`` (the manager is left open).
        """
        notes: list[str] = []
        recorded = manager.cwd
        if not recorded or self.services_for is None or manager is self.session_manager:
            return None, notes
        target = Path(recorded)
        if not target.is_dir():
            from .session_cwd import MissingSessionCwdError

            raise MissingSessionCwdError(manager.path, recorded, self.cwd)
        target = target.resolve()
        if target == Path(self.cwd).resolve():
            return None, notes
        return self.services_for(target, notes), notes

    def _work_in(self, services: CwdServices) -> None:
        """Rebind what depends on the working directory to ``services`` (built for another one)."""
        from pi_tui.tools import ALL_TOOL_NAMES

        self.cwd = services.cwd
        self.settings = services.settings
        self.resources = services.resources
        self.checkpoints = services.checkpointer
        self.sandbox = services.sandbox
        # the built-in tools work in the new directory; tools extensions registered are kept
        kept = {name: tool for name, tool in self.tools.items() if name not in ALL_TOOL_NAMES}
        self.tools = {**{n: t for n, t in services.tools.items() if n in self.tools}, **kept}
        self.agent.tools = self._loaded_tools()
        self.invalidate_system_prompt()

    def new_session_dir(self) -> Path | None:
        """The folder of this folder's sessions: where ``/new`` files and what ``/resume`` lists first.

        It stays this run's folder after resuming a session of another project (the tools keep working
        here), so a new session is never filed under the other project. None for an in-memory session.
        """
        return self.session_manager.session_dir_for(self.cwd)

    async def new_session(self, *, parent_session: str | None = None) -> None:
        """Start a fresh session in the same place (``/new``); nothing is written before an answer.

        ``parent_session`` (RPC ``new_session``) is recorded in the new header's ``parentSession``.
        """
        from pi_tui.session import SessionManager

        if self.extensions is not None:  # extensions: may raise CancelledByExtension
            await self.extensions.before_switch("new", None)
        directory = self.new_session_dir()
        if self.session_manager.path is None or directory is None:
            fresh = SessionManager.in_memory(self.cwd, parent_session=parent_session)
        else:
            fresh = SessionManager.create(self.cwd, session_dir=directory, parent_session=parent_session)
        self._switch_reason = "new"
        await self.switch_session(fresh)

    async def fork(self, entry_id: str) -> str | None:
        """Continue in a new session holding the path up to ``entry_id`` (pi's ``/fork``).

        The new file's header names this session as its parent; this file is not changed. Forking at a
        user message leaves that message out and returns its text for the editor, as pi does.

        Raises:
            EntryNotFoundError: ``entry_id`` is not in this session.
        """
        entry = self.session_manager.get_entry(entry_id)
        if entry is None:
            raise EntryNotFoundError(entry_id)
        message = entry.message if isinstance(entry, MessageEntry) else None
        leaf: str | None = entry_id
        editor_text: str | None = None
        if isinstance(message, UserMessage):
            leaf = entry.parent_id
            editor_text = message_text(message)
        # --- extensions: session_before_fork may cancel or skip restoring the conversation ---
        skip_restore, kept = False, list(self.agent.messages)
        if self.extensions is not None:
            skip_restore = await self.extensions.before_fork(entry_id)
        self._switch_reason = "fork"
        # --- end extensions ---
        await self.switch_session(self.session_manager.create_branched_session(leaf))
        if skip_restore:
            self.agent.messages = kept
        return editor_text

    async def clone(self) -> None:
        """Continue in a copy of the current branch, up to and including the leaf (pi's ``/clone``).

        Raises:
            ValueError: the session has no entries yet.
        """
        leaf = self.session_manager.get_leaf_id()
        if leaf is None:
            raise ValueError("Cannot clone session: no current entry selected")
        if self.extensions is not None:  # extensions: may raise CancelledByExtension
            await self.extensions.before_fork(leaf)
        self._switch_reason = "fork"
        await self.switch_session(self.session_manager.create_branched_session(leaf))
