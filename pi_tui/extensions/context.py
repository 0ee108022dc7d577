"""``ctx``: what a handler can see and do besides its event.

Every handler gets an `ExtensionContext` as its second argument; command handlers get a
`CommandContext`, which adds the session-changing actions (they are unsafe from inside the agent loop,
so event handlers do not get them).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeVar

from pi_tui.util.json_types import JsonValue

from .events import CancelledByExtension, to_snake

if TYPE_CHECKING:
    from pi_tui.ai.model_registry import ModelRegistry
    from pi_tui.ai.types import Model
    from pi_tui.checkpoints import Checkpointer
    from pi_tui.resources.trust_store import TrustState
    from pi_tui.session.entries import SessionEntry
    from pi_tui.session.manager import SessionManager

    from .extension import Extension
    from .host import SessionHost
    from .runner import ExtensionRunner

T = TypeVar("T")

__all__ = [
    "ExtensionContext",
    "CommandContext",
    "SessionView",
    "ContextUsage",
    "FeatureUnavailableError",
    "SessionActionResult",
]


class SessionActionResult(TypedDict):
    """What a `CommandContext` session action returns: whether an extension's ``session_before_*``
    handler cancelled it and, for a fork or a move in the tree, the text to put in the editor."""

    cancelled: bool
    text: NotRequired[str | None]


class FeatureUnavailableError(NotImplementedError):
    """The runtime this extension runs in does not offer the requested action (yet)."""


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """``ctx.get_context_usage()``: estimated tokens of the next request against the context window."""

    tokens: int | None
    context_window: int
    percent: float | None

    def __getitem__(self, key: str) -> int | float | None:
        # pi's dict-style read: the extension names the field, camelCase or snake_case
        return getattr(self, to_snake(key))


class SessionView:
    """A read-only view of the session (``ctx.session_manager``). Entries are copies."""

    def __init__(self, runtime: SessionHost) -> None:
        self._runtime = runtime

    @property
    def _manager(self) -> SessionManager:
        return self._runtime.session_manager

    def get_entries(self) -> list[SessionEntry]:
        """Every entry in file order."""
        return copy.deepcopy(self._manager.get_entries())

    def get_branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """The entries from the root to ``leaf_id`` (default: the current leaf)."""
        return copy.deepcopy(self._manager.get_branch(leaf_id))

    def get_custom_data(self, custom_type: str) -> list[JsonValue]:
        """The ``data`` of the current branch's ``custom`` entries of ``custom_type`` (what
        ``pi.append_entry(custom_type, data)`` wrote), oldest first: an extension's saved state."""
        from pi_tui.session.entries import CustomEntry

        return [
            copy.deepcopy(entry.data)
            for entry in self._manager.get_branch()
            if isinstance(entry, CustomEntry) and entry.custom_type == custom_type
        ]

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return copy.deepcopy(self._manager.get_entry(entry_id))

    def get_leaf_id(self) -> str | None:
        return self._manager.get_leaf_id()

    def get_label(self, entry_id: str) -> str | None:
        return self._manager.get_label(entry_id)

    def get_session_name(self) -> str | None:
        return self._manager.name

    @property
    def session_id(self) -> str:
        return self._manager.id

    @property
    def session_file(self) -> str | None:
        path = self._manager.path
        return str(path) if path is not None else None


class ExtensionContext:
    """The context of an event handler.

    Attributes:
        cwd: The working directory (a string, as in pi).
        has_ui: Whether a user can answer dialogs (interactive and RPC modes).
        mode: ``"tui"``, ``"rpc"``, ``"json"`` or ``"print"``.
        ui: Dialogs and status (see `pi_tui.extensions.ui.UIBridge`); print/json decline everything.
        session_manager: A read-only `SessionView`.
    """

    def __init__(self, runner: ExtensionRunner, extension: Extension) -> None:
        self._runner = runner
        self._extension = extension
        self.session_manager = SessionView(runner.session)

    @property
    def _session(self) -> SessionHost:
        return self._runner.session

    def is_for(self, extension: Extension) -> bool:
        """Whether this context was made for ``extension`` (a reloaded extension gets a new context)."""
        return self._extension is extension

    @property
    def cwd(self) -> str:
        return str(self._session.cwd)

    @property
    def checkpoints(self) -> Checkpointer | None:
        """The session's file checkpoint store (None when checkpoints are off or no session is bound);
        `pi_tui.extensions.api.track_file_changes` records an extension tool's changes through it."""
        session = self._runner.session
        return session.checkpoints if session is not None else None

    @property
    def mode(self) -> str:
        return str(self._session.mode)

    @property
    def has_ui(self) -> bool:
        return self.mode in ("tui", "rpc")

    @property
    def ui(self) -> Any:
        from .ui import UIProxy

        return UIProxy(self._session.ui, self._runner.ui_state)

    @property
    def model(self) -> Model:
        return self._session.model

    @property
    def model_registry(self) -> ModelRegistry:
        return self._session.registry

    @property
    def extension_path(self) -> str:
        """This extension's file or package folder."""
        return self._extension.path

    def is_idle(self) -> bool:
        return not self._session.is_streaming

    def abort(self) -> None:
        """Abort the running agent (no-op when idle)."""
        self._session.abort()

    def has_pending_messages(self) -> bool:
        agent = self._session.agent
        return bool(agent.steering_queue or agent.follow_up_queue)

    def is_project_trusted(self) -> bool:
        """Whether this project counts as trusted, as pi reports it: the user trusts it (its ``.pi/``
        extensions and settings are honoured), or it holds nothing that loads only once trusted, neither
        pi's files nor those an extension named with ``pi.register_trust_requiring_files`` (checked at
        each call), and ``--no-approve`` was not given. See `project_trust` for which of the two.
        """
        return self.project_trust().reported_trusted

    def project_trust(self) -> TrustState:
        """Where this project stands: ``TrustState.TRUSTED`` (a decision trusts it),
        ``NOTHING_TO_TRUST`` (reported trusted, nothing in it needs trust) or ``UNTRUSTED``."""
        from pi_tui.resources.trust_store import TrustState

        settings = self._session.settings
        if settings is None:
            return TrustState.UNTRUSTED
        return settings.trust_state(self._session.cwd, extra=self._runner.registry.trust_requiring_files())

    def get_system_prompt(self) -> str:
        """The system prompt the next request uses (including a ``before_agent_start`` override)."""
        return str(self._session.system_prompt())

    def get_context_usage(self) -> ContextUsage:
        """Tokens of the last answer's request plus an estimate of what came after it."""
        from pi_tui.ai.tokens import count_message_tokens
        from pi_tui.ai.types import AssistantMessage

        messages = self._session.messages
        window = int(self._session.model.context_window or 0)
        tokens = 0
        start = 0
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage):
                usage = message.usage
                if message.stop_reason not in ("error", "aborted"):
                    tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
                    start = index + 1
                    break
        tokens += sum(count_message_tokens(m) for m in messages[start:])
        percent = (tokens / window * 100) if window else None
        return ContextUsage(tokens, window, percent)

    async def compact(self, custom_instructions: str | None = None) -> Any:
        """Compact the session now (``/compact``).

        Raises:
            FeatureUnavailableError: This runtime has no compaction.
        """
        compact = _require(self._session, "Compaction", lambda session: session.compact)
        return await compact(custom_instructions)


def _require(session: Any, what: str, method: Callable[[Any], T]) -> T:
    """``method(session)``: one of the runtime's actions, which a runtime without it does not offer."""
    try:
        return method(session)
    except AttributeError:
        raise FeatureUnavailableError(f"{what} is not available in this version of pi-tui") from None


class CommandContext(ExtensionContext):
    """The context of a command handler: `ExtensionContext` plus actions that change the session.

    The session actions return ``{"cancelled": bool}`` (an extension's ``session_before_*`` handler may
    cancel them).
    """

    async def wait_for_idle(self) -> None:
        """Return once the agent has finished its current run."""
        await self._session.wait_for_idle()

    async def new_session(self) -> SessionActionResult:
        new_session = _require(self._session, "Starting a new session", lambda session: session.new_session)
        try:
            await new_session()
        except CancelledByExtension:
            return {"cancelled": True}
        return {"cancelled": False}

    async def fork(self, entry_id: str) -> SessionActionResult:
        """Continue in a new session file holding the path up to ``entry_id``."""
        fork = _require(self._session, "Forking", lambda session: session.fork)
        try:
            text = await fork(entry_id)
        except CancelledByExtension:
            return {"cancelled": True}
        return {"cancelled": False, "text": text}

    async def switch_session(self, path: str) -> SessionActionResult:
        """Resume the session file at ``path``."""
        switch = _require(self._session, "Switching sessions", lambda session: session.switch_session)
        from pi_tui.session import SessionManager

        manager = SessionManager.open(Path(path).expanduser(), cwd=self._session.cwd)
        try:
            await switch(manager)
        except CancelledByExtension:
            manager.close()
            return {"cancelled": True}
        except BaseException:  # its directory is gone, say: the extension hears it, nothing stays open
            manager.close()
            raise
        return {"cancelled": False}

    async def navigate_tree(self, target_id: str | None, *, summary: str | None = None) -> SessionActionResult:
        """Move the active leaf (``/tree``); returns ``{"cancelled", "text"}`` (editor text)."""
        navigate = _require(self._session, "Moving in the session tree", lambda session: session.navigate)
        try:
            text = await navigate(target_id, summary=summary)
        except CancelledByExtension:
            return {"cancelled": True}
        return {"cancelled": False, "text": text}

    async def reload(self) -> None:
        """Reload settings, resources and extensions (``/reload``). Code after this still runs the old
        version of your extension."""
        await _require(self._session, "Reloading", lambda session: session.reload)()
