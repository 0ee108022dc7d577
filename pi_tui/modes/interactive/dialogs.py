"""Modal dialogs for ``ctx.ui`` and the app's own questions: confirm, select, input, editor.

Each dismisses with its answer (None when cancelled with Escape).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar, overload

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, TextArea

from .keys import list_binding
from .marked_list import MarkedOptionList

if TYPE_CHECKING:
    from textual.app import App

    from pi_tui.runtime.session_cwd import MissingSessionCwdError

__all__ = ["ConfirmDialog", "EditorDialog", "InputDialog", "SelectDialog", "ask_continue_in_cwd"]

V = TypeVar("V")
R = TypeVar("R")

_FRAME_HEIGHT = 0.8
"""The share of the screen's height a dialog's frame may take (the frame's ``max-height: 80%``)."""
_MAX_LIST_ROWS = 20
_MIN_LIST_ROWS = 3

_FRAME_CSS = """
    {name} {{ align: center middle; background: $pi-background 60%; }}
    {name} > Vertical {{
        width: 80%;
        max-width: 90;
        height: auto;
        max-height: 80%;
        border: round $pi-border-accent;
        background: $pi-background;
        padding: 0 1;
    }}
    {name} .dialog-title {{ text-style: bold; color: $pi-accent; }}
    {name} .dialog-message {{ color: $pi-text; margin: 1 0; }}
"""


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question; ``y``/``n`` answer, Escape says no."""

    DEFAULT_CSS = (
        _FRAME_CSS.format(name="ConfirmDialog")
        + """
    ConfirmDialog Horizontal { height: auto; align-horizontal: right; }
    ConfirmDialog Button { margin: 0 1; min-width: 8; }
    """
    )
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("escape,ctrl+c", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self.title_text = title
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="dialog-title", markup=False)
            if self.message:
                yield Static(self.message, classes="dialog-message", markup=False)
            with Horizontal():
                yield Button("Yes", id="yes", variant="primary")
                yield Button("No", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class SelectDialog(ModalScreen[V | None], Generic[V]):
    """Pick one of ``options`` (type to filter, Enter picks, Escape cancels); the answer is the picked
    option's value (the option itself without ``values``)."""

    DEFAULT_CSS = (
        _FRAME_CSS.format(name="SelectDialog")
        + """
    SelectDialog OptionList, SelectDialog OptionList:focus {
        height: auto; max-height: 20; border: none; background: $pi-background;
    }
    SelectDialog Input, SelectDialog Input:focus {
        border: none; background: $pi-background; height: 1; padding: 0;
    }
    SelectDialog .dialog-hint, SelectDialog #position { color: $pi-dim; }
    SelectDialog #no-match { color: $pi-warning; }
    """
    )
    # pi's list keys (``tui.select.*``, rebound through the app's keymap), before the filter line's own:
    # Escape or Ctrl+C cancels (Ctrl+C must beat the filter line's copy key), Enter picks
    BINDINGS = [
        list_binding("tui.select.cancel", "cancel"),
        list_binding("tui.select.up", "move(-1)"),
        list_binding("tui.select.down", "move(1)"),
        list_binding("tui.select.pageUp", "page(-1)"),
        list_binding("tui.select.pageDown", "page(1)"),
        list_binding("tui.select.confirm", "confirm"),
        list_binding("app.thinking.save", "save"),
    ]

    @overload
    def __init__(
        self: SelectDialog[str],
        title: str,
        options: Sequence[str],
        *,
        values: None = None,
        message: str = "",
        search: bool = True,
        initial: int = 0,
        saveable: bool = False,
        search_keys: Sequence[str] | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        title: str,
        options: Sequence[str],
        *,
        values: Sequence[V],
        message: str = "",
        search: bool = True,
        initial: int = 0,
        saveable: bool = False,
        search_keys: Sequence[str] | None = None,
    ) -> None: ...

    def __init__(
        self,
        title: str,
        options: Sequence[str],
        *,
        values: Sequence[V] | None = None,
        message: str = "",
        search: bool = True,
        initial: int = 0,
        saveable: bool = False,
        search_keys: Sequence[str] | None = None,
    ) -> None:
        """``message`` is shown under the title; ``search=False`` leaves out the filter line (a question
        with a few fixed answers); ``initial`` is the option highlighted first (the current one). With
        ``saveable``, Ctrl+S answers too and sets `saved` (pi's "save as default" key in its selectors).
        ``search_keys`` (one per option) is what the filter matches instead of the shown text."""
        super().__init__()
        self.title_text = title
        self.message = message
        self.search = search
        self.options = list(options)
        # Without ``values`` the options are their own values (the first overload: V is str).
        self.values: list[V] = list(values) if values is not None else list(options)  # type: ignore[arg-type]
        self._search_keys = list(search_keys) if search_keys is not None else self.options
        self._shown: list[int] = list(range(len(self.options)))
        self._initial = initial if 0 <= initial < len(self.options) else 0
        self._saveable = saveable
        self.saved = False
        """True when the answer was given with Ctrl+S: use it and save it as the default too."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="dialog-title", markup=False)
            if self.message:
                yield Static(self.message, classes="dialog-message", markup=False)
            if self.search:
                yield Input(placeholder="Type to search", id="filter")
            yield MarkedOptionList(self.options, id="options")
            no_match = Static("No match", id="no-match")
            no_match.display = False
            yield no_match
            position = Static("", id="position", markup=False)
            position.display = False
            yield position
            save = " · Ctrl+S save as default" if self._saveable else ""
            yield Static(f"↑/↓ move · Enter select{save} · Esc cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = self._initial if self.options else None
        self.call_after_refresh(self._fit_list)
        self.call_after_refresh(self._show_position)
        if self.search:
            self.query_one(Input).focus()
        else:
            self.query_one(OptionList).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        from pi_tui.util.fuzzy import fuzzy_filter

        self._shown = [i for i, _ in fuzzy_filter(event.value, self._search_keys)]
        options = self.query_one(MarkedOptionList)
        options.set_rows([self.options[i] for i in self._shown])
        options.highlighted = 0 if self._shown else None
        self.query_one("#no-match", Static).display = not self._shown  # an empty list says why
        self.call_after_refresh(self._fit_list)
        self.call_after_refresh(self._show_position)

    def on_resize(self, _event: events.Resize) -> None:
        self._fit_list()
        self.call_after_refresh(self._show_position)

    def _fit_list(self) -> None:
        """Give the list only the rows the frame has left once the title, filter, hint and position line
        are in: a long list in a short terminal scrolls instead of pushing the hint out of view."""
        frame = self.query_one(Vertical)
        options = self.query_one(OptionList)
        others = sum(
            child.outer_size.height for child in frame.children if child is not options and child.display
        )
        others += 0 if self.query_one("#position").display else 1  # room for it when the list scrolls
        room = int(self.size.height * _FRAME_HEIGHT) - frame.styles.gutter.height - others
        rows = max(_MIN_LIST_ROWS, min(_MAX_LIST_ROWS, room))
        if options.styles.max_height is None or options.styles.max_height.value != rows:
            options.styles.max_height = rows
            self.call_after_refresh(self._show_position)  # whether it scrolls may have changed

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self._show_position()

    def _show_position(self) -> None:
        """As pi's lists: "(n/total)" under a list that does not fit, n being the highlighted row."""
        options = self.query_one(OptionList)
        line = self.query_one("#position", Static)
        highlighted = options.highlighted
        scrolls = options.max_scroll_y > 0
        if scrolls and highlighted is not None and self._shown:
            line.update(f"({highlighted + 1}/{len(self._shown)})")
        line.display = scrolls and bool(self._shown)

    def chosen(self) -> V | None:
        """The value of the highlighted option (None when nothing is shown)."""
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is None or not self._shown:
            return None
        return self.values[self._shown[highlighted]]

    def action_save(self) -> None:
        """pi's ``app.thinking.save`` (Ctrl+S) in a saveable selector: answer, and say to save it."""
        value = self.chosen() if self._saveable else None
        if value is not None:
            self.saved = True
            self.dismiss(value)

    def action_move(self, step: int) -> None:
        """Up / down, wrapping at the ends as pi's lists do."""
        if self._shown:
            options = self.query_one(OptionList)
            options.highlighted = ((options.highlighted or 0) + step) % len(self._shown)

    def action_page(self, direction: int) -> None:
        """A page of rows up / down, stopping at the ends."""
        if self._shown:
            options = self.query_one(OptionList)
            page = max(1, options.scrollable_content_region.height)
            options.highlighted = max(
                0, min(len(self._shown) - 1, (options.highlighted or 0) + direction * page)
            )

    def action_confirm(self) -> None:
        """Pick the highlighted option."""
        value = self.chosen()
        if value is not None:
            self.dismiss(value)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        """Enter in the filter line picks the highlighted option (when Enter is not the confirm key)."""
        self.action_confirm()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.values[self._shown[event.option_index]])

    def action_cancel(self) -> None:
        self.dismiss(None)


class InputDialog(ModalScreen[str | None]):
    """One line of text; Enter answers, Escape cancels."""

    DEFAULT_CSS = _FRAME_CSS.format(name="InputDialog")
    # Escape or Ctrl+C cancels, as in pi; Ctrl+C must beat the filter line's own copy key
    BINDINGS = [Binding("escape,ctrl+c", "cancel", "Cancel", show=False, priority=True)]

    def __init__(self, title: str, placeholder: str | None = None, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder or ""
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield Input(value=self.value, placeholder=self.placeholder)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EditorDialog(ModalScreen[str | None]):
    """Multi-line text; Ctrl+S (or F10) answers, Escape cancels."""

    DEFAULT_CSS = (
        _FRAME_CSS.format(name="EditorDialog")
        + """
    EditorDialog TextArea { height: 12; }
    EditorDialog .dialog-hint { color: $pi-dim; }
    """
    )
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+s,f10", "save", "Save", show=False, priority=True),
    ]

    def __init__(self, title: str, prefill: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.prefill = prefill or ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield TextArea(self.prefill)
            yield Static("ctrl+s save · escape cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


async def ask_continue_in_cwd(app: App[R], gone: MissingSessionCwdError) -> bool:
    """pi's "Session cwd not found" question, the one dialog for every place a session's recorded
    directory turns out to be gone (start-up, ``/resume``, ``/import``): True continues in the current
    directory; No, Escape or Ctrl+C answer False."""
    from .bridge import ask

    return await ask(app, ConfirmDialog("Session cwd not found", gone.question)) is True
