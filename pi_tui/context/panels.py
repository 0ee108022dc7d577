"""Panels: live context that extensions render, sent as synthetic tool call/result pairs.

Each panel becomes an assistant message (header text, "generated at" text, a ``dynamic_panel`` tool
call) followed by its tool result (``======= [P1] Name =======`` and the content); a footer pair closes
the group. Panels are ordered by last refresh, most stable first, so a change re-bills as little as
possible.

Placement is per panel:
- ``"prefix"``: before the conversation, in the cached region (as Context Pilot does). Cheap while the
  panel is stable; a change re-bills the whole conversation after it.
- ``"tail"``: after the conversation, in the uncached tail. The panel's tokens are billed as plain input
  on every request, but a change never disturbs the cached conversation. Right for volatile panels.

Determinism: a panel's "generated at" time is its last *content change*, persisted (as a ``custom``
entry, see `PANEL_STATE_TYPE`) so that a resumed session re-renders byte-identical panel messages.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal, TypeGuard

from pi_tui.ai.tokens import estimate_tokens
from pi_tui.ai.types import (
    AssistantContent,
    AssistantMessage,
    Message,
    Model,
    StopReason,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.util.json_types import JsonObject

from .envelope import ContextEnvelope

__all__ = [
    "Panel",
    "PanelState",
    "PanelManager",
    "PANEL_TOOL_NAME",
    "PANEL_STATE_TYPE",
    "PANEL_HEADER",
    "PANEL_FOOTER",
    "PANEL_FOOTER_ACK",
    "Placement",
]

log = logging.getLogger(__name__)

PANEL_TOOL_NAME = "dynamic_panel"
PANEL_STATE_TYPE = "pi-tui/panel-state"
PANEL_HEADER = "Beginning of dynamic panel display. All content displayed below may be considered up to date."
PANEL_TIMESTAMP = "Panel automatically generated at {time}"
PANEL_FOOTER = "End of dynamic panel displays."
PANEL_FOOTER_ACK = "Panel display complete. Proceeding with conversation."
REINJECT_USER = "System instructions (repeated for emphasis):\n\n{system}"
REINJECT_ACK = "Understood. I will follow these instructions."

Placement = Literal["prefix", "tail"]


def is_placement(value: object) -> TypeGuard[Placement]:
    """True for a panel's place in the request: ``prefix`` or ``tail``."""
    return value in ("prefix", "tail")


RenderFn = Callable[[], str | Awaitable[str]]


@dataclass(slots=True)
class Panel:
    """A panel an extension registered.

    Attributes:
        name: Unique name, shown in the panel header.
        render: Returns the panel's current content (sync or async). Must be deterministic for the same
            state, or resumed sessions will re-bill the cache.
        placement: ``"prefix"`` (cached, before the conversation) or ``"tail"`` (uncached, after it).
        refresh_on: Event names that mark the panel dirty; with none, it is re-rendered every request.
        source: The extension that registered it.
    """

    name: str
    render: RenderFn
    placement: Placement = "tail"
    refresh_on: tuple[str, ...] = ()
    source: str = ""


@dataclass(slots=True)
class PanelState:
    id: str
    panel: Panel
    content: str = ""
    digest: str = ""
    tokens: int = 0
    refreshed_at: str = ""
    dirty: bool = True
    hit: bool | None = None  # against the previous request (prefix panels); None = never sent / tail
    requests: int = 0
    cost: float = 0.0
    error: str | None = None


@dataclass
class PanelManager:
    """Holds the registered panels, refreshes them and lays them out in a request envelope."""

    reinject_system_prompt: bool = False
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    panels: dict[str, PanelState] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)  # names left out of requests (the /context what-if)
    # Layouts chosen by the user (``/context``), by panel name: "prefix" | "tail" | "hidden". They win
    # over the placement the extension registers, also for panels registered later (after a resume).
    layout_overrides: dict[str, str] = field(default_factory=dict)
    _counter: int = 0
    _last_prefix: list[str] = field(default_factory=list)

    def register(self, panel: Panel) -> PanelState:
        if panel.placement not in ("prefix", "tail"):
            raise ValueError(f"panel {panel.name!r}: placement must be 'prefix' or 'tail'")
        override = self.layout_overrides.get(panel.name)
        if override == "hidden":
            self.hidden.add(panel.name)
        elif is_placement(override):
            panel = replace(panel, placement=override)
        existing = self.panels.get(panel.name)
        if existing is not None:  # re-registration (e.g. after /reload) keeps identity and state
            existing.panel = panel
            existing.dirty = True
            return existing
        self._counter += 1
        state = PanelState(id=f"P{self._counter}", panel=panel)
        self.panels[panel.name] = state
        return state

    def unregister(self, name: str) -> bool:
        """Remove a panel; True when it existed. Its ``P<n>`` id is not reused."""
        return self.panels.pop(name, None) is not None

    def unregister_source(self, source: str) -> None:
        for name in [n for n, s in self.panels.items() if s.panel.source == source]:
            del self.panels[name]

    def mark_dirty(self, event_name: str | None = None) -> None:
        for state in self.panels.values():
            if event_name is None or event_name in state.panel.refresh_on:
                state.dirty = True

    def restore(self, records: list[JsonObject]) -> None:
        """Restore last-refresh times from persisted panel-state records (latest per name wins)."""
        for record in records:
            state = self.panels.get(str(record.get("name")))
            if state is not None and record.get("digest"):
                if not state.content:
                    state.digest = str(record["digest"])
                    state.refreshed_at = str(record.get("refreshedAt", ""))

    async def refresh(self) -> list[JsonObject]:
        """Re-render dirty panels. Returns the state records to persist (panels whose content changed)."""
        changed: list[JsonObject] = []
        for state in self.panels.values():
            if not state.dirty and state.panel.refresh_on and state.content:
                continue
            try:
                result = state.panel.render()
                if inspect.isawaitable(result):
                    result = await result
                content = str(result or "")
                state.error = None
            except Exception as exc:  # a broken panel must not break the request
                log.warning("panel %s failed to render: %s", state.panel.name, exc)
                content = f"(panel failed to render: {type(exc).__name__}: {exc})"
                state.error = str(exc)
            digest = hashlib.sha256(content.encode()).hexdigest()[:16]
            state.content = content
            state.tokens = estimate_tokens(content)
            state.dirty = False
            if digest != state.digest or not state.refreshed_at:
                state.digest = digest
                state.refreshed_at = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
                changed.append(
                    {"name": state.panel.name, "digest": digest, "refreshedAt": state.refreshed_at}
                )
        return changed

    async def preview(self) -> PanelManager:
        """A refreshed copy for views such as ``/context``: this manager's state (and what the next
        request's preflight will persist) is left untouched."""
        copy = PanelManager(reinject_system_prompt=self.reinject_system_prompt, clock=self.clock)
        copy._counter = self._counter
        copy.hidden = set(self.hidden)
        copy.layout_overrides = dict(self.layout_overrides)
        copy._last_prefix = list(self._last_prefix)
        copy.panels = {name: replace(state) for name, state in self.panels.items()}
        await copy.refresh()
        return copy

    def with_layout(self, layout: Mapping[str, str]) -> PanelManager:
        """A copy with panels moved (``"prefix"``/``"tail"``) or hidden (``"hidden"``), by panel name, for a
        what-if: this manager is left untouched."""
        copy = PanelManager(reinject_system_prompt=self.reinject_system_prompt, clock=self.clock)
        copy._counter = self._counter
        copy._last_prefix = list(self._last_prefix)
        copy.hidden = set(self.hidden)
        for name, state in self.panels.items():
            wanted = layout.get(name)
            panel = state.panel
            if wanted == "hidden":
                copy.hidden.add(name)
            elif is_placement(wanted):
                copy.hidden.discard(name)
                panel = replace(panel, placement=wanted)
            copy.panels[name] = replace(state, panel=panel)
        return copy

    def ordered(self, placement: Placement) -> list[PanelState]:
        states = [
            s
            for s in self.panels.values()
            if s.panel.placement == placement and s.content and s.panel.name not in self.hidden
        ]
        return sorted(states, key=lambda s: (s.refreshed_at, int(s.id[1:])))

    def tool_definition(self) -> ToolDefinition:
        return ToolDefinition(
            name=PANEL_TOOL_NAME,
            description=(
                "Shows a context panel by id. The harness calls this itself to display panels; call it only "
                "to re-read a panel."
            ),
            parameters={"type": "object", "properties": {"id": {"type": "string"}}},
        )

    def panel_content(self, panel_id: str) -> str | None:
        for state in self.panels.values():
            if state.id == panel_id:
                return _result_text(state)
        return None

    def messages_for(self, placement: Placement) -> list[Message]:
        states = self.ordered(placement)
        if not states:
            return []
        out: list[Message] = []
        for i, state in enumerate(states):
            texts = [TextContent(text=PANEL_TIMESTAMP.format(time=state.refreshed_at))]
            if i == 0:
                texts.insert(0, TextContent(text=PANEL_HEADER))
            call_id = f"panel_{state.id}"
            out.append(
                _assistant([*texts, ToolCall(id=call_id, name=PANEL_TOOL_NAME, arguments={"id": state.id})])
            )
            out.append(_result(call_id, _result_text(state)))
        footer_id = f"panel_footer_{placement}"
        out.append(
            _assistant(
                [
                    TextContent(text=PANEL_FOOTER),
                    ToolCall(id=footer_id, name=PANEL_TOOL_NAME, arguments={"action": "end_panels"}),
                ]
            )
        )
        out.append(_result(footer_id, PANEL_FOOTER_ACK))
        return out

    def place(self, env: ContextEnvelope) -> ContextEnvelope:
        """Lay the panels into a request-local envelope: prefix panels first, tail panels after the history."""
        if not self.panels:
            return env
        prefix = self.messages_for("prefix")
        if prefix and self.reinject_system_prompt:
            prefix += [
                UserMessage(content=REINJECT_USER.format(system=env.system_compiled), timestamp=0),
                _assistant([TextContent(text=REINJECT_ACK)], stop_reason="stop"),
            ]
        tail = self.messages_for("tail")
        tools = env.tools
        if (prefix or tail) and all(t.name != PANEL_TOOL_NAME for t in tools):
            tools = (*tools, self.tool_definition())
        return replace(
            env,
            tools=tools,
            cached=(*prefix, *env.cached),
            cached_origins=(None,) * len(prefix) + env.origins(),
            uncached=(*tail, *env.uncached),
        )

    def account(self, model: Model | None) -> None:
        """Update hit/miss and cumulative cost per panel for a request about to be sent."""
        prefix_ids = [s.digest for s in self.ordered("prefix")]
        still_matching = True
        for i, state in enumerate(self.ordered("prefix")):
            still_matching = (
                still_matching and i < len(self._last_prefix) and self._last_prefix[i] == prefix_ids[i]
            )
            state.hit = still_matching
            state.requests += 1
            if model is not None:
                price = model.cost.cache_read if state.hit else (model.cost.cache_write or model.cost.input)
                state.cost += state.tokens * price / 1_000_000
        for state in self.ordered("tail"):
            state.hit = None
            state.requests += 1
            if model is not None:
                state.cost += state.tokens * model.cost.input / 1_000_000
        self._last_prefix = prefix_ids


def _result_text(state: PanelState) -> str:
    return f"======= [{state.id}] {state.panel.name} =======\n{state.content}"


def _assistant(content: list[AssistantContent], stop_reason: StopReason = "toolUse") -> AssistantMessage:
    return AssistantMessage(content=content, stop_reason=stop_reason, timestamp=0)


def _result(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name=PANEL_TOOL_NAME, content=[TextContent(text=text)], timestamp=0
    )
