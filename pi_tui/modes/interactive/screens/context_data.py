"""Panel layouts chosen in the ``/context`` inspector: making a what-if real.

What the inspector shows is `pi_tui.context.report.ContextReport` (`AgentSession.context_report`); this
module only changes the live session. `apply_layout` moves or hides panels (with the reason a change to
the cached prompt needs, recorded in the session); the runtime replays the recorded layouts whenever it
opens a session (`pi_tui.context.layouts`), in every mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.context.layouts import LAYOUTS, PANEL_LAYOUT_TYPE, set_layout
from pi_tui.context.ledger import Attribution

if TYPE_CHECKING:
    from pi_tui.context.report import Layout
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["apply_layout"]


def apply_layout(session: AgentSession, layout: dict[str, Layout], reason: str) -> None:
    """Make a what-if real: move or hide the panels in the live session.

    As with any change to the cached region, a reason is required; it is recorded in the
    session (a ``custom`` entry, `PANEL_LAYOUT_TYPE`, which the runtime replays when the session is opened) and the
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
        if wanted not in LAYOUTS:
            raise ValueError(f"{name}: layout must be prefix, tail or hidden, not {wanted!r}")
    for name, wanted in layout.items():
        state = manager.panels[name]
        before = "hidden" if name in manager.hidden else state.panel.placement
        set_layout(manager, name, wanted)
        session.session_manager.append_custom(
            PANEL_LAYOUT_TYPE, {"name": name, "from": before, "to": wanted, "reason": reason}
        )
        session.engine.ledger.declare(Attribution(f"/context ({name})", reason, f"panel {before} → {wanted}"))
