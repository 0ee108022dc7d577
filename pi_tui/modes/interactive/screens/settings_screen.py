"""``/settings``: every setting, its value and where it comes from, edited in place.

Keys: type to search, ↑/↓ move, Enter changes the setting (toggles a switch, picks a choice, asks for
a number; the theme list previews each theme as the cursor moves and Esc restores the old one), Ctrl+D
resets it to the default (removes it from the file being written), Ctrl+G writes to the project file
instead of the global one, Esc closes. Writes are field-level (`settings_catalog.write`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ..terminal_theme import parse_auto_theme
from ._dialogs import ChoiceScreen, PromptScreen
from ._picker import SearchListScreen
from ._rowlist import RowList
from .settings_catalog import CATALOG, Setting, parse_value, shown_value, source_of, value_of, write

if TYPE_CHECKING:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

R = TypeVar("R")

__all__ = ["LiveSettingsApp", "SettingsScreen", "ThemePicker", "ThemedApp", "open_settings", "preview_theme"]


@runtime_checkable
class ThemedApp(Protocol):
    """An app that switches pi themes itself (`PiApp`): it also records the name and watches the file."""

    theme_paths: list[Path]
    """Theme files and folders besides the built-in and user ones (settings, packages, extensions)."""

    def set_pi_theme(self, name: str) -> str | None: ...


@runtime_checkable
class LiveSettingsApp(Protocol):
    """An app that applies the settings it reads itself (`PiApp`: thinking, editor padding, cursor)."""

    def apply_settings(self) -> None: ...


def preview_theme(app: App[R], name: str) -> None:
    """Show theme ``name`` now (the app's own switch when it has one, else register it here).

    The app's switch makes the shown theme the app's theme: its file's later edits are applied (hot
    reload) and do not bring back the theme shown before.
    """
    if isinstance(app, ThemedApp):
        app.set_pi_theme(name)
        return
    from pi_tui.modes.interactive.terminal_theme import appearance_from_env, resolve_theme
    from pi_tui.modes.interactive.theme import find_theme_file, load_theme, to_textual

    path = find_theme_file(resolve_theme(name, appearance_from_env() or "dark"))
    if path is None:
        return
    theme = to_textual(load_theme(path))
    app.register_theme(theme)
    app.theme = theme.name


def _index(names: list[str], name: str) -> int:
    return names.index(name) if name in names else 0


def _theme_names(session: AgentSession, app: App[R]) -> list[str]:
    """Built-in and user themes, and those the session adds (the app's list, which has the packages')."""
    from pi_tui.modes.interactive.theme import session_theme_paths, theme_names

    settings = session.settings
    agent_dir = settings.agent_dir if settings is not None else None
    extra = app.theme_paths if isinstance(app, ThemedApp) else session_theme_paths(session)
    return theme_names(agent_dir, session.cwd, extra)


class ThemePicker(ModalScreen[str | None]):
    """Themes, previewed as the cursor moves; Enter keeps one, Esc goes back to the one before.

    The first choice is pi's "Automatic": a theme for a light terminal and one for a dark one, written
    as ``light/dark`` (the pair already set, else the built-in light and dark themes), which follows the
    terminal's background (`pi_tui.modes.interactive.terminal_theme`).
    """

    # Framed as the other dialogs are (a padded frame, the list without a box of its own); Escape or
    # Ctrl+C goes back, as in pi's selectors.
    DEFAULT_CSS = """
    ThemePicker { align: center middle; }
    ThemePicker > Vertical {
        width: 50; height: auto; max-height: 80%; border: round $accent; background: $surface; padding: 0 1;
    }
    ThemePicker .title { text-style: bold; color: $accent; }
    ThemePicker OptionList, ThemePicker OptionList:focus {
        height: auto; max-height: 20; border: none; background: $surface;
    }
    ThemePicker .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,ctrl+c", "cancel", "Cancel", priority=True)]

    def __init__(self, names: list[str], current: str) -> None:
        super().__init__()
        self.automatic = current if parse_auto_theme(current) else "light/dark"
        self.names = [self.automatic, *names]
        self.current = current

    def compose(self) -> ComposeResult:
        automatic = Option(f"Automatic ({self.automatic})  follows the terminal's background", id=self.automatic)
        with Vertical():
            yield Static("Theme (previewed as you move)", classes="title")
            yield OptionList(automatic, *[Option(n, id=n) for n in self.names[1:]], id="themes")
            yield Static("↑/↓ preview · Enter keep · Esc back", classes="hint")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        listing.highlighted = self.names.index(self.current) if self.current in self.names else 0
        listing.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_id:
            preview_theme(self.app, event.option_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_id)

    def action_cancel(self) -> None:
        preview_theme(self.app, self.current)
        self.dismiss(None)


_LABEL_WIDTH = 40
_MAX_VALUE_WIDTH = 30


class SettingsScreen(SearchListScreen[Setting]):
    """The settings list."""

    BINDINGS = [
        Binding("ctrl+d", "reset", "Reset to default", priority=True),
        Binding("ctrl+g", "scope", "Global / project", priority=True),
    ]

    def __init__(self, session: AgentSession) -> None:
        super().__init__()
        self.session = session
        if session.settings is None:
            raise ValueError("The settings screen needs a session with settings (this one has none)")
        self.settings = session.settings
        self.scope: Literal["global", "project"] = "global"
        self.shown: list[Setting] = list(CATALOG)
        self._value_width = 16

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="settings-title", classes="picker-title")
            yield Input(placeholder="Type to search", id="settings-search", classes="picker-search")
            yield RowList(self._render_row, mark="→ ", id="settings-list")
            yield Static(
                "Type to search · Enter change · ctrl+d reset to default · ctrl+g write global/project · Esc close",
                id="settings-help",
                classes="picker-help",
            )

    def on_mount(self) -> None:
        self._apply()
        self.query_one(Input).focus()

    def _render_row(self, index: int) -> Text:
        if index >= len(self.shown):
            return Text("")
        setting = self.shown[index]
        shown = shown_value(self.settings, setting)
        source = source_of(self.settings, setting)
        text = Text(no_wrap=True)
        text.append(setting.label.ljust(_LABEL_WIDTH))
        width = self._value_width
        value = shown if len(shown) <= width else shown[: width - 1] + "…"
        text.append(value.ljust(width + 2), style="bold")  # two spaces before the source, always
        text.append(f"{source:<8}", style={"default": "dim", "global": "cyan", "project": "magenta"}[source])
        text.append(f"  {setting.key}", style="dim")
        return text

    def _apply(self, keep: str | None = None) -> None:
        query = self.query_one(Input).value.strip().lower()
        self.shown = [
            s for s in CATALOG if not query or all(t in f"{s.label} {s.key}".lower() for t in query.split())
        ]
        index = next((i for i, s in enumerate(self.shown) if s.key == keep), 0)
        # The value column is as wide as the longest value (16 to 30), so the source column stays aligned.
        longest = max((len(shown_value(self.settings, s)) for s in CATALOG), default=0)
        self._value_width = max(16, min(_MAX_VALUE_WIDTH, longest))
        self._list().reset(len(self.shown), index)
        self.query_one("#settings-title", Static).update(
            f"Settings · {len(self.shown)} of {len(CATALOG)} · writing to {self.scope} settings"
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._edit()

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        self._edit()

    def action_scope(self) -> None:
        self.scope = "project" if self.scope == "global" else "global"
        self._apply(keep=(s.key if (s := self._selected()) else None))

    def action_reset(self) -> None:
        setting = self._selected()
        if setting is not None:
            self._save(setting, None)

    def _save(self, setting: Setting, value: Any) -> None:
        from pi_tui.resources.settings import ProjectNotTrustedError

        try:
            write(self.settings, setting, value, self.scope)
        except (ProjectNotTrustedError, TypeError) as exc:
            self.notify(str(exc), severity="error")
            return
        for problem in self.settings.drain_errors():
            self.notify(problem, severity="error")
        if setting.kind == "theme":
            preview_theme(self.app, str(value_of(self.settings, setting)))
        if isinstance(self.app, LiveSettingsApp):  # a change shows at once, no restart
            self.app.apply_settings()
        self._list().refresh_rows()

    def _edit(self) -> None:
        setting = self._selected()
        if setting is None:
            return
        current = value_of(self.settings, setting)
        if setting.kind == "bool":
            self._save(setting, not bool(current))
        elif setting.kind == "choice":
            choices = list(setting.choices)

            def chosen(index: int | None) -> None:
                if index is not None:
                    self._save(setting, choices[index])

            self.app.push_screen(ChoiceScreen(setting.label, choices), chosen)
        elif setting.kind == "readonly":
            self.notify(setting.help or f"{setting.label} cannot be edited here", severity="warning")
        elif setting.kind == "theme":
            names = _theme_names(self.session, self.app)

            def picked(name: str | None) -> None:
                if name is None:
                    return
                pair = parse_auto_theme(name)
                if pair is None:
                    self._save(setting, name)
                    return
                # Automatic, as pi's menu for it: the theme for a light terminal, then for a dark one
                def light_chosen(light: int | None) -> None:
                    if light is None:
                        preview_theme(self.app, str(current))
                        return

                    def dark_chosen(dark: int | None) -> None:
                        if dark is None:
                            preview_theme(self.app, str(current))
                            return
                        self._save(setting, f"{names[light]}/{names[dark]}")

                    self.app.push_screen(
                        ChoiceScreen("Theme for a dark terminal", names, initial=_index(names, pair[1])),
                        dark_chosen,
                    )

                self.app.push_screen(
                    ChoiceScreen("Theme for a light terminal", names, initial=_index(names, pair[0])),
                    light_chosen,
                )

            self.app.push_screen(ThemePicker(names, str(current)), picked)
        else:

            def typed(text: str | None) -> None:
                if text is None:
                    return
                try:
                    value = parse_value(setting, text)
                except ValueError as exc:
                    self.notify(str(exc), severity="error")
                    return
                self._save(setting, value)

            if setting.kind == "list":
                start = ", ".join(str(item) for item in current or [])
            else:
                start = "" if current is None else str(current)
            self.app.push_screen(PromptScreen(setting.label, start, placeholder=setting.help), typed)


async def open_settings(app: PiApp, _args: str) -> None:
    """``/settings``: push the settings list."""
    if app.session is None or app.session.settings is None:
        app.notify("No settings in this session", severity="error")
        return
    await app.push_screen(SettingsScreen(app.session))
