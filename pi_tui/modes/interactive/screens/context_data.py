"""Panel layouts chosen in the ``/context`` inspector: making a what-if real and replaying it on a resume.

What the inspector shows is `pi_tui.context.report.ContextReport` (`AgentSession.context_report`); this
module only changes the live session. `apply_layout` moves or hides panels (with the reason a change to
the cached prompt needs, recorded in the session); `restore_layouts` replays the recorded layouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.context.ledger import Attribution
from pi_tui.context.panels import PanelManager
from pi_tui.session.entries import CustomEntry

if TYPE_CHECKING:
    from pi_tui.context.report import Layout
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["PANEL_LAYOUT_TYPE", "apply_layout", "restore_layouts"]

PANEL_LAYOUT_TYPE = "pi-tui/panel-layout"
"""``custom`` entry recording a panel layout change made in ``/context`` (who, what, why)."""


def _set_layout(manager: PanelManager, name: str, wanted: str) -> None:
    manager.layout_overrides[name] = wanted
    state = manager.panels.get(name)
    if wanted == "hidden":
        manager.hidden.add(name)
    elif wanted in ("prefix", "tail"):
        manager.hidden.discard(name)
        if state is not None:
            state.panel.placement = wanted  # type: ignore[assignment]


def restore_layouts(session: AgentSession) -> dict[str, str]:
    """Re-apply the panel layouts recorded on the active path (after a start, resume or fork), so the
    requests of a resumed session are laid out as the live ones were. Returns them by panel name."""
    overrides: dict[str, str] = {}
    for entry in session.session_manager.get_branch():
        if isinstance(entry, CustomEntry) and entry.custom_type == PANEL_LAYOUT_TYPE:
            data = entry.data
            if isinstance(data, dict) and data.get("to") in ("prefix", "tail", "hidden"):
                overrides[str(data.get("name"))] = str(data["to"])
    manager = session.panels
    manager.layout_overrides = {}
    for name, wanted in overrides.items():
        _set_layout(manager, name, wanted)
    return overrides


def apply_layout(session: AgentSession, layout: dict[str, Layout], reason: str) -> None:
    """Make a what-if real: move or hide the panels in the live session.

    As with any change to the cached region, a reason is required; it is recorded in the
    session (a ``custom`` entry, `PANEL_LAYOUT_TYPE`, which `restore_layouts` replays on a resume) and the
    cache ledger attributes the next request's invalidation to it.

    Raises:
        ValueError: no reason, or an unknown panel or layout.
    """
    reason = reason.strip()
    if not reason:
        raise ValueError("Changing where a panel sits changes the cached prompt: give a reason")
    manager = session.panels
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
        session.session_manager.append_custom(
            PANEL_LAYOUT_TYPE, {"name": name, "from": before, "to": wanted, "reason": reason}
        )
        session.engine.ledger.declare(Attribution(f"/context ({name})", reason, f"panel {before} → {wanted}"))
