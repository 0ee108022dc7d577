"""``/model`` (no arguments): fuzzy-pick a model you have a key for, its thinking level, and the scope.

Keys: type to filter (pi's fuzzy matcher over ``provider/id`` and the name), ↑/↓ move, ←/→ thinking
level (reasoning models), Enter switches for this session, Ctrl+S also saves it as the default
(``defaultProvider``/``defaultModel``/``defaultThinkingLevel``), Tab shows all or only the scoped models
(``enabledModels``, the Ctrl+P cycle), Ctrl+T adds or removes the highlighted model from that scope
(saved at once), Esc closes. The current model stays marked with ``●``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from pi_tui.ai.thinking import parse_thinking_level
from pi_tui.ai.types import THINKING_LEVELS, Model

from ..keys import list_binding
from ._format import fmt_tokens
from ._picker import SearchListScreen
from ._rowlist import RowList

if TYPE_CHECKING:
    from pi_tui.ai.types import ThinkingLevel
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["Columns", "ModelScreen", "open_model", "plan_columns", "scoped_labels"]


def scoped_labels(session: AgentSession, models: list[Model]) -> list[str]:
    """``provider/id`` of the models in the scope (``enabledModels`` patterns), in pattern order."""
    settings = session.settings
    patterns = settings.enabled_models if settings is not None else None
    if not patterns:
        return []
    from pi_tui.ai.model_resolver import resolve_model_scope

    scoped, _warnings = resolve_model_scope(patterns, models)
    return [s.model.label for s in scoped]


def _price(model: Model, *, long: bool = True) -> str:
    c = model.cost
    if not (c.input or c.output):
        return "free"
    return f"${c.input:g}/${c.output:g}" + (" per M" if long else "")


def _capabilities(model: Model) -> str:
    caps = []
    if model.reasoning:
        caps.append("thinking")
    if "image" in model.input:
        caps.append("images")
    return ", ".join(caps) or "text"


_CTX_WIDTH = 8  # "1.0M ctx"
_MIN_LABEL = 16
_SCOPED_TAG = "[scoped]"


@dataclass(frozen=True)
class Columns:
    """How a picker row is laid out at one width: each column's width, 0 for a column left out."""

    label: int
    price: int
    long_price: bool
    caps: int
    scoped: int


def plan_columns(width: int, models: Sequence[Model], *, scoped: bool) -> Columns:
    """The widest layout that fits ``width`` columns without cutting a model's ``provider/id``.

    Narrower terminals first shorten the price (``$3/$15`` instead of ``$3/$15 per M``), then drop the
    capabilities, then the price; only when even ``provider/id`` and the context size do not fit is the
    label cut (with an ellipsis), so the context size stays readable.
    """
    label = max((len(m.label) for m in models), default=_MIN_LABEL)
    long_price = max((len(_price(m)) for m in models), default=0)
    short_price = max((len(_price(m, long=False)) for m in models), default=0)
    caps = max((len(_capabilities(m)) for m in models), default=0)
    tag = len(_SCOPED_TAG) if scoped else 0
    gap = 2
    fixed = 2 + label + gap + _CTX_WIDTH + (gap + tag if tag else 0)  # the "● " marker first
    for price, long, show_caps in (
        (long_price, True, True),
        (short_price, False, True),
        (short_price, False, False),
        (0, False, False),
    ):
        needed = fixed + (gap + price if price else 0) + (gap + caps if show_caps else 0)
        if needed <= width:
            return Columns(label, price, long, caps if show_caps else 0, tag)
    spare = width - (fixed - label)
    return Columns(max(_MIN_LABEL, spare), 0, False, 0, tag)


class ModelScreen(SearchListScreen[Model]):
    """The model picker."""

    DEFAULT_CSS = """
    ModelScreen #model-hint { height: auto; padding: 0 1; color: $warning; }
    ModelScreen #model-empty { height: 1; padding: 0 1; color: $text-muted; display: none; }
    """
    BINDINGS = [
        Binding("left", "thinking(-1)", "Less thinking", show=False, priority=True),
        Binding("right", "thinking(1)", "More thinking", show=False, priority=True),
        Binding("tab", "scope", "All / scoped", priority=True),
        Binding("ctrl+t", "toggle_scope", "Scope", priority=True),
        list_binding("app.models.save", "save", show=True),
    ]

    def __init__(
        self,
        session: AgentSession,
        models: list[Model],
        query: str = "",
        *,
        switch: Callable[[Model, ThinkingLevel, bool], None] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self._switch = switch
        """Switches the session's model and level and tells the user, who saved it as the default when the
        last argument is true (`PiApp.pick_model`); without it the picker only switches the session."""
        self.models = models
        self.scoped = scoped_labels(session, models)
        self.view: Literal["all", "scoped"] = "all"
        self.thinking: ThinkingLevel = session.thinking
        if (
            not session.model.reasoning
        ):  # its level was clamped to "off": start a thinking model at the default
            settings = session.settings
            default = settings.default_thinking_level if settings is not None else None
            self.thinking = parse_thinking_level(default) or "medium"
        self.shown: list[Model] = list(models)
        self._initial_query = query
        self._plan: tuple[tuple[int, bool], Columns] | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="model-title", classes="picker-title")
            if not self.scoped:  # as pi: say why a provider is missing and how to add one
                yield Static(
                    "Only providers with a key or a login are listed; /login adds one.", id="model-hint"
                )
            yield Input(
                value=self._initial_query,
                placeholder="Type to search models",
                id="model-search",
                classes="picker-search",
            )
            yield Static("No matching models", id="model-empty")
            yield RowList(self._render_row, mark="→ ", id="model-list")
            yield Static(
                "↑/↓ move · ←/→ thinking · Enter use · ctrl+s save as default · Tab all/scoped · "
                "ctrl+t add/remove from scope · Esc close",
                id="model-help",
                classes="picker-help",
            )

    def on_mount(self) -> None:
        self._apply()
        self.query_one(Input).focus()

    def _render_row(self, index: int) -> Text:
        if index >= len(self.shown):
            return Text("")
        model = self.shown[index]
        cols = self._columns()
        current = model.label == self.session.model.label
        text = Text(no_wrap=True)
        text.append("● " if current else "  ", style="green")
        label = model.label
        if len(label) > cols.label:
            label = label[: cols.label - 1] + "…"
        text.append(label.ljust(cols.label), style="bold" if current else "")
        text.append(f"  {fmt_tokens(model.context_window) + ' ctx':>{_CTX_WIDTH}}", style="dim")
        if cols.price:
            text.append(f"  {_price(model, long=cols.long_price):<{cols.price}}", style="dim")
        if cols.caps:
            text.append(f"  {_capabilities(model):<{cols.caps}}", style="dim")
        if cols.scoped and model.label in self.scoped:
            text.append(f"  {_SCOPED_TAG}", style="cyan")
        return text

    def _columns(self) -> Columns:
        """The row layout for the list's current width (worked out once per width and scope)."""
        width = self._list().row_width or self.app.size.width
        key = (width, bool(self.scoped))
        if self._plan is None or self._plan[0] != key:
            self._plan = (key, plan_columns(width, self.models, scoped=bool(self.scoped)))
        return self._plan[1]

    def _apply(self) -> None:
        pool = self.models
        if self.view == "scoped":
            by_label = {m.label: m for m in self.models}
            pool = [by_label[label] for label in self.scoped if label in by_label]
        from pi_tui.ai.model_resolver import search_models_for_picker

        query = self.query_one(Input).value.strip()
        self.shown = search_models_for_picker(query, pool)
        current = next((i for i, m in enumerate(self.shown) if m.label == self.session.model.label), 0)
        self._list().reset(len(self.shown), 0 if query else current)
        self.query_one("#model-empty", Static).display = not self.shown
        self._title()

    def _title(self) -> None:
        model = self._selected()
        level = self._level_for(model) if model is not None else self.thinking
        view = "all" if self.view == "all" else f"scoped ({len(self.scoped)})"
        thinking = f" · thinking: {level}" if model is not None and model.reasoning else ""
        self.query_one("#model-title", Static).update(
            f"Select model · {len(self.shown)} of {len(self.models)} · {view}{thinking}"
        )

    def _level_for(self, model: Model) -> ThinkingLevel:
        from pi_tui.ai.thinking import clamp_thinking_level

        return clamp_thinking_level(model, self.thinking)

    # --- keys -----------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose(save=False)

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        self._choose(save=False)

    def on_row_list_highlighted(self, event: RowList.Highlighted) -> None:
        event.stop()
        if self.is_mounted:
            self._title()

    def action_thinking(self, step: int) -> None:
        model = self._selected()
        if model is None or not model.reasoning:
            return
        index = THINKING_LEVELS.index(self.thinking) if self.thinking in THINKING_LEVELS else 0
        self.thinking = THINKING_LEVELS[max(0, min(len(THINKING_LEVELS) - 1, index + step))]
        self._title()

    def action_scope(self) -> None:
        self.view = "scoped" if self.view == "all" else "all"
        self._apply()

    def action_toggle_scope(self) -> None:
        model = self._selected()
        settings = self.session.settings
        if model is None or settings is None:
            return
        if model.label in self.scoped:
            self.scoped.remove(model.label)
        else:
            self.scoped.append(model.label)
        settings.set("enabledModels", list(self.scoped) or None)
        self._list().refresh_rows()
        self._title()

    def action_save(self) -> None:
        self._choose(save=True)

    def _choose(self, *, save: bool) -> None:
        model = self._selected()
        if model is None:
            return
        level = self._level_for(model)
        saved = save and self.session.settings is not None
        if saved and self.session.settings is not None:
            self.session.settings.set_default_model(model.provider, model.id)
            if model.reasoning:
                self.session.settings.set_default_thinking_level(level)
        if self._switch is not None:
            self._switch(model, level, saved)
        else:
            self.session.set_model(model, source="set")
            self.session.set_thinking_level(level)
        self.app.pop_screen()


async def open_model(app: PiApp, args: str) -> None:
    """``/model`` without arguments (the shell keeps ``/model TEXT``): push the picker."""
    session = app.session
    if session is None:
        raise RuntimeError("Startup is still in progress")
    registry = session.registry
    models = list(registry.available_models()) if registry is not None else [session.model]
    if session.has_model and not any(m.label == session.model.label for m in models):
        models.insert(0, session.model)
    from pi_tui.modes.interactive.app import PiApp

    # The screens run on any app with a session (tests use a small host); only PiApp tells the user.
    switch = app.pick_model if isinstance(app, PiApp) else None
    await app.push_screen(ModelScreen(session, models, args, switch=switch))
