"""Panel layouts chosen by the user (``/context``'s what-if made real), recorded in the session file.

Each change is a ``custom`` entry (`PANEL_LAYOUT_TYPE`: panel name, from, to, reason). Requests are laid
out from the file like everything else, so every mode that opens a session (the TUI, print, JSON, RPC)
replays the recorded layouts the same way: `restore_layouts`, called by the runtime when it opens or
switches to a session.
"""

from __future__ import annotations

from collections.abc import Iterable

from pi_tui.session.entries import CustomEntry, SessionEntry

from .panels import PanelManager, is_placement

__all__ = ["LAYOUTS", "PANEL_LAYOUT_TYPE", "recorded_layouts", "restore_layouts", "set_layout"]

PANEL_LAYOUT_TYPE = "pi-tui/panel-layout"
"""``custom`` entry recording a panel layout change made in ``/context`` (who, what, why)."""

LAYOUTS = ("prefix", "tail", "hidden")
"""Where a panel can be put: before the conversation, at its end, or left out."""


def set_layout(manager: PanelManager, name: str, wanted: str) -> None:
    """Put panel ``name`` at ``wanted`` (one of `LAYOUTS`), now and when it is registered again."""
    manager.layout_overrides[name] = wanted
    state = manager.panels.get(name)
    if wanted == "hidden":
        manager.hidden.add(name)
    elif is_placement(wanted):
        manager.hidden.discard(name)
        if state is not None:
            state.panel.placement = wanted


def recorded_layouts(path: Iterable[SessionEntry]) -> dict[str, str]:
    """The layout each panel was last given on ``path`` (the session's active path), by panel name."""
    layouts: dict[str, str] = {}
    for entry in path:
        if isinstance(entry, CustomEntry) and entry.custom_type == PANEL_LAYOUT_TYPE:
            data = entry.data
            if isinstance(data, dict) and data.get("to") in LAYOUTS:
                layouts[str(data.get("name"))] = str(data["to"])
    return layouts


def restore_layouts(manager: PanelManager, path: Iterable[SessionEntry]) -> dict[str, str]:
    """Re-apply the layouts recorded on ``path`` to ``manager`` (panels registered later get them too).
    Returns them by panel name."""
    layouts = recorded_layouts(path)
    manager.layout_overrides = {}
    for name, wanted in layouts.items():
        set_layout(manager, name, wanted)
    return layouts
