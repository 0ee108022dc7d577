"""`SessionHost`: what the extensions layer uses of the session it runs in.

The session is the runtime's `AgentSession`, a layer this one may not import; this protocol names the
part of it that the runner reaches, typed, and the runtime's session satisfies it (mypy checks that where
the runtime hands itself to `load_extensions`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pi_tui.agent.events import AgentEvent, RuntimeEvent
    from pi_tui.agent.loop import Agent
    from pi_tui.agent.tool import AgentTool
    from pi_tui.ai.model_registry import ModelRegistry
    from pi_tui.ai.types import CustomMessage, ImageContent, Message, Model, ThinkingLevel
    from pi_tui.checkpoints import Checkpointer
    from pi_tui.compaction.controller import CompactionController
    from pi_tui.context.engine import ContextEngine
    from pi_tui.context.hooks import ContextHandler
    from pi_tui.context.panels import PanelManager
    from pi_tui.resources.loader import ResourceLoader
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.session.manager import SessionManager

    from .runner import ExtensionRunner

__all__ = ["SessionHost"]


class SessionHost(Protocol):
    """The session an `ExtensionRunner` serves (the runtime's `AgentSession`)."""

    extension_setup: Callable[[], object] | None
    """Builds a runner when ``/reload`` finds extensions and none was built at start-up."""

    extensions: ExtensionRunner | None
    """The runner bound to the session (it sets itself here)."""

    has_trust_command: bool
    """The mode offers ``/trust`` (the full-screen app): notices about an untrusted project name it."""

    @property
    def checkpoints(self) -> Checkpointer | None:
        """The project's file checkpoints (None when they are off)."""
        ...

    @property
    def compaction(self) -> CompactionController:
        """Compaction and branch summaries (the runner installs its hooks)."""
        ...

    @property
    def settings(self) -> SettingsManager | None:
        """The directory's settings."""
        ...

    @property
    def cwd(self) -> Path:
        """The working directory."""
        ...

    @property
    def ui(self) -> object:
        """The front end's `UIBridge` (it may implement only part of it: read through `UIProxy`)."""
        ...

    @property
    def mode(self) -> str:
        """``tui``, ``rpc``, ``json`` or ``print``."""
        ...

    @property
    def agent(self) -> Agent:
        """The turn loop (its queues)."""
        ...

    @property
    def engine(self) -> ContextEngine:
        """The per-request context pipeline (its cache ledger)."""
        ...

    @property
    def registry(self) -> ModelRegistry:
        """Models and their keys."""
        ...

    @property
    def model(self) -> Model:
        """The current model."""
        ...

    @property
    def thinking(self) -> ThinkingLevel:
        """The current thinking level."""
        ...

    @property
    def is_streaming(self) -> bool:
        """Whether a run is in progress."""
        ...

    @property
    def messages(self) -> list[Message]:
        """The agent's history."""
        ...

    @property
    def session_manager(self) -> SessionManager:
        """The session file's entries."""
        ...

    @property
    def resources(self) -> ResourceLoader | None:
        """Skills, templates and the system prompt's inputs."""
        ...

    @property
    def tools(self) -> dict[str, AgentTool]:
        """Every loaded tool by name."""
        ...

    @property
    def active_tools(self) -> list[str]:
        """The names offered to the model."""
        ...

    @property
    def panels(self) -> PanelManager:
        """The context panels."""
        ...

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Offer these tools (the loaded ones among them) to the model."""
        ...

    def add_tool(self, tool: AgentTool, *, activate: bool = True) -> None:
        """Load a tool (and offer it, unless ``activate`` is false)."""
        ...

    def remove_tool(self, name: str) -> None:
        """Unload a tool."""
        ...

    def restore_panel_state(self) -> None:
        """Give registered panels their state recorded in the session."""
        ...

    def set_model(self, model: Model, *, source: str = "set") -> None:
        """Switch the model."""
        ...

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        """Switch the thinking level."""
        ...

    def set_session_name(self, name: str) -> None:
        """Name the session."""
        ...

    def system_prompt(self) -> str:
        """The system prompt of the next request."""
        ...

    def abort(self) -> None:
        """Stop the run."""
        ...

    async def wait_for_idle(self) -> None:
        """Return once no run is in progress."""
        ...

    async def prompt(
        self,
        text: str,
        images: Sequence[ImageContent] | None = None,
        *,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        expand: bool = True,
    ) -> None:
        """Send a user prompt and return when the agent is idle again."""
        ...

    async def emit(self, event: AgentEvent | RuntimeEvent) -> None:
        """Hand an event to every subscriber."""
        ...

    def subscribe(
        self, listener: Callable[[AgentEvent | RuntimeEvent], Awaitable[None] | None]
    ) -> Callable[[], None]:
        """Receive every event; returns an unsubscribe function."""
        ...

    def set_context_handlers(self, handlers: Callable[[], Sequence[ContextHandler]]) -> None:
        """Where ``context`` handlers come from."""
        ...

    def append_custom_message(self, message: CustomMessage) -> None:
        """Add an extension message to the conversation without starting a turn."""
        ...

    async def reload(self) -> list[str]:
        """``/reload``: settings, resources and extensions again; returns the notes."""
        ...

    def label(self, entry_id: str, label: str | None) -> None:
        """Set or clear an entry's label."""
        ...

    def invalidate_system_prompt(self) -> None:
        """Build the system prompt again before the next request."""
        ...
