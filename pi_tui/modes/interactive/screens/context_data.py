"""What the ``/context`` inspector shows, computed from the runtime without Textual.

`build_context_view` gathers the next request as the runtime would build it (replayed envelope, panels
placed from a side-effect-free refreshed copy), its token counts, the cache projection against the last
request (or, for a resumed session, against the request rebuilt from the file), the panels, the persisted
``context_transform`` history and the cache ledger. `project_layout` answers the what-if: the same next
request with panels moved between prefix and tail or hidden. `apply_layout` makes a what-if real.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pi_tui.agent.convert import reaches_model
from pi_tui.ai.cost import projected_cost
from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.tokens import count_message_tokens, estimate_tokens
from pi_tui.ai.types import Model, ToolDefinition
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.context.ledger import Attribution, CacheLedger
from pi_tui.context.panels import PanelManager, PanelState
from pi_tui.context.request import Block, common_prefix_blocks, fingerprint, to_llm_request, tool_tokens

__all__ = [
    "CacheProjection",
    "ContextView",
    "Layout",
    "PANEL_LAYOUT_TYPE",
    "TransformRecord",
    "apply_layout",
    "build_context_view",
    "complete_projection",
    "project_layout",
    "restore_layouts",
]

PANEL_LAYOUT_TYPE = "pi-tui/panel-layout"
"""``custom`` entry recording a panel layout change made in ``/context`` (who, what, why)."""

Layout = Literal["prefix", "tail", "hidden"]


@dataclass(frozen=True, slots=True)
class CacheProjection:
    """What one request should read from the cache, write to it, and send uncached, and its input cost."""

    read: int
    write: int
    uncached: int
    cost: float
    first_difference: str | None
    has_baseline: bool

    @property
    def total(self) -> int:
        return self.read + self.write + self.uncached


@dataclass(frozen=True, slots=True)
class TransformRecord:
    """One persisted ``context_transform`` entry on the active path."""

    entry_id: str
    timestamp: str
    transformer: str
    ops: tuple[dict[str, Any], ...]
    title: str | None


@dataclass(slots=True)
class ContextView:
    """Everything the inspector draws. Token counts are estimates: chars/4 of the text plus framing."""

    model: Model
    envelope: ContextEnvelope  # the next request's envelope, panels placed
    durable: ContextEnvelope  # before panels were placed
    system_tokens: int
    tool_tokens: dict[str, int]
    cached_tokens: list[int]
    uncached_tokens: list[int]
    panels: list[tuple[PanelState, str]]  # (state, effective layout)
    transforms: list[TransformRecord]
    ledger: CacheLedger
    stats: Any
    preview: PanelManager | None = None
    session: Any = None
    projection: CacheProjection | None = None  # see complete_projection
    baseline: list[Block] = field(default_factory=list)

    @property
    def window(self) -> int:
        return self.model.context_window

    @property
    def total_tokens(self) -> int:
        return (
            self.system_tokens
            + sum(self.tool_tokens.values())
            + sum(self.cached_tokens)
            + sum(self.uncached_tokens)
        )


def _tool_tokens(tool: ToolDefinition) -> int:
    return tool_tokens(tool)


def _baseline(session: Any, panels: PanelManager) -> list[Block]:
    """The blocks of the last request: the ledger's, or for a resumed session the request that produced
    the last answer, rebuilt from the file (replay is deterministic)."""
    ledger: CacheLedger = session.engine.ledger
    if ledger.last_blocks:
        return ledger.last_blocks
    from pi_tui.context.engine import replay_entries

    path = list(session.session.get_branch())
    last = max(
        (i for i, e in enumerate(path) if getattr(getattr(e, "message", None), "role", None) == "assistant"),
        default=None,
    )
    if last is None:
        return []
    # The runtime's base envelope (system parts, tools, options) is what replay starts from.
    previous = panels.place(replay_entries(session._base_envelope(), path[:last]))
    return fingerprint(to_llm_request(previous, list(session.tools)))


# Per-message and per-content-block framing a provider bills beside the text (role markers, block
# delimiters, tool-use ids). Small, but a short message is mostly framing.
MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3


def _billed_tokens(message: Any) -> int:
    """Tokens a provider bills for one request message: pi's text estimate plus the framing (0 for a shell
    command's output kept out of context: the request leaves it out)."""
    if not reaches_model(message):
        return 0
    content = getattr(message, "content", None)
    blocks = len(content) if isinstance(content, list) else 1
    return count_message_tokens(message) + MESSAGE_OVERHEAD + BLOCK_OVERHEAD * max(1, blocks)


def request_blocks(request: LlmRequest) -> list[Block]:
    """`fingerprint` with billed-token estimates for messages (the digests decide hits; these the price).

    The runtime's own block sizes are chars/4 of each message's JSON, which counts keys, ids and
    timestamps a provider never bills; for a cost projection the text plus framing is much closer.
    """
    blocks = fingerprint(request)
    offset = len(blocks) - len(request.messages)
    return [
        replace(block, tokens=_billed_tokens(request.messages[i - offset])) if i >= offset else block
        for i, block in enumerate(blocks)
    ]


def projection_for(blocks: list[Block], baseline: list[Block], model: Model) -> CacheProjection:
    """Read/write/uncached tokens of a request against the previous one, priced with ``model``.

    Everything up to the first block that differs is read; the rest of the cached region is written
    (the provider caches it anew); the request-only tail is plain input.
    """
    hit = common_prefix_blocks(baseline, blocks) if baseline else 0
    read = sum(b.tokens for b in blocks[:hit])
    write = sum(b.tokens for b in blocks[hit:] if b.cached)
    uncached = sum(b.tokens for b in blocks[hit:] if not b.cached)
    cost = projected_cost(model, read, write, uncached)
    where = blocks[hit].label if hit < len(blocks) else None
    return CacheProjection(read, write, uncached, cost, where, bool(baseline))


def _transforms(session: Any) -> list[TransformRecord]:
    out: list[TransformRecord] = []
    for entry in session.session.get_branch():
        if getattr(entry, "type", None) != "context_transform":
            continue
        display = getattr(entry, "display", None) or {}
        title = display.get("title") if isinstance(display, dict) else getattr(display, "title", None)
        out.append(
            TransformRecord(
                entry_id=str(getattr(entry, "id", "")),
                timestamp=str(getattr(entry, "timestamp", "")),
                transformer=str(
                    getattr(entry, "transformer_name", None) or getattr(entry, "transformerName", "")
                ),
                ops=tuple(op for op in (getattr(entry, "patch", None) or []) if isinstance(op, dict)),
                title=title,
            )
        )
    return out


def _with_layout(preview: PanelManager, layout: dict[str, Layout]) -> PanelManager:
    """A copy of ``preview`` with panels moved or hidden (the live manager is untouched)."""
    copy = PanelManager(reinject_system_prompt=preview.reinject_system_prompt, clock=preview.clock)
    copy._counter = preview._counter
    copy._last_prefix = list(preview._last_prefix)
    copy.hidden = set(preview.hidden)
    copy.panels = {}
    for name, state in preview.panels.items():
        wanted = layout.get(name)
        panel = state.panel
        if wanted == "hidden":
            copy.hidden.add(name)
        elif wanted in ("prefix", "tail"):
            copy.hidden.discard(name)
            panel = replace(panel, placement=wanted)
        copy.panels[name] = replace(state, panel=panel)
    return copy


def _effective(preview: PanelManager, state: PanelState) -> str:
    return "hidden" if state.panel.name in preview.hidden else state.panel.placement


async def build_context_view(session: Any) -> ContextView:
    """Gather the ``/context`` view of the next request (no hooks run, nothing is written).

    The cache projection needs every block of two requests hashed; it is left to `complete_projection`
    so a screen can draw first and fill the projection in a moment later.
    """
    preview = await session.panels.preview()
    durable = session.engine.replay()
    env = preview.place(durable)
    model = session.agent.model
    return ContextView(
        model=model,
        envelope=env,
        durable=durable,
        system_tokens=estimate_tokens(env.system_compiled),
        tool_tokens={t.name: _tool_tokens(t) for t in env.tools},
        cached_tokens=[_billed_tokens(m) for m in env.cached],
        uncached_tokens=[_billed_tokens(m) for m in env.uncached],
        panels=[(s, _effective(preview, s)) for s in preview.panels.values()],
        transforms=_transforms(session),
        ledger=session.engine.ledger,
        stats=session.stats(),
        preview=preview,
        session=session,
    )


def complete_projection(view: ContextView) -> CacheProjection:
    """Fill in (once) and return the next request's cache projection. Safe to run in a thread."""
    if view.projection is None:
        assert view.preview is not None
        session = view.session
        baseline = _baseline(session, view.preview)
        blocks = request_blocks(to_llm_request(view.envelope, list(session.tools)))
        view.baseline = baseline
        view.projection = projection_for(blocks, baseline, view.model)
    return view.projection


def project_layout(session: Any, view: ContextView, layout: dict[str, Layout]) -> CacheProjection:
    """The next request's cache projection if panels were laid out as ``layout`` (name → layout)."""
    assert view.preview is not None
    complete_projection(view)
    manager = _with_layout(view.preview, layout)
    env = manager.place(view.durable)
    blocks = request_blocks(to_llm_request(env, list(session.tools)))
    return projection_for(blocks, view.baseline, view.model)


def _set_layout(manager: PanelManager, name: str, wanted: str) -> None:
    manager.layout_overrides[name] = wanted
    state = manager.panels.get(name)
    if wanted == "hidden":
        manager.hidden.add(name)
    elif wanted in ("prefix", "tail"):
        manager.hidden.discard(name)
        if state is not None:
            state.panel.placement = wanted  # type: ignore[assignment]


def restore_layouts(session: Any) -> dict[str, str]:
    """Re-apply the panel layouts recorded on the active path (after a start, resume or fork), so the
    requests of a resumed session are laid out as the live ones were. Returns them by panel name."""
    overrides: dict[str, str] = {}
    for entry in session.session.get_branch():
        if (
            getattr(entry, "type", None) == "custom"
            and getattr(entry, "custom_type", None) == PANEL_LAYOUT_TYPE
        ):
            data = getattr(entry, "data", None)
            if isinstance(data, dict) and data.get("to") in ("prefix", "tail", "hidden"):
                overrides[str(data.get("name"))] = str(data["to"])
    manager: PanelManager = session.panels
    manager.layout_overrides = {}
    for name, wanted in overrides.items():
        _set_layout(manager, name, wanted)
    return overrides


def apply_layout(session: Any, layout: dict[str, Layout], reason: str) -> None:
    """Make a what-if real: move or hide the panels in the live session.

    As with any change to the cached region (seed 001), a reason is required; it is recorded in the
    session (a ``custom`` entry, `PANEL_LAYOUT_TYPE`, which `restore_layouts` replays on a resume) and the
    cache ledger attributes the next request's invalidation to it.

    Raises:
        ValueError: no reason, or an unknown panel or layout.
    """
    reason = reason.strip()
    if not reason:
        raise ValueError("Changing where a panel sits changes the cached prompt: give a reason")
    manager: PanelManager = session.panels
    for name, wanted in layout.items():
        state = manager.panels.get(name)
        if state is None:
            raise ValueError(f"No panel named {name!r}")
        if wanted not in ("prefix", "tail", "hidden"):
            raise ValueError(f"{name}: layout must be prefix, tail or hidden, not {wanted!r}")
    for name, wanted in layout.items():
        state = manager.panels[name]
        before = "hidden" if name in manager.hidden else state.panel.placement
        _set_layout(manager, name, wanted)
        session.session.append_custom(
            PANEL_LAYOUT_TYPE, {"name": name, "from": before, "to": wanted, "reason": reason}
        )
        session.engine.ledger.declare(Attribution(f"/context ({name})", reason, f"panel {before} → {wanted}"))
