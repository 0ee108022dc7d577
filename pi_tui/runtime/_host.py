"""What `AgentSession`'s mixins rely on from the class they are mixed into, declared for type checkers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.agent.loop import Agent
from pi_tui.agent.tool import AgentTool
from pi_tui.ai.stream import StreamFn
from pi_tui.context.engine import ContextEngine
from pi_tui.context.panels import PanelManager

if TYPE_CHECKING:
    from pi_tui.agent.events import AgentEvent, RuntimeEvent
    from pi_tui.ai.model_registry import ModelRegistry
    from pi_tui.ai.types import Model, ThinkingLevel
    from pi_tui.checkpoints import Checkpointer
    from pi_tui.compaction.controller import CompactionController
    from pi_tui.context.report import MessageTokenCache
    from pi_tui.extensions.runner import ExtensionRunner
    from pi_tui.resources.loader import ResourceLoader
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.sandbox import CommandSandbox
    from pi_tui.session.context import RestoreState
    from pi_tui.session.manager import SessionManager

    from .cache_warmer import CacheWarmer
    from .cwd_services import CwdServices

__all__ = ["PendingState", "SessionHost"]


@dataclass
class PendingState:
    """A model and thinking level chosen but not yet written to the session file (written just before
    the next entry)."""

    model: tuple[str, str] | None = None
    """(provider, model id)"""
    thinking: ThinkingLevel | None = None


class SessionHost:
    """Attribute and method declarations only; `AgentSession` provides them."""

    cwd: Path
    session_manager: SessionManager
    agent: Agent
    engine: ContextEngine
    panels: PanelManager
    settings: SettingsManager | None
    resources: ResourceLoader | None
    checkpoints: Checkpointer
    sandbox: CommandSandbox | None
    services_for: Callable[[Path, list[str]], CwdServices] | None
    registry: ModelRegistry
    tools: dict[str, AgentTool]
    extensions: ExtensionRunner | None
    cache_warmer: CacheWarmer
    compaction: CompactionController
    _base_stream_fn: StreamFn | None
    _switch_reason: str | None
    _pending_state: PendingState

    if TYPE_CHECKING:

        async def emit(self, event: AgentEvent | RuntimeEvent) -> None: ...

        async def _api_key(self, provider: str) -> str | None: ...

        def _record_model_if_changed(
            self, restored: RestoreState, model: Model, thinking: ThinkingLevel
        ) -> None: ...

        def _require_idle(self, action: str) -> None: ...

        def _loaded_tools(self) -> list[AgentTool]: ...

        def invalidate_system_prompt(self) -> None: ...

        async def _extensions_enter_session(
            self, reason: str, previous_session_file: str | None
        ) -> list[str]: ...

        def restore_panel_layouts(self) -> dict[str, str]: ...

        async def navigate(self, entry_id: str | None, *, summary: str | None = None) -> str | None: ...

        def label(self, entry_id: str, label: str | None) -> None: ...

        def _token_cache(self) -> MessageTokenCache: ...

        def _has_token_cache(self) -> bool: ...
