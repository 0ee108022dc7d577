"""What "next model" cycles through (Ctrl+P in the TUI, RPC ``cycle_model``), as pi 0.87.1.

With a model scope (``--models``, else the ``enabledModels`` setting) the cycle is the scope's models,
each with the thinking level its pattern names (``pattern:level``); without one it is every available
model. The TUI and RPC share this so that both walk the same list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.ai.types import Model, ThinkingLevel

    from .agent_session import AgentSession

__all__ = ["ModelCycle", "model_cycle"]


@dataclass(frozen=True)
class ModelCycle:
    """The models to cycle through, in order, with the level each brings (None: keep the current one)."""

    models: list[Model]
    levels: list[ThinkingLevel | None]
    scoped: bool
    """True when a model scope chose ``models`` (pi's ``isScoped``)."""

    def next_index(self, current: Model, step: int = 1) -> int:
        """Where ``step`` (1 forward, -1 back) lands from ``current``; from the first model when
        ``current`` is not in the cycle, as pi."""
        keys = [(m.provider, m.id) for m in self.models]
        here = (current.provider, current.id)
        index = keys.index(here) if here in keys else 0
        return (index + step) % len(self.models)


def model_cycle(session: AgentSession) -> ModelCycle:
    """The cycle for ``session``: its scope's available models when it has a scope, else all available
    but pi-tui's scripted ``faux`` model (offered by ``/model``, never reached by cycling unless a
    scope names it)."""
    from pi_tui.ai.catalog import FAUX_PROVIDER

    registry = session.registry
    available = list(registry.available_models()) if registry is not None else [session.model]
    settings = session.settings
    patterns = session.cli_model_scope or (settings.enabled_models if settings is not None else None)
    if patterns:
        from pi_tui.ai.model_resolver import resolve_model_scope

        scoped, _warnings = resolve_model_scope(patterns, available)
        if scoped:
            return ModelCycle([s.model for s in scoped], [s.thinking_level for s in scoped], True)
    own = [m for m in available if m.provider != FAUX_PROVIDER]
    return ModelCycle(own, [None] * len(own), False)
