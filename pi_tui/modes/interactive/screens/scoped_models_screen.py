"""``/scoped-models``: choose the models Ctrl+P cycles through (the ``enabledModels`` setting).

Every model you have a key for is listed, those in the scope ticked. Keys: type to search, ↑/↓ move,
Enter adds or removes the highlighted model, Ctrl+A adds every model the search shows, Ctrl+X empties the
scope (Ctrl+P then cycles every model again), Esc closes. Each change is saved at once in the global
settings, as ``/model``'s Ctrl+T saves it (pi keeps its changes for the session until Ctrl+S).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from ._format import fmt_tokens
from ._picker import SearchListScreen
from ._rowlist import RowList
from .model_screen import scoped_labels

if TYPE_CHECKING:
    from pi_tui.ai.types import Model
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["ScopedModelsScreen", "open_scoped_models"]


class ScopedModelsScreen(SearchListScreen["Model"]):
    """The scope picker: a tick per model in ``enabledModels``."""

    DEFAULT_CSS = """
    ScopedModelsScreen #scope-empty { height: 1; padding: 0 1; color: $text-muted; display: none; }
    """
    BINDINGS = [
        Binding("ctrl+a", "add_shown", "Add all shown", priority=True),
        Binding("ctrl+x", "clear", "Clear the scope", priority=True),
    ]

    def __init__(self, session: AgentSession, models: list[Model]) -> None:
        super().__init__()
        self.session = session
        self.models = models
        self.scoped = scoped_labels(session, models)
        """The labels in the scope, in their cycling order."""
        self.shown: list[Model] = list(models)
        self._label_width = max((len(m.label) for m in models), default=0)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="scope-title", classes="picker-title")
            yield Input(placeholder="Type to search models", id="scope-search", classes="picker-search")
            yield Static("No matching models", id="scope-empty")
            yield RowList(self._render_row, mark="→ ", id="scope-list")
            yield Static(
                "↑/↓ move · Enter add/remove · ctrl+a add all shown · ctrl+x clear · Esc close "
                "(saved in settings at once)",
                id="scope-help",
                classes="picker-help",
            )

    def on_mount(self) -> None:
        self._apply()
        self.query_one(Input).focus()

    def _render_row(self, index: int) -> Text:
        if index >= len(self.shown):
            return Text("")
        model = self.shown[index]
        text = Text(no_wrap=True)
        text.append("✓ " if model.label in self.scoped else "  ", style="green")
        label = model.label.ljust(self._label_width)
        text.append(label, style="bold" if model.label == self.session.model.label else "")
        text.append(f"  {fmt_tokens(model.context_window) + ' ctx':>8}", style="dim")
        return text

    def _apply(self) -> None:
        from pi_tui.ai.model_resolver import search_models_for_picker

        query = self.query_one(Input).value.strip()
        self.shown = search_models_for_picker(query, self.models)
        self._list().reset(len(self.shown), 0)
        self.query_one("#scope-empty", Static).display = not self.shown
        self._title()

    def _title(self) -> None:
        count = len(self.scoped)
        scope = (
            f"{count} in the scope: Ctrl+P cycles them" if count else "none chosen: Ctrl+P cycles every model"
        )
        self.query_one("#scope-title", Static).update(f"Scoped models · {scope}")

    def _save(self) -> None:
        settings = self.session.settings
        if settings is not None:
            settings.set("enabledModels", list(self.scoped) or None)
        self._list().refresh_rows()
        self._title()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._toggle()

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        self._toggle()

    def _toggle(self) -> None:
        model = self._selected()
        if model is None:
            return
        if model.label in self.scoped:
            self.scoped.remove(model.label)
        else:
            self.scoped.append(model.label)
        self._save()

    def action_add_shown(self) -> None:
        self.scoped += [m.label for m in self.shown if m.label not in self.scoped]
        self._save()

    def action_clear(self) -> None:
        self.scoped = []
        self._save()


async def open_scoped_models(app: PiApp, _args: str) -> None:
    """``/scoped-models``: push the scope picker over the models the session can use."""
    session = app.session
    if session is None:
        raise RuntimeError("Startup is still in progress")
    from pi_tui.ai.catalog import FAUX_PROVIDER

    registry = session.registry
    models = list(registry.available_models()) if registry is not None else [session.model]
    # pi-tui's scripted offline model is no model of the user's to cycle through (a scope may still
    # name it in settings.json)
    models = [m for m in models if m.provider != FAUX_PROVIDER]
    await app.push_screen(ScopedModelsScreen(session, models))
