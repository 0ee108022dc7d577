"""The sidebar: the active context panels and what the cache made of them (toggle with F2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from .footer import fmt_tokens

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["PanelSidebar", "sidebar_text"]


def sidebar_text(session: AgentSession) -> Text:
    """Each panel: id, name, tokens, placement, last hit or re-billed, cost so far; then the session's
    cache-read ratio and cost."""
    out = Text()
    out.append("Panels\n", style="bold")
    panels = list(session.panels.panels.values())
    if not panels:
        out.append("none active\n", style="dim")
    for state in panels:
        placement = state.panel.placement
        where = "prefix (cached)" if placement == "prefix" else "tail (uncached)"
        if state.hit is None:
            last = "not sent yet" if not state.requests else "uncached"
        else:
            last = "hit" if state.hit else "re-billed"
        out.append(f"[{state.id}] {state.panel.name}\n", style="bold")
        out.append(f"  {fmt_tokens(state.tokens)} tok · {where}\n")
        out.append(f"  last: {last} · ${state.cost:.4f}\n")
        if state.error:
            out.append(f"  error: {state.error}\n", style="italic")
    out.append("\nSession\n", style="bold")
    stats = session.stats()
    if stats is not None:
        denom = stats.input + stats.cache_read + stats.cache_write
        ratio = f"{100 * stats.cache_read / denom:.1f}%" if denom else "–"
        out.append(f"  cache read: {ratio}\n")
        out.append(f"  cost: ${stats.cost:.4f}\n")
    invalidations = list(session.engine.ledger.invalidations)
    if invalidations:
        latest = invalidations[-1]
        out.append(f"  invalidations: {len(invalidations)}\n")
        out.append(
            f"  last: {latest.source} ({fmt_tokens(latest.tokens_rebilled)} re-billed)\n", style="italic"
        )
    return out


class PanelSidebar(Static):
    """A column beside the chat; folded away on narrow terminals (under 100 columns)."""

    DEFAULT_CSS = """
    PanelSidebar {
        width: 34;
        height: 1fr;
        dock: right;
        border-left: vkey $pi-border-muted;
        background: $pi-background;
        color: $pi-text;
        padding: 0 1;
        display: none;
    }
    PanelSidebar.-open { display: block; }
    """

    def __init__(self) -> None:
        super().__init__("", id="sidebar", markup=False)

    def refresh_from(self, session: AgentSession | None) -> None:
        if "-open" in self.classes and session is not None:
            self.update(sidebar_text(session))
