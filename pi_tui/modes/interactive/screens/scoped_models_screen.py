"""``/scoped-models``: choose the models Ctrl+P cycles through (the ``enabledModels`` setting).

Every model you have a key for is listed, those in the scope ticked and first, in the order Ctrl+P
cycles them (as pi lists them). Keys (pi's ids, rebindable in ``keybindings.json``): type to search, ↑/↓
move, Enter adds or removes the highlighted model, Ctrl+A (``app.models.enableAll``) adds every model the
search shows, Ctrl+X (``app.models.clearAll``) removes them while searching and empties the scope
otherwise (Ctrl+P then cycles every model again), Ctrl+P (``app.models.toggleProvider``) adds or removes
every model of the highlighted one's provider, Alt+Up / Alt+Down (``app.models.reorderUp`` /
``reorderDown``) move a model in the scope up or down the cycle order, Esc closes. Each change is saved at
once in the global settings, as ``/model``'s Ctrl+T saves it (pi keeps its changes for the session until
Ctrl+S).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from ..keys import list_binding
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
        list_binding("app.models.enableAll", "add_shown", show=True),
        list_binding("app.models.clearAll", "clear", show=True),
        list_binding("app.models.toggleProvider", "toggle_provider", show=True),
        list_binding("app.models.reorderUp", "reorder(-1)"),
        list_binding("app.models.reorderDown", "reorder(1)"),
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
                "↑/↓ move · Enter add/remove · ctrl+a add all shown · ctrl+x clear · ctrl+p provider · "
                "alt+↑/↓ reorder · Esc close (saved in settings at once)",
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
        self.shown = self._scope_first(search_models_for_picker(query, self.models))
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

    def _scope_first(self, models: list[Model]) -> list[Model]:
        """``models`` with those in the scope first, in their cycling order (a stable sort)."""
        order = {label: index for index, label in enumerate(self.scoped)}
        return sorted(models, key=lambda m: order.get(m.label, len(order)))

    def action_add_shown(self) -> None:
        self.scoped += [m.label for m in self.shown if m.label not in self.scoped]
        self._save()

    def action_clear(self) -> None:
        """Remove the models the search shows from the scope; with no search, empty it."""
        if self.query_one(Input).value.strip():
            shown = {m.label for m in self.shown}
            self.scoped = [label for label in self.scoped if label not in shown]
        else:
            self.scoped = []
        self._save()

    def action_toggle_provider(self) -> None:
        """Add every model of the highlighted model's provider, or remove them all when all are in."""
        model = self._selected()
        if model is None:
            return
        labels = [m.label for m in self.models if m.provider == model.provider]
        if all(label in self.scoped for label in labels):
            self.scoped = [label for label in self.scoped if label not in labels]
        else:
            self.scoped += [label for label in labels if label not in self.scoped]
        self._save()

    def action_reorder(self, step: int) -> None:
        """Move the highlighted model (in the scope) one place up or down the cycle order."""
        model = self._selected()
        if model is None or model.label not in self.scoped:
            return
        index = self.scoped.index(model.label)
        target = index + step
        if not 0 <= target < len(self.scoped):
            return
        self.scoped[index], self.scoped[target] = self.scoped[target], self.scoped[index]
        self.shown = self._scope_first(self.shown)
        self._list().reset(len(self.shown), self.shown.index(model))
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
