"""Small modal dialogs the screens share: full-content viewer, one-line prompt, confirmation, choice."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static, TextArea

from ..marked_list import MarkedOptionList

__all__ = ["DetailScreen", "PromptScreen", "ConfirmScreen", "ChoiceScreen", "EditScreen"]

_MODAL_CSS = """
{name} {{
    align: center middle;
}}
{name} > Vertical {{
    width: 90%;
    max-width: 120;
    height: auto;
    max-height: 90%;
    border: round $accent;
    background: $surface;
    padding: 0 1;
}}
{name} .title {{
    text-style: bold;
    color: $accent;
}}
{name} .hint {{
    color: $text-muted;
}}
"""


class DetailScreen(ModalScreen[None]):
    """Shows one item's full content (a message, a tool schema, a panel, a patch op). Esc closes."""

    DEFAULT_CSS = (
        _MODAL_CSS.format(name="DetailScreen")
        + """
    DetailScreen > Vertical { height: 90%; }
    DetailScreen VerticalScroll { height: 1fr; }
    """
    )
    BINDINGS = [Binding("escape,q,enter", "close", "Close")]

    def __init__(self, title: str, content: str) -> None:
        super().__init__()
        self._title = title
        self._content = content

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), classes="title")
            with VerticalScroll():
                yield Static(Text(self._content), id="detail-content")
            yield Static("Esc close", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)


class PromptScreen(ModalScreen[str | None]):
    """Asks for one line of text. Enter answers (possibly empty), Esc cancels (None)."""

    DEFAULT_CSS = _MODAL_CSS.format(name="PromptScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), classes="title")
            yield Input(value=self._value, placeholder=self._placeholder, id="prompt-input")
            yield Static("Enter confirm · Esc cancel", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EditScreen(ModalScreen[str | None]):
    """Edits a longer text (a summary). Ctrl+S saves, Esc cancels (None)."""

    DEFAULT_CSS = (
        _MODAL_CSS.format(name="EditScreen")
        + """
    EditScreen > Vertical { height: 90%; }
    EditScreen TextArea { height: 1fr; }
    """
    )
    BINDINGS = [Binding("ctrl+s", "save", "Save"), Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self._title = title
        self._text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), classes="title")
            yield TextArea(self._text, id="edit-area", soft_wrap=True)
            yield Static("Ctrl+S save · Esc cancel", classes="hint")

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: y or Enter confirms, n or Esc declines."""

    DEFAULT_CSS = _MODAL_CSS.format(name="ConfirmScreen")
    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._question), classes="title")
            yield Static("y/Enter yes · n/Esc no", classes="hint")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class ChoiceScreen(ModalScreen[int | None]):
    """Pick one of a few options (↑/↓, Enter); Esc cancels (None). Answers the chosen index."""

    # The list bare inside the frame, "→ " before the highlighted row, as pi's select lists are drawn.
    DEFAULT_CSS = _MODAL_CSS.format(name="ChoiceScreen") + (
        "ChoiceScreen OptionList, ChoiceScreen OptionList:focus "
        "{ height: auto; border: none; background: $surface; }"
    )
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, options: Sequence[str], *, initial: int = 0) -> None:
        super().__init__()
        self._title = title
        self._options = list(options)
        self._initial = initial if 0 <= initial < len(self._options) else 0

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), classes="title")
            yield MarkedOptionList(self._options, id="choices")
            yield Static("↑/↓ move · Enter select · Esc cancel", classes="hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = self._initial

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_index)

    def action_cancel(self) -> None:
        self.dismiss(None)
