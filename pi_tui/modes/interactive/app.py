"""`PiApp`: the full-screen interface, one more consumer of `AgentSession`.

Start-up draws the first frame with an empty chat and a ready editor, then (after that frame) asks the
project-trust question if needed, creates the session in a thread, loads the visible end of its history,
and warms the provider. Text typed meanwhile is kept and sent once the session is ready.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.driver import Driver
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static, TextArea

from pi_tui.modes.prompt_history import PromptHistory

from .actions import NARROW_COLUMNS, KeyActions
from .bash import UserBash
from .chat import ChatLog
from .completion import CompletionMenu, FileIndex
from .editor import PromptEditor
from .footer import FooterState, StatusFooter, git_branch
from .keys import (
    APP_ACTIONS,
    EXTENSION_PROOF_EDITOR_ACTIONS,
    SCREEN_SCOPES,
    app_bindings,
    editor_action_keys,
    key_display,
    load_keymap,
    textual_keymap,
)
from .sidebar import PanelSidebar
from .status import ExtensionWidgets, PendingArea, WorkingLine
from .terminal_driver import GuardedDriver, TerminalBackground, TerminalColorScheme
from .terminal_progress import TerminalProgress
from .terminal_theme import (
    BACKGROUND_QUERY,
    SCHEME_QUERY,
    Appearance,
    appearance_from_env,
    appearance_of_rgb,
    parse_auto_theme,
    resolve_theme,
)
from .textual_private import (
    free_layout_maps_promptly,
    full_map_kept_after_reflow,
    strips_never_cache_themselves,
)
from .theme import ThemeError, find_theme_file, load_theme, to_textual, variable_defaults
from .typeahead import TypeAhead
from .warm_turn import WarmUpTurn
from .workers import run_later

if TYPE_CHECKING:
    from textual.widget import Widget

    from pi_tui.ai.types import ImageContent, Message
    from pi_tui.extensions.extension import RegisteredShortcut
    from pi_tui.runtime.agent_session import AgentSession
    from pi_tui.runtime.factory import Startup
    from pi_tui.runtime.session_cwd import MissingSessionCwdError, SessionInOtherProjectError

    from .adapter import ChatAdapter
    from .blocks import NoticeBlock
    from .exit_guard import ExitGuard
    from .pacing import PacedScreen
    from .signal_wakeup import SignalWakeup
    from .transcript_search import TranscriptSearch

__all__ = ["PiApp"]

_WARM_MARKDOWN = (
    "# Title\n\nSome *text* with `code` and a [link](https://example.com).\n\n- item\n1. first\n\n"
    "> quote\n\n```python\nx = 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n"
)

_APP_KEY_ACTIONS = {spec[0].split("(")[0] for spec in APP_ACTIONS.values()}
_SEARCH_ONLY_ACTIONS = {"search_step", "close_search"}

log = logging.getLogger(__name__)

DOUBLE_PRESS_SECONDS = 0.5

COUNT_AT_LOAD_FROM = 1000
"""From this many messages, a resumed session's token counts are made while it loads (see
`PiApp._create_and_preload`); a shorter one is counted in a few milliseconds by the work ahead."""


class PiApp(KeyActions, App[int], inherit_bindings=False):
    """The pi-tui full-screen app.

    Args:
        create_startup: Builds the `pi_tui.runtime.factory.Startup` (session and warnings); it runs in a
            thread after the first frame. Tests pass one bound to the faux provider or the fake server.
        cwd: The project directory.
        agent_dir: pi's agent directory (themes, keybindings, prompt history).
        initial_prompts: Prompts from the command line, sent in order once the session is ready.
        initial_images: Images (``@file`` arguments) sent with the first of ``initial_prompts``.
        needs_trust: Called with the directory the run will work in before the session is created;
            returns True when the project-trust question must be asked about it (the answer is passed
            to ``create_startup`` via ``trust``).
        trust_for_this_run: With it, the question also offers "Trust (this session only)", pi's answer
            that records nothing: it is called (pi-tui's start-up sets ``--approve``) and
            ``create_startup`` then gets ``trust=None``.
        continue_in_cwd: With it, a ``--session`` file whose recorded working directory is gone asks
            "Session cwd not found" (as pi); yes calls it (the next ``create_startup`` keeps ``cwd``), no
            leaves with exit code 0. Without it such a start is an error like any other.
        run_cwd: Called first: the directory the run will work in (a ``--session`` file's own, as pi),
            so that the trust question is about it. It raises what start-up would ask about first:
            `MissingSessionCwdError` (see ``continue_in_cwd``) or `SessionInOtherProjectError`, whose
            question, as pi's, is whether to fork that session here; yes calls ``fork_here`` with it,
            no leaves with exit code 0 ("Aborted.").
        fork_here: See ``run_cwd``.
        theme_name: The pi theme to start with.
        preview_path: A session file whose last messages the first frame shows (read from its tail,
            `preview.read_tail`) until the session is ready.
    """

    TITLE = "pi-tui"
    ENABLE_COMMAND_PALETTE = False  # Ctrl+P cycles models, as in pi
    CSS = """
    Screen { layout: vertical; background: $pi-background; }
    /* A dialog dims the chat behind it instead of hiding it (the rule above would make it opaque): what
       led to a question stays readable while you answer it, as in pi. */
    ModalScreen { background: $pi-background 60%; }
    #main { height: 1fr; }
    #bottom { height: auto; }
    .preview { margin: 1 0 0 0; padding: 0 1; }
    .preview-user { background: $pi-user-message-bg; color: $pi-user-message-text; }
    /* Toasts at the top right of the chat, not over the editor and footer at the bottom. */
    #_default ToastRack { dock: top; align: right top; }
    """
    # Only pi's keys: Textual's own App bindings (Ctrl+Q quits at once, Ctrl+C shows a quit hint) are
    # not inherited. As in pi, Ctrl+C twice or Ctrl+D on an empty editor quits, and Ctrl+Q is free.
    BINDINGS = [*app_bindings()]

    session: AgentSession | None = None
    working_message: reactive[str] = reactive("Working")
    hide_thinking: bool = False
    """``hideThinkingBlock`` / Ctrl+T: thinking blocks are hidden."""
    hidden_thinking_label: str = "Thinking..."
    """What a hidden thinking block shows: pi's label, or an extension's (``ctx.ui``)."""
    hardware_cursor: bool = False
    """``showHardwareCursor``: the terminal's cursor is shown at the editor's cursor."""
    mermaid_mode: str = "streaming"
    """``markdown.mermaid``: when Mermaid blocks in answers are drawn as diagrams (off, final, streaming)."""
    hyperlinks: bool = False
    """Links in answers and thinking are OSC 8 links (``terminal.hyperlinks``, ``PI_HYPERLINKS``, else
    detected as pi does); else each address is written after its text. Set with the session's settings."""
    verbose_startup: bool = False
    """``--verbose`` (set by `run_interactive`): the start-up header even with ``quietStartup``."""
    theme_override: str | None = None
    """``--use-theme`` (set by `run_interactive`): this run's theme, kept over the setting by /reload."""
    start_header: tuple[str, str] | None = None
    """pi's start-up header (version, keys, what was loaded) over the chat; None with ``quietStartup``."""
    tools_expanded: bool = False
    """Ctrl+O: every tool block shows its whole output."""
    transcript_search: TranscriptSearch | None = None
    """The transcript search (`transcript_search`), made the first time it opens."""

    def __init__(
        self,
        create_startup: Callable[[bool | None], Startup],
        *,
        cwd: Path,
        agent_dir: Path | None = None,
        initial_prompts: list[str] | None = None,
        initial_images: Sequence[ImageContent] | None = None,
        needs_trust: Callable[[Path], bool] | None = None,
        trust_for_this_run: Callable[[], None] | None = None,
        continue_in_cwd: Callable[[], None] | None = None,
        run_cwd: Callable[[], Path] | None = None,
        fork_here: Callable[[SessionInOtherProjectError], None] | None = None,
        theme_name: str | None = None,
        preview_path: Path | None = None,
    ) -> None:
        self._agent_dir = agent_dir
        self._preview_path = preview_path
        self._cwd = cwd
        self._theme_name = theme_name or "dark"
        """The theme setting: a theme's name, or pi's automatic ``light/dark`` pair (`terminal_theme`)."""
        self.terminal_appearance: Appearance = appearance_from_env() or "dark"
        """The terminal's background: from ``COLORFGBG`` at start-up, then from its OSC 11 answer."""
        self._background_asked = False
        self._scheme_reported = False
        """The terminal reported its colour scheme: its background answers are not followed any more."""
        self._detected: Appearance | None = None
        """The terminal's answer, to save as the theme once the session's settings are there."""
        super().__init__()
        # Widgets the chat unmounts while reading a long session are freed at once, not by full garbage
        # collections in the middle of a held key (see `free_layout_maps_promptly`); so are the lines
        # they drew (`strips_never_cache_themselves`).
        free_layout_maps_promptly()
        strips_never_cache_themselves()
        # Each step of reading ahead asks where off-screen blocks are: from the layout just made.
        full_map_kept_after_reflow()
        self._create_startup = create_startup
        self._initial_prompts = list(initial_prompts or [])
        self._initial_images = list(initial_images or [])
        self._needs_trust = needs_trust
        self._trust_for_this_run = trust_for_this_run
        self._continue_in_cwd = continue_in_cwd
        self._run_cwd = run_cwd
        self._fork_here = fork_here
        self._waiting: list[tuple[str, bool]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._pending_text = ""
        self._context_unknown = False
        self._own_title: str | None = None  # the title pi-tui last gave the terminal (π - folder)
        self._busy = False
        self._not_busy = asyncio.Event()
        self._not_busy.set()
        self._last_ctrl_c = 0.0
        self._last_escape = 0.0
        self._escape_cancels: list[Callable[[], None]] = []
        """What Escape stops first, newest first (a command's work under way, such as /share's upload)."""
        self._statuses: dict[str, str] = {}
        self._ext_widgets: dict[str, Static] = {}
        self._theme_mtime: float | None = None
        self._theme_path: Path | None = None
        self._theme_timer: Timer | None = None
        self.terminal_progress = TerminalProgress(
            lambda: self.session.settings if self.session is not None else None,
            self.write_to_terminal,
            self.set_interval,
        )
        self.theme_paths: list[Path] = []
        """Theme files and folders the session adds (`theme.session_theme_paths`), known once it is ready."""
        self._startup_error: str | None = None
        self.startup: Startup | None = None
        self.adapter: ChatAdapter | None = None
        """The listener that draws the session's events, once the session is attached."""
        self.ready = asyncio.Event()
        self.first_frame_at: float | None = None
        self.history = PromptHistory.for_project(cwd, agent_dir) if agent_dir else PromptHistory(None)
        self.keymap, self.key_warnings = load_keymap(agent_dir)
        self.shortcuts: dict[str, str] = {}
        """Extensions' shortcuts: Textual key → the key as the extension registered it."""
        self.chat = ChatLog(id="chat")
        self.user_bash = UserBash()
        # Keys stay with the editor: the chat scrolls from it (PageUp, Shift+Up …) and by the wheel, and
        # a focused chat would swallow what is typed next.
        self.chat.can_focus = False
        self.editor = PromptEditor(self.history, id="editor")
        self.typeahead = TypeAhead(
            self.post_message,
            self.call_after_refresh,
            lambda: self.focused is not None and self.focused.screen is self.screen,
        )
        self.menu = CompletionMenu()
        self.footer = StatusFooter()
        self.sidebar = PanelSidebar()
        self.pending = PendingArea(id="pending")
        self.working = WorkingLine()
        self.above = ExtensionWidgets(id="widgets-above")
        self.below = ExtensionWidgets(id="widgets-below")
        self.files = FileIndex(cwd)
        self.warm_turn = WarmUpTurn(lambda: self.screen is self.screen_stack[0], lambda: self.editor.text)
        """What the warm-up gives way to (a command being typed, a screen on top, recent keys)."""
        self._typed_hold: Callable[[], None] | None = None  # see `_hold_for_typed_screen`
        self.editor.menu = self.menu
        self.menu.visible_rows = self._autocomplete_rows
        self.editor.files = self.files
        from .commands import CommandRouter

        self.router = CommandRouter(self)
        self.editor.commands = self.router.candidates
        self.editor.arguments = self.router.argument_candidates
        self.editor.mentions = self.router.mention_candidates
        from .keys import editor_key_actions, list_key_actions

        self.editor.key_actions, editor_warnings = editor_key_actions(agent_dir)
        self.editor.list_actions = list_key_actions(self.keymap)
        self.key_warnings += editor_warnings
        self._apply_theme(self._theme_name)
        # pi's app actions are priority bindings with pi's ids (they win over the editor's own keys:
        # shift+tab, ctrl+z …, as in pi); the keymap gives them the default or the user's keys.
        self.set_keymap(textual_keymap(self.keymap))

    def transcript_search_box(self) -> TranscriptSearch:
        """The transcript search (pi's ``tui.altScreen.search``), made the first time it is used."""
        if self.transcript_search is None:
            from .transcript_search import TranscriptSearch

            self.transcript_search = TranscriptSearch(self)
        return self.transcript_search

    def reload_keybindings(self) -> list[str]:
        """Read keybindings.json again (``/reload``, as pi's): the app's and the editor's keys follow it
        from the next key on. Returns the problems found in the file."""
        from .keys import editor_key_actions, list_key_actions

        self.keymap, warnings = load_keymap(self._agent_dir)
        self.editor.key_actions, editor_warnings = editor_key_actions(self._agent_dir)
        self.editor.list_actions = list_key_actions(self.keymap)
        self.set_keymap(textual_keymap(self.keymap))
        self.pending_changed()  # the queue's hint names the dequeue key
        return warnings + editor_warnings

    def _autocomplete_rows(self) -> int:
        """The ``autocompleteMaxVisible`` setting (pi's 5 until the session is ready)."""
        settings = self.session.settings if self.session is not None else None
        return int(settings.autocomplete_max_visible) if settings is not None else 5

    def get_default_screen(self) -> PacedScreen:
        """The main screen draws a change one frame period after the last frame (`pacing`)."""
        from .pacing import PacedScreen

        return PacedScreen(id="_default")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseScrollUp | events.MouseScrollDown):
            # The user waits for what a key or the wheel changes: draw it without waiting out the frame
            # period a streamed write may have started. Only the next change: the key is not handled yet.
            self.draw_soon(pending=False)
        if isinstance(event, events.Key):
            self.warm_turn.notice_key()
        if isinstance(event, events.Key) and not event.is_forwarded and await self._run_shortcut(event.key):
            return  # before Textual's bindings and the focused widget, as a priority binding would be
        await super().on_event(event)

    def draw_soon(self, *, pending: bool = True) -> None:
        """Draw the next change without waiting out the frame period (`PacedScreen.draw_soon`). Only
        the main screen paces its frames: with a modal screen on top this does nothing."""
        from .pacing import PacedScreen

        screen = self.screen
        if isinstance(screen, PacedScreen):
            screen.draw_soon(pending=pending)

    async def _run_shortcut(self, key: str) -> bool:
        """Run the extension shortcut on ``key``, on the main screen only; False when there is none."""
        registered = self.shortcuts.get(key)
        if registered is None or self.screen is not self.screen_stack[0]:
            return False
        await self.action_shortcut(registered)
        return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """App keys act on the main screen only; dialogs and screens keep theirs. While the transcript
        search box has the keys, only the search's and the chat's scrolling act (as in pi); the search's
        next / previous / close keys act only then."""
        if action in _APP_KEY_ACTIONS and self.screen is not self.screen_stack[0]:
            return False
        search = self.transcript_search
        searching = search is not None and search.has_focus
        if action in _SEARCH_ONLY_ACTIONS:
            return searching
        if searching and action in _APP_KEY_ACTIONS:
            return action in ("toggle_search", "scroll_chat")
        return True

    # --- theme -------------------------------------------------------------------------------------

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}

    def _apply_theme(self, name: str) -> str | None:
        """Register and select pi theme ``name`` (for an automatic ``light/dark`` setting, the one that
        suits the terminal's background); an invalid or missing one falls back to ``dark``."""
        name = resolve_theme(name, self.terminal_appearance)
        error = None
        path = find_theme_file(name, self._agent_dir, self._cwd, self.theme_paths)
        try:
            if path is None:
                raise ThemeError(f"Theme {name!r} not found")
            pi_theme = load_theme(path)
        except ThemeError as exc:
            error = str(exc)
            fallback = find_theme_file("dark")
            if fallback is None:
                return error
            pi_theme, path = load_theme(fallback), fallback
        self.register_theme(to_textual(pi_theme))
        if self.theme == f"pi-{pi_theme.name}":  # same name, new colours (hot reload): apply again
            self.mutate_reactive(App.theme)  # runs the theme's watchers again, as a new name would
        else:
            self.theme = f"pi-{pi_theme.name}"
        self._theme_path = path
        try:
            self._theme_mtime = path.stat().st_mtime
        except OSError:
            self._theme_mtime = None
        return error

    def _add_session_themes(self, startup: Startup) -> None:
        """The ``themes`` setting, packages and extensions add themes: the one asked for may be there."""
        from .theme import session_theme_paths

        self.theme_paths = session_theme_paths(self.session, startup.packages)
        shown = resolve_theme(self._theme_name, self.terminal_appearance)
        if self.theme_paths and find_theme_file(shown, self._agent_dir, self._cwd) is None:
            error = self.set_pi_theme(self._theme_name)
            if error:
                self.chat_notice(error, "warning")

    def set_pi_theme(self, name: str) -> str | None:
        """Switch to pi theme ``name`` (or an automatic ``light/dark`` pair) now; returns an error text
        when it fell back to ``dark``."""
        self._theme_name = name
        error = self._apply_theme(name)
        self._watch_theme_file()
        if self.first_frame_at is not None:
            self._ask_background()
        return error

    def _ask_background(self) -> None:
        """An automatic theme asks the terminal for its background once (the answer may come later, or
        never: the choice made from ``COLORFGBG`` stays until then); an automatic setting also asks for
        the colour scheme and its changes, as pi does (a start with no theme set only for the
        background, which pi saves)."""
        if self._background_asked or parse_auto_theme(self._theme_name) is None:
            return
        self._background_asked = True
        if self.save_detected_theme:
            self.write_to_terminal(BACKGROUND_QUERY)
            return
        self.write_to_terminal(SCHEME_QUERY + BACKGROUND_QUERY)
        driver = self._driver
        if isinstance(driver, GuardedDriver) and not self.is_headless:
            driver.follow_scheme()

    def on_terminal_background(self, message: TerminalBackground) -> None:
        """The terminal said what its background is: an automatic theme follows it (unless the terminal
        reported its colour scheme, which pi prefers)."""
        appearance = appearance_of_rgb(message.rgb)
        if self.save_detected_theme:
            self.save_detected_theme = False
            self._detected = appearance
            self._save_detected_theme()
        if not self._scheme_reported:
            self._follow_terminal(appearance)

    def on_terminal_color_scheme(self, message: TerminalColorScheme) -> None:
        """The terminal reported its colour scheme (asked, or the system switched): an automatic theme
        follows it."""
        self._scheme_reported = True
        self._follow_terminal(message.appearance)

    def _follow_terminal(self, appearance: Appearance) -> None:
        if appearance == self.terminal_appearance:
            return
        self.terminal_appearance = appearance
        if parse_auto_theme(self._theme_name) is not None:
            self._apply_theme(self._theme_name)

    def _save_detected_theme(self) -> None:
        """Save the detected theme as the setting (now, or once the session's settings are loaded) and
        keep it from then on."""
        appearance = self._detected
        settings = self.session.settings if self.session is not None else None
        if appearance is None or settings is None:
            return
        self._detected = None
        if parse_auto_theme(self._theme_name) is None:
            return  # a theme was chosen meanwhile (/settings): it stays
        settings.set_theme(appearance)
        for problem in settings.drain_errors():  # the file could not be written: the theme still applies
            self.chat_notice(problem, "warning")
        self._theme_name = appearance
        self._apply_theme(appearance)

    def _watch_theme_file(self) -> None:
        """Only a user's theme file can change under us: built-in themes need no timer (idle CPU)."""
        if self._theme_is_custom() and self._theme_timer is None:
            self._theme_timer = self.set_interval(1.0, self._check_theme_file)

    def _theme_is_custom(self) -> bool:
        from .theme import builtin_theme_dir

        path = self._theme_path
        return path is not None and path.parent != builtin_theme_dir()

    def _check_theme_file(self) -> None:
        """Hot reload: a custom theme file that changed on disk is applied again."""
        path = self._theme_path
        if path is None or not self._theme_is_custom():
            return
        try:
            mtime = path.stat().st_mtime
        except OSError:
            self._apply_theme("dark")
            return
        if mtime != self._theme_mtime:
            error = self._apply_theme(self._theme_name)
            if error:
                self.chat_notice(error, "error")

    # --- layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield self.chat
            yield self.sidebar
        with Vertical(id="bottom"):
            yield self.pending
            yield self.working
            yield self.above
            yield self.menu
            yield self.editor
            yield self.below
            yield self.footer

    def on_mount(self) -> None:
        self._install_signal_handlers()
        self.screen_change_signal.subscribe(self, lambda _screen: self.warm_turn.notice_change())
        self.screen_change_signal.subscribe(self, lambda _screen: self.typeahead.screen_changed())
        self.editor.hold_key = self.typeahead.take
        self.editor.before_submit = self.typeahead.start_for
        if not self.is_headless:
            run_later(self, self._check_tmux_keys, group="tmux", exit_on_error=False)
        self.editor.focus()
        self._update_footer_basic()
        self._mount_preview()
        self.call_after_refresh(self._after_first_frame)
        self._watch_theme_file()

    def _mount_preview(self) -> None:
        """The first frame shows the session file's last messages, read from its tail (`preview`);
        `ChatLog.load` replaces them with the real blocks once the session is ready."""
        if self._preview_path is None:
            return
        from .preview import preview_blocks, read_tail

        messages = read_tail(self._preview_path)
        if messages:
            self.chat.mount_all(preview_blocks(messages))
            self.chat.anchor()

    def _install_signal_handlers(self) -> None:
        """SIGTERM, SIGHUP and a lost terminal quit through the normal path (session closed, terminal
        restored) within `exit_guard.DEADLINE`, even when the terminal has stopped reading. Every signal
        wakes the event loop, so its handler runs at once whichever thread the kernel gave it to
        (`signal_wakeup`), and a resume after Ctrl+Z and ``fg`` repaints the whole screen."""
        from .exit_guard import ExitGuard
        from .signal_wakeup import SignalWakeup

        driver = self._driver
        if self.is_headless or not isinstance(driver, GuardedDriver):
            return
        wakeup = SignalWakeup()
        if wakeup.install():
            self.signal_wakeup = wakeup
        self.app_resume_signal.subscribe(self, self._repaint_after_resume)
        guard = ExitGuard(self._quit_on_signal, driver.cut_output, driver.restore_terminal_now)
        if guard.install():
            self.exit_guard = guard
            driver.on_lost = lambda: guard.trigger(129)  # as SIGHUP: the terminal hung up

    def uninstall_signal_handlers(self) -> None:
        """Give the signals back to their previous handlers (the app has left)."""
        if self.exit_guard is not None:
            self.exit_guard.uninstall()
        if self.signal_wakeup is not None:
            self.signal_wakeup.uninstall()

    def _repaint_after_resume(self, _app: object) -> None:
        """After Ctrl+Z and ``fg`` Textual takes the terminal back but draws only what changes next, and
        the terminal's alternate screen comes back empty: draw all of it again."""
        self.refresh(layout=True)

    signal_wakeup: SignalWakeup | None = None
    """The `SignalWakeup` while the app runs in a terminal."""

    async def _check_tmux_keys(self) -> None:
        """Inside tmux, once the session is shown: warn if tmux loses modified Enter keys (as pi does)."""
        from .tmux import tmux_keys_warning

        warning = await tmux_keys_warning()
        await self.ready.wait()
        if warning:
            self.chat_notice(warning, "warning")

    exit_guard: ExitGuard | None = None
    """The `ExitGuard` while the app runs in a terminal."""

    def _quit_on_signal(self, code: int) -> None:
        run_later(self, partial(self.action_quit, code), group="quit")

    @property
    def cwd(self) -> Path:
        """The directory the session works in (its tools' relative paths start there)."""
        return self._cwd

    @property
    def output_cut(self) -> bool:
        """True when output to the terminal was dropped (it stopped reading or went away)."""
        driver = self._driver
        return isinstance(driver, GuardedDriver) and driver.output_dropped

    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver, guarded against a terminal that stops reading (`terminal_driver`)."""
        from textual.drivers.linux_driver import LinuxDriver

        from .terminal_driver import install_input_filter, register_alt_enter

        driver = super().get_driver_class()
        if driver is not LinuxDriver:
            return driver
        register_alt_enter()
        install_input_filter()
        return GuardedDriver

    resume_gc_after_first_frame = False
    """Set by `run_interactive`, which pauses garbage collection until the first frame."""

    save_detected_theme = False
    """Set by `run_interactive` when no theme is set (it starts with ``light/dark``): the terminal's
    first answer about its background is saved as the ``theme`` setting, as pi saves what it detected."""

    def _after_first_frame(self) -> None:
        self.first_frame_at = time.perf_counter()
        if self.resume_gc_after_first_frame:
            import gc

            gc.freeze()  # start-up objects live as long as the app: keep them out of every collection
            gc.enable()
        self._ask_background()
        self._load_session()

    def on_resize(self, event: events.Resize) -> None:
        # The new width is the event's: this handler runs before Textual's own, which updates `self.size`.
        narrow = event.size.width < NARROW_COLUMNS
        self.set_class(narrow, "-narrow")
        if narrow:
            self.sidebar.remove_class("-open")
        if self.transcript_search is not None:
            self.transcript_search.resized(event.size.width)

    def watch_working_message(self, message: str) -> None:
        self.working.message = message
        self.working.refresh()

    # --- the session -------------------------------------------------------------------------------

    @work(exclusive=True, group="startup")
    async def _load_session(self) -> None:
        # The runtime (the session factory, the session package, the agent loop: ~70 modules, ~50 ms of
        # CPU) is imported in a thread, not in the UI thread: keys typed as the first frame appears are
        # handled meanwhile. The session's creation, in a thread too, needs it next.
        await asyncio.to_thread(import_module, "pi_tui.runtime.session_cwd")
        from pi_tui.runtime.session_cwd import MissingSessionCwdError

        try:
            where = await self._where_to_run()
            if where is None:
                return  # the user declined: the app is leaving
            trust: bool | None = None
            if self._needs_trust is not None and self._needs_trust(where):
                trust = await self._ask_trust(where)
            try:
                startup = await asyncio.to_thread(self._create_and_preload, trust)
            except MissingSessionCwdError as gone:
                if not await self._continue_here_or_leave(gone):
                    return
                startup = await asyncio.to_thread(self._create_and_preload, trust)
        except Exception as exc:
            from pi_tui.runtime.factory import StartupError

            warnings: list[str] = []
            message = str(exc)
            if isinstance(exc, StartupError):  # start-up explains its failure, after what it warned of
                message, warnings = exc.message or message, exc.warnings
            for warning in warnings:
                self.chat_notice(f"Warning: {warning}", "warning")
            self.chat_notice(message, "error")
            self._startup_error = message
            return
        await self.attach_startup(startup)

    async def _where_to_run(self) -> Path | None:
        """The directory the run will work in, after pi's start-up questions about the session: fork
        another project's session here? continue here when the session's directory is gone? None when
        the user declined (the app exits, exit code 0)."""
        from pi_tui.runtime.session_cwd import MissingSessionCwdError, SessionInOtherProjectError

        if self._run_cwd is None:
            return self._cwd
        for _attempt in range(3):
            try:
                return await asyncio.to_thread(self._run_cwd)
            except SessionInOtherProjectError as other:
                if self._fork_here is None:
                    raise
                if not await self._ask_fork_here(other):
                    self.exit_message = "Aborted."  # as pi, printed once the terminal is restored
                    self.exit(0)
                    return None
                self._fork_here(other)
            except MissingSessionCwdError as gone:
                if not await self._continue_here_or_leave(gone):
                    return None
        return self._cwd

    async def _ask_fork_here(self, other: SessionInOtherProjectError) -> bool:
        from .bridge import ask
        from .dialogs import ConfirmDialog

        return await ask(self, ConfirmDialog(other.message, other.question)) is True

    def _create_and_preload(self, trust: bool | None) -> Startup:
        """In the start-up thread: create the session, then import what `attach_startup` needs (the
        chat adapter, the block widgets) so the UI thread only mounts. Textual's Markdown (~35 ms) only
        when there is history to show: a new session is ready without it, and the warm-up loads it."""
        startup = self._create_startup(trust)
        from pi_tui.modes.commands import BuiltinCommands  # noqa: F401

        from . import adapter, blocks, bridge  # noqa: F401

        if startup.session.messages:
            from . import markdown_block  # noqa: F401

        # The footer's totals walk every entry once (~50 ms at 20k entries); later calls count only
        # what was appended. Here, not on the UI thread when the footer is first drawn.
        startup.session.stats()
        # The messages' token counts (~65 ms at 20k entries), which `/context` draws its first frame
        # from: here, while the session loads, rather than beside the UI thread's first frames of it,
        # where a `/context` sent at once waited for them. It is the work ahead's step, run here: the
        # work ahead and `/context` find it done.
        if len(startup.session.messages) >= COUNT_AT_LOAD_FROM:
            from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused

            from .screens.prepare import preparation_for

            with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):  # rows that live with the session
                preparation_for(startup.session).run_now("tokens")
        return startup

    async def _continue_here_or_leave(self, gone: MissingSessionCwdError) -> bool:
        """pi's "Session cwd not found" question: yes keeps ``cwd`` for the next start-up (True); no
        leaves with exit code 0, nothing changed (False). Without ``continue_in_cwd`` ``gone`` is raised."""
        if self._continue_in_cwd is None:
            raise gone
        from .dialogs import ask_continue_in_cwd

        if not await ask_continue_in_cwd(self, gone):
            self.exit(0)  # as pi: declining leaves, nothing was changed
            return False
        self._continue_in_cwd()
        return True

    async def _ask_trust(self, where: Path) -> bool | None:
        chosen = await self._trust_dialog(where, this_run=self._trust_for_this_run is not None)
        if chosen is None and self._trust_for_this_run is not None:
            self._trust_for_this_run()
        return chosen

    async def answer_trust_for(self, where: Path) -> None:
        """Before the session moves to another directory (``/resume`` of a session recorded there): pi's
        trust question about it, when it has files that load only once trusted and neither a saved
        decision nor the command line (``--approve``, ``--trust-project``) settled it. The answer goes
        to ``session.trust_answers``, which building for that directory follows."""
        session = self.session
        if session is None or self._needs_trust is None or where in session.trust_answers:
            return
        if await asyncio.to_thread(self._needs_trust, where):
            session.trust_answers[where] = await self._trust_dialog(where, this_run=True)

    async def _trust_dialog(self, where: Path, *, this_run: bool) -> bool | None:
        """pi's trust question about ``where``: True (trusted, recorded: Trust, or Trust parent folder,
        saved in ``trust.json`` here), None (Trust for this run only), False (Do not trust, saved in
        ``trust.json`` as pi saves it; Do not trust for this run only and Escape save nothing)."""
        from pi_tui.resources.trust_store import ProjectTrustStore, TrustStoreError, trust_choices

        from . import project_trust_files
        from .bridge import ask
        from .dialogs import SelectDialog

        files = "\n".join(f"  {name}" for name in project_trust_files(where))
        _trust, *parent, distrust = trust_choices(where)
        # (label, what this run does, what to save): pi's five answers, the session-only ones with the hook
        options: list[tuple[str, bool | None, tuple[tuple[str, bool | None], ...]]] = [("Trust", True, ())]
        options += [(choice.label, True, choice.updates) for choice in parent]
        if this_run:  # pi's "this session only": nothing recorded
            options.append(("Trust (this session only)", None, ()))
        options.append((distrust.label, False, distrust.updates))
        if this_run:
            options.append(("Do not trust (this session only)", False, ()))
        answer = await ask(
            self,
            SelectDialog(
                f"Trust project folder?\n{where}",
                [label for label, _, _ in options],
                values=list(range(len(options))),
                message=(
                    f"Trusting it loads its .pi settings and resources and runs its extensions:\n{files}"
                ),
                search=False,
            ),
        )
        if not isinstance(answer, int):
            return False  # Escape: not trusted, nothing saved (as pi)
        _label, trusted, updates = options[answer]
        if updates:
            from pi_tui.ai.paths import agent_dir as default_agent_dir

            store = ProjectTrustStore(self._agent_dir if self._agent_dir is not None else default_agent_dir())
            try:
                await asyncio.to_thread(store.set_many, updates)
            except TrustStoreError as exc:
                self.chat_notice(f"Trust decision not saved: {exc}", "error")
        return trusted

    async def attach_startup(self, startup: Startup) -> None:
        """Bind a ready `Startup`: UI bridge, listeners, commands, history on screen, then warm up."""
        from pi_tui.modes.commands import BuiltinCommands

        from .adapter import ChatAdapter
        from .bridge import TuiBridge

        self.startup = startup
        session = startup.session
        self.session = session
        self._work_in(Path(session.cwd))  # a --session file runs in the directory it records
        session.attach_ui(TuiBridge(self), "tui")
        self.adapter = ChatAdapter(self)
        session.subscribe(self.adapter.on_event)
        session.builtin_commands = BuiltinCommands(session, lambda text: self.chat_notice(text, "output"))
        session.builtin_commands.reloads = (
            "keybindings, extensions, skills, prompts, themes and context files"
        )
        runner = session.extensions
        self.chat.renderers = dict(runner.registry.renderers) if runner is not None else {}
        self.apply_settings()
        quiet = session.settings is not None and session.settings.quiet_startup and not self.verbose_startup
        self.start_header = None if quiet else self._header(session)
        self.reload_chat()
        for warning in startup.warnings + self.key_warnings:
            self.chat_notice(f"Warning: {warning}", "warning")
        self.note_untrusted_project(startup.warnings)
        for notice in startup.notices:
            self.chat_notice(notice)
        self.router.note_missing_model()
        self.router.note_subscription(session.model if session.has_model else None)
        if self.router.install is not None:
            try:
                self.router.install(self)
            except Exception as exc:  # the screens are optional; the chat must still work
                log.exception("screens install failed")
                self.chat_notice(f"Screens failed to load: {exc}", "error")
        if runner is not None:
            self._bind_extension_shortcuts(runner.registry.shortcuts)
        try:
            await session.start(watch=True)
        except Exception as exc:
            self.chat_notice(f"Extensions failed to start: {exc}", "error")
        self._add_session_themes(startup)
        self._save_detected_theme()
        self.ready.set()
        self.refresh_footer()
        if self.resume_gc_after_first_frame:
            import gc

            gc.freeze()  # the loaded session lives as long as the app: no full collection walks it again
        self.files.start()
        self._prepare_screens(session)
        run_later(self, self._warm_up, group="warm-up", exit_on_error=False)
        # The command line's prompts first, in their order (the first with its @file images), then what
        # was typed while the session loaded.
        images, self._initial_images = self._initial_images, []
        for number, text in enumerate(self._initial_prompts):
            await self.submit(text, images=images if number == 0 else None)
        self._initial_prompts = []
        waiting, self._waiting = self._waiting, []
        for text, follow_up in waiting:
            await self.submit(text, follow_up=follow_up)

    def key_text(self, pi_id: str) -> str:
        """The keys bound to the action ``pi_id`` as pi's hints write them (``escape``, ``ctrl+c``): the
        user's own keys when keybindings.json rebinds it; empty when unbound."""
        if pi_id in self.keymap:
            return key_display(self.keymap[pi_id])
        return key_display(editor_action_keys(self.editor.key_actions, pi_id))

    def _expanded_hints(self) -> list[str]:
        """The start-up header's keys one per line, as pi lists them when Ctrl+O expands the header (a key
        the user unbound is left out)."""
        key = self.key_text
        hints = [
            (key("app.interrupt"), "to interrupt"),
            (key("app.clear"), "to clear"),
            (f"{key('app.clear')} twice" if key("app.clear") else "", "to exit"),
            (key("app.exit"), "to exit (empty)"),
            (key("app.suspend"), "to suspend"),
            (key("tui.editor.deleteToLineEnd"), "to delete to end"),
            (key("app.thinking.cycle"), "to cycle thinking level"),
            (
                "/".join(k for k in (key("app.model.cycleForward"), key("app.model.cycleBackward")) if k),
                "to cycle models",
            ),
            (key("app.model.select"), "to select model"),
            (key("app.tools.expand"), "to expand tools"),
            (key("app.thinking.toggle"), "to hide thinking"),
            (key("app.editor.external"), "for external editor"),
            ("/", "for commands"),
            ("!", "to run bash"),
            ("!!", "to run bash (no context)"),
            (key("app.message.followUp"), "to queue follow-up"),
            (key("app.message.dequeue"), "to edit all queued messages"),
            (key("app.clipboard.pasteImage"), "to paste image"),
            ("drop files", "to attach"),
            (key("app.sidebar.toggle"), "to show or hide the panels"),
            ("/hotkeys", "for every key"),
        ]
        return [f"{keys} {what}" for keys, what in hints if keys]

    def _header(self, session: AgentSession) -> tuple[str, str]:
        """pi's start-up header, compact (version, the main keys, what was loaded) and as Ctrl+O expands
        it (every key on its own line)."""
        from pi_tui import __version__

        more = self.key_text("app.tools.expand")
        logo = f"pi-tui v{__version__}"
        lines = [
            f"{self.key_text('app.interrupt')} interrupt · "
            f"{self.key_text('app.clear')}/{self.key_text('app.exit')} clear/exit · / commands · ! bash"
            + (f" · {more} more" if more else " · /hotkeys"),
        ]
        if more:
            lines.append(f"Press {more} to show full startup help.")
        expanded = self._expanded_hints()
        home = str(Path.home())

        def short(path: str | Path) -> str:
            text = str(path)
            return "~" + text[len(home) :] if text.startswith(home + "/") else text

        resources = session.resources
        context = [short(f.path) for f in resources.context_files] if resources is not None else []
        skills = [s.name for s in resources.skills] if resources is not None else []
        prompts = [t.name for t in resources.templates] if resources is not None else []
        runner = session.extensions
        extensions = [short(e.source.path.stem) for e in runner.extensions] if runner is not None else []
        for label, names in (
            ("Context", context),
            ("Skills", skills),
            ("Prompts", prompts),
            ("Extensions", extensions),
        ):
            if names:
                lines.append(f"[{label}] {', '.join(names)}")
                expanded.append(f"[{label}] {', '.join(names)}")
        return "\n".join([logo, *lines]), "\n".join([logo, *expanded])

    async def _warm_up(self) -> None:
        """While the user types the first prompt: load what the first answer needs (the provider module,
        the markdown widgets and parser, syntax highlighting) and build the system prompt."""
        session = self.require_session()
        from .screens.prepare import preparation_for

        # A command typed during the load (or a screen over the chat) goes first: this work would take
        # the interpreter from its first frame. A prompt being typed does not hold it (its answer needs it).
        await self.warm_turn.wait(preparation_for(session).wait_unheld, quiet=False)

        def load() -> None:
            from pi_tui.ai.registry import resolve_stream_fn

            from .markdown_block import markdown_parser

            try:
                resolve_stream_fn(session.model.api)
            except KeyError:
                pass
            markdown_parser().parse("# warm\n\n- a `b`\n\n```python\nx = 1\n```\n")
            # The sample's python fence: the lexer compiles its rules on first use (~20 ms), here
            # rather than on the UI thread.
            from pygments.lexers import get_lexer_by_name

            get_lexer_by_name("python")

        await asyncio.to_thread(load)
        session.system_prompt()
        # The first markdown widget of each kind costs a stylesheet update (~100 ms here): pay it now,
        # off screen, not when the first answer arrives. A command being typed or run (a big screen
        # opening, a screen on top) goes first: its first frame and its keys would otherwise wait for
        # this mounting (~0.2 s of the UI thread).
        await self.warm_turn.wait(preparation_for(session).wait_unheld)
        from .blocks import ToolBlock
        from .markdown_block import AssistantText

        sample = AssistantText(_WARM_MARKDOWN)
        sample.display = False
        tool = ToolBlock("warm-up", "read", {"path": "x"})
        tool.display = False
        await self.screen_stack[0].mount_all([sample, tool])  # the chat's screen, whatever is on top
        await sample.update(_WARM_MARKDOWN)
        await sample.remove()
        await tool.remove()

    screens_prepared: asyncio.Event | None = None
    """Set once the work ahead for the first ``/tree``, ``/context`` and ``/resume`` is done."""

    @work(group="prepare-screens", exclusive=True, exit_on_error=False)
    async def _prepare_screens(self, session: AgentSession) -> None:
        """As soon as the session is shown, in a worker thread, what the first open of the big screens
        would compute (`screens.prepare`), so it opens as fast as a later one; a screen opened before
        that waits only for its own part. Work nobody waits for pauses while an answer is being made
        (the thread would take the interpreter from it).

        A worker method: its coroutine is made only when the worker starts, so a session switch that
        replaces a worker not yet started (``/new`` given on the command line) leaves no coroutine that
        never ran (Python warns of each one when it is collected)."""
        from .screens.prepare import preparation_for

        done = self.screens_prepared = asyncio.Event()
        preparation = preparation_for(session)

        async def wait_idle() -> None:
            while self._busy or session.is_streaming:
                if self._busy:
                    await self._not_busy.wait()
                else:
                    await session.wait_for_idle()

        self._prefer_typed_screen()  # a command typed while the session loaded
        self._hold_for_typed_screen()
        preparation.start(wait_idle, self.warm_turn.keys_pending)
        await preparation.wait()
        if self.resume_gc_after_first_frame:
            import gc

            # What the preparation made (a row and a token count per message: ~120,000 objects on a
            # 20k-entry session) lives as long as the session; left to the collector, every full
            # collection walked it again (60-120 ms, in the middle of scrolling or typing).
            gc.freeze()
        done.set()

    def on_unmount(self) -> None:
        """The app has ended: its session's work ahead is dropped. The preparations are kept per session
        in a weak mapping, but each one holds its session (and this app) strongly, so without this the
        ended app and everything it showed stayed alive for the rest of the process."""
        from .screens.prepare import forget_preparation

        self.terminal_progress.hide()  # pi clears the tab's indicator on leaving
        if self.session is not None:
            forget_preparation(self.session)

    def session_switched(self) -> None:
        """Another session file is open (resume, /new, /fork): the work ahead for the big screens starts
        again for it (what was done was for the file left)."""
        from .screens.prepare import forget_preparation

        session = self.session
        if session is None:
            return
        self._work_in(Path(session.cwd))
        for warning in session.switch_warnings:
            self.chat_notice(f"Warning: {warning}", "warning")
        self.note_untrusted_project(session.switch_warnings)
        forget_preparation(session)
        if self._typed_hold is not None:  # it held the work ahead for the file left
            release, self._typed_hold = self._typed_hold, None
            release()
        self._prepare_screens(session)

    def file_written(self, path: str) -> None:
        """A tool wrote ``path``: the next ``@`` offers it without waiting for a walk of the project."""
        self.files.note_written(path)

    def files_changed(self) -> None:
        """A shell command ran (it names no files it made): list the project again in the background, so
        the next ``@`` offers what it made."""
        self.files.walk_again()

    def note_untrusted_project(self, said: list[str]) -> None:
        """Below the session's history as it was just drawn (start-up, a switched-to session, a move in
        the tree), say that the project's files which load only once trusted are ignored, as pi does
        each time it draws a session of an untrusted project; not when one of ``said`` (the warnings
        shown with it, such as the note about skipped extensions) said so already."""
        from . import UNTRUSTED_PROJECT, untrusted_project

        session = self.session
        if session is None or not untrusted_project(session.settings, session.cwd):
            return
        if not any("not trusted" in warning for warning in said):
            self.chat_notice(UNTRUSTED_PROJECT, "warning")

    def _work_in(self, cwd: Path) -> None:
        """Follow the session to the directory it works in (a session recorded elsewhere, as pi): the
        footer, the title and ``@`` completion name that one."""
        if cwd == self._cwd:
            return
        self._cwd = cwd
        self.files.move_to(cwd)
        self._update_footer_basic()
        self.refresh_footer()

    def _bind_extension_shortcuts(self, shortcuts: dict[str, RegisteredShortcut]) -> None:
        """Take the extensions' shortcuts that are no built-in key (`on_event` runs them)."""
        screen_only = set().union(*SCREEN_SCOPES.values())  # a picker's keys act there only, as in pi
        reserved = {k for pi_id, keys in self.keymap.items() if pi_id not in screen_only for k in keys}
        reserved |= {
            key
            for key, actions in self.editor.key_actions.items()
            if EXTENSION_PROOF_EDITOR_ACTIONS.intersection(actions)
        }
        for key in shortcuts:
            textual_key = key.replace(" ", "")
            if textual_key in reserved:
                self.chat_notice(f"Extension shortcut {key} ignored: it is a built-in key", "warning")
                continue
            self.shortcuts[textual_key] = key

    async def action_shortcut(self, key: str) -> None:
        runner = self.session.extensions if self.session is not None else None
        if runner is None:
            return
        try:
            await runner.run_shortcut(key)
        except Exception as exc:
            self.chat_notice(f"Shortcut {key} failed: {exc}", "error")

    def require_session(self) -> AgentSession:
        if self.session is None:
            raise RuntimeError("Startup is still in progress")
        return self.session

    def context_measured(self) -> None:
        """An answer measured the context again: the footer shows its size instead of "?"."""
        self._context_unknown = False

    def reload_chat(self) -> None:
        """Show the session's active branch (start-up, resume, /new, /fork, /tree) under the start-up
        header, which stays at the top as pi's does."""
        from .chat import Notice
        from .transcript import branch_items

        session = self.session
        if session is None:
            return
        first: list[Message | Notice] = []
        if self.start_header is not None:
            compact, expanded = self.start_header
            first.append(Notice(compact, expanded=expanded))
        branch = session.session_manager.get_branch()
        if session.settings is not None and session.settings.show_cache_miss_notices:
            from pi_tui.session.entries import UsageEntry

            from .cache_notices import with_cache_miss_notices

            shown: list[Message | UsageEntry] = []
            for entry in branch:  # the saved cache refreshes where they happened, as pi shows them
                if isinstance(entry, UsageEntry):
                    shown.append(entry)
                else:
                    shown.extend(branch_items([entry]))
            items = first + with_cache_miss_notices(shown, session.model.cost.cache_read)
        else:
            items = first + branch_items(branch)
        self.chat.load(items)
        if self.adapter is not None:
            self.adapter.reset()
        self.refresh_footer()

    # --- sending -----------------------------------------------------------------------------------

    def on_text_area_changed(self, _message: TextArea.Changed) -> None:
        self.warm_turn.notice_change()  # a command typed in the editor: the warm-up waits for it
        self._prefer_typed_screen()
        if self._typed_hold is None:
            self._hold_for_typed_screen()
        else:  # Enter empties the editor before its command is seen to run: look again after that
            self.call_after_refresh(self._hold_for_typed_screen)

    def _prefer_typed_screen(self) -> None:
        """When the editor holds the start of ``/context``, ``/tree`` or ``/resume``, the work ahead
        prepares that screen first (its first frame on Enter then finds it done). Enter empties the
        editor as the screen opens: the step stays first until another command's step replaces it."""
        session = self.session
        if session is None or self.screens_prepared is None or self.screens_prepared.is_set():
            return
        from .screens.prepare import preparation_for, step_for_command

        step = step_for_command(self.editor.text.lstrip())
        if step is not None:
            preparation_for(session).prefer(step)

    def _hold_for_typed_screen(self) -> None:
        """While the editor holds the start of ``/context``, ``/tree`` or ``/resume`` (and until the
        command sent from it has run), the work ahead of the other screens waits
        (`ScreenPreparation.hold`; the typed command's own step goes on): on Enter it would share the
        interpreter with that screen's first frame, until the screen's own open holds it."""
        session = self.session
        prepared = self.screens_prepared
        wanted = False
        if session is not None and prepared is not None and not prepared.is_set():
            from .screens.prepare import step_for_command

            typed = step_for_command(self.editor.text.lstrip()) is not None
            wanted = typed or (self._typed_hold is not None and self.warm_turn.command_running)
        if wanted and self._typed_hold is None and session is not None:
            from .screens.prepare import preparation_for

            self._typed_hold = preparation_for(session).hold(typed=True)
        elif not wanted and self._typed_hold is not None:
            release, self._typed_hold = self._typed_hold, None
            release()

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.chat.show_end()
        self.chat.scroll_end(animate=False)  # back to the end (and following it) to see what was sent
        if message.text.startswith("/"):
            # The warm-up waits for the command (the editor is empty now, its screen not up yet).
            done = self.warm_turn.command_started()
            run_later(
                self, partial(self._submit_command, message.text, message.follow_up, done), group="submit"
            )
        else:
            run_later(self, partial(self.submit, message.text, follow_up=message.follow_up), group="submit")

    async def _submit_command(self, text: str, follow_up: bool, done: Callable[[], None]) -> None:
        try:
            await self.submit(text, follow_up=follow_up)
        finally:
            self.typeahead.release()  # no screen came up (or it is closed again): the keys are the editor's
            done()
            self.call_after_refresh(self._hold_for_typed_screen)  # its screen is drawn by then

    async def submit(
        self, text: str, *, follow_up: bool = False, images: Sequence[ImageContent] | None = None
    ) -> None:
        """What Enter does: a command, a ``!cmd``, a prompt, or (while the agent works) a queued message.

        ``images`` go with a prompt (the command line's ``@file`` images)."""
        if self.session is None:
            if self._startup_error is not None:  # nothing will ever send it: say why, keep the text
                if text.strip() in ("/quit", "/hotkeys"):
                    await self.router.run(text.strip())
                    return
                self.chat_notice(
                    f"pi-tui could not start: {self._startup_error} (Ctrl+C twice quits)", "error"
                )
                if not self.editor.text:
                    self.editor.set_text(text)
                return
            self._waiting.append((text, follow_up))
            self.chat_notice("Startup is still in progress; your message is sent once it is done.")
            return
        session = self.session
        try:
            if text.startswith("/") and await self.router.run(text):
                return
            if text.startswith("!") and text.lstrip("!").strip():
                # as pi: a command runs at once, even while the agent answers (its output joins the
                # conversation when the turn is over); only a bare "!" is a message like any other
                await self._run_bash(text)
                return
            if self._busy or session.is_streaming:
                behaviour = "follow_up" if follow_up else "steer"
                await session.prompt(text, images or None, streaming_behavior=behaviour)
                self.pending_changed()
                return
            self.set_busy(True)
            try:
                await session.prompt(text, images or None)
            finally:
                self.set_busy(session.is_streaming)
        except Exception as exc:
            from pi_tui.runtime.agent_session import ModelUnavailableError, PromptAborted  # loaded by now

            if isinstance(exc, PromptAborted):  # Escape while a hook ran: an abort, as after a turn
                self.chat_notice(str(exc) or "Operation aborted", "warning")
                return
            if isinstance(exc, ModelUnavailableError):  # nothing was sent: say what is missing, keep the text
                self.chat_notice(str(exc), "error")
                if not self.editor.text:
                    self.editor.set_text(text)
                return
            log.exception("submit failed")
            self.chat_notice(f"{type(exc).__name__}: {exc}", "error")
        finally:
            self.refresh_footer()

    def run_command(self, text: str) -> asyncio.Task[None]:
        """Run a slash command as if typed (the contract with the screens package).

        It starts at once; the returned task may be awaited to wait for the command to finish.
        """
        task = asyncio.ensure_future(self.submit(text if text.startswith("/") else "/" + text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run_bash(self, text: str) -> None:
        from .bash import run_user_bash

        await run_user_bash(self, text)

    def show_pending_block(self, block: Widget) -> None:
        """Show ``block`` above the editor, beside the queued messages, until its owner removes it (a
        ``!cmd`` run while the agent answers)."""
        self.query_one("#bottom").mount(block, before=self.pending)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        if busy:
            self._not_busy.clear()
        else:
            self._not_busy.set()
        if busy:
            self.working.start()
        else:
            self.working.stop()
        self.pending_changed()

    def pending_changed(self) -> None:
        agent = self.session.agent if self.session is not None else None
        if agent is None:
            return
        from pi_tui.ai.types import message_text

        lines = [f"Steering: {message_text(m)}" for m in agent.steering_queue]
        lines += [f"Follow-up: {message_text(m)}" for m in agent.follow_up_queue]
        dequeue = key_display(
            editor_action_keys(self.editor.key_actions, "app.message.dequeue"), capitalize=True
        )
        if lines and dequeue:  # as pi: the key the user has for it, written as pi's key display writes it
            lines.append(f"↳ {dequeue} to edit all queued messages")
        text = "\n".join(lines)
        if text == self._pending_text:  # called on every event: touch the widget only when it changes
            return
        self._pending_text = text
        self.pending.update(text)
        self.pending.set_class(bool(lines), "-visible")

    # --- UI bridge targets -------------------------------------------------------------------------

    def chat_notice(self, text: str, level: str = "info") -> NoticeBlock:
        return self.chat.notice(text, level)

    def chat_status(self, text: str) -> NoticeBlock:
        """A status line (pi's ``showStatus``): replaces the previous status when nothing came after it."""
        return self.chat.status(text)

    def set_editor_text(self, text: str) -> None:
        """Put ``text`` in the editor (contract with the screens package and ``ctx.ui``)."""
        self.editor.set_text(text)
        self.editor.focus()

    def set_extension_status(self, key: str, text: str | None) -> None:
        if text:
            self._statuses[key] = text
        else:
            self._statuses.pop(key, None)
        self.refresh_footer()

    def set_extension_widget(self, key: str, lines: list[str] | None, placement: str) -> None:
        old = self._ext_widgets.pop(key, None)
        if old is not None:
            old.remove()
        if lines is None:
            return
        widget = Static("\n".join(lines), markup=False)
        self._ext_widgets[key] = widget
        (self.below if placement == "belowEditor" else self.above).mount(widget)

    def set_terminal_title(self, title: str) -> None:
        self.write_to_terminal(f"\x1b]0;{title}\x07")

    def write_to_terminal(self, sequence: str) -> None:
        """Send a control sequence straight to the terminal (nothing when there is none, as in tests)."""
        driver = self._driver
        if driver is not None and not self.is_headless:
            driver.write(sequence)
            driver.flush()

    def apply_settings(self) -> None:
        """Apply the settings the app itself reads (thinking, editor padding, cursor, the footer's
        `` (auto)``): at start-up and whenever `/settings` changes one."""
        from .ui_settings import apply_ui_settings

        apply_ui_settings(self, self.session.settings if self.session is not None else None)
        if self.session is not None:
            self.session.cache_warmer.on_mode_changed()  # cacheWarming: off or streaming stop it at once
        if self.ready.is_set():  # start-up draws the footer once it is ready
            self.refresh_footer()

    # --- footer ------------------------------------------------------------------------------------

    def _update_footer_basic(self) -> None:
        home = str(Path.home())
        cwd = str(self._cwd)
        state = FooterState(cwd="~" + cwd[len(home) :] if cwd == home or cwd.startswith(home + "/") else cwd)
        state.branch = git_branch(self._cwd)
        self._footer_base = state
        self.footer.show(state)

    def refresh_footer(self, *, compacted: bool = False) -> None:
        session = self.session
        if session is None:
            return
        from pi_tui.compaction.tokens import estimate_context_tokens

        base = self._footer_base
        stats = session.stats()
        model = session.model
        context_tokens: int | None = None
        if compacted:
            self._context_unknown = True  # "?" until the next answer measures the context again
        if not self._context_unknown:
            # as pi's footer: the last answer's measured size plus an estimate of what came after it
            # (an aborted answer measured nothing), or an estimate of the whole request before any answer
            context_tokens = estimate_context_tokens(session.messages, session.system_prompt)
        state = FooterState(
            cwd=base.cwd,
            branch=base.branch,
            session_name=session.session_manager.name,
            input=stats.input,
            output=stats.output,
            cache_read=stats.cache_read,
            cache_write=stats.cache_write,
            cache_hit=stats.latest_cache_hit,
            cost=stats.cost,
            context_tokens=context_tokens,
            context_window=model.context_window if session.has_model else 0,  # no model: no share shown
            model=model.id if session.has_model else "no model",
            provider=model.provider if session.has_model and self._several_providers(session) else None,
            thinking=session.thinking if model.reasoning else None,
            auto_compaction=session.settings.compaction.enabled if session.settings is not None else True,
            statuses=dict(self._statuses),
            sandbox=session.sandbox.status() if session.sandbox is not None else None,
        )
        self.footer.show(state)
        self.sidebar.refresh_from(session)
        levels = ("minimal", "low", "medium", "high", "xhigh", "max")
        for level in levels:
            self.editor.set_class(model.reasoning and session.thinking == level, f"-thinking-{level}")
        name = session.session_manager.name
        title = f"π - {name} - {self._cwd.name}" if name else f"π - {self._cwd.name}"
        if title != self._own_title:
            self._own_title = self.title = title
            # Textual shows an app's title only in a Header widget: the terminal is told itself, as pi
            # tells it, when the project or session name changes (an extension's title stays till then)
            self.set_terminal_title(title)

    @staticmethod
    def _several_providers(session: AgentSession) -> bool:
        """Whether models of more than one provider are available (the footer then names the provider,
        as pi's does). pi-tui's scripted ``faux`` provider, always there, does not count."""
        from pi_tui.ai.catalog import FAUX_PROVIDER

        registry = session.registry
        if registry is None:
            return False
        providers = {m.provider for m in registry.available_models()} - {FAUX_PROVIDER}
        return len(providers | {session.model.provider}) > 1

    # --- actions -----------------------------------------------------------------------------------

    def on_prompt_editor_clear_pressed(self, _message: PromptEditor.ClearPressed) -> None:
        if self.user_bash.cancel():
            # Ctrl+C stops a running `!cmd` (its running line names it, as pi's does) and is no first
            # press toward quitting
            self._last_ctrl_c = 0.0
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS_SECONDS:
            run_later(self, self.action_quit)
            return
        self._last_ctrl_c = now

    async def copy_text(self, text: str) -> str | None:
        """Put ``text`` on the system clipboard as pi does (a native writer such as ``wl-copy``/``xclip``/
        ``pbcopy`` when the session has one, the terminal's OSC 52 over SSH or where there is no display);
        None when it worked, else the message saying why not. The text is kept for pasting inside the app
        either way."""
        from .clipboard_write import ClipboardUnavailable, copy_text

        self._clipboard = text  # Textual's own paste reads it
        try:
            await copy_text(text, super().copy_to_clipboard)
        except ClipboardUnavailable as exc:
            return str(exc)
        return None

    async def on_prompt_editor_copy_selection_pressed(
        self, message: PromptEditor.CopySelectionPressed
    ) -> None:
        self.screen.clear_selection()
        await self.copy_selection(message.text)

    async def copy_selection(self, text: str) -> None:
        """Copy text selected with the mouse and say so (or why it could not be copied)."""
        problem = await self.copy_text(text)
        if problem is not None:
            self.notify(problem, severity="error", timeout=4)
            return
        lines = text.count("\n") + 1
        self.notify(f"Copied {lines} line{'s' if lines != 1 else ''} to the clipboard", timeout=2)

    async def on_text_selected(self, _event: events.TextSelected) -> None:
        """The mouse button was let go: with ``fullscreenCopyOnSelect`` (pi's default) what it selected is
        copied at once, and stays selected; a plain click selects nothing and copies nothing."""
        settings = self.session.settings if self.session is not None else None
        if settings is None or not settings.fullscreen_copy_on_select:
            return
        selected = self.screen.get_selected_text()
        if selected:
            await self.copy_selection(selected)

    def on_prompt_editor_exit_pressed(self, _message: PromptEditor.ExitPressed) -> None:
        run_later(self, self.action_quit)

    def on_prompt_editor_dequeue_pressed(self, _message: PromptEditor.DequeuePressed) -> None:
        if self.session is None:
            return
        restored = self._restore_queue()
        # as pi: say what the key did, nothing queued included
        if restored:
            self.chat_status(f"Restored {restored} queued message{'s' if restored > 1 else ''} to editor")
        else:
            self.chat_status("No queued messages to restore")

    def _restore_queue(self) -> int:
        """Queued messages back into the editor, before its draft; how many there were."""
        agent = self.session.agent if self.session is not None else None
        if agent is None:
            return 0
        from pi_tui.ai.types import message_text

        steering, follow_ups = agent.clear_queues()
        texts = [message_text(m) for m in [*steering, *follow_ups]]
        if texts:
            current = self.editor.text
            self.editor.set_text("\n\n".join([*texts, current] if current.strip() else texts))
        self.pending_changed()
        return len(texts)

    def cancel_on_escape(self, cancel: Callable[[], None]) -> Callable[[], None]:
        """Let Escape call ``cancel`` (a command's work under way: /share's upload) before anything else
        it does; returns what to call once the work is over (Escape then no longer cancels it)."""
        self._escape_cancels.append(cancel)

        def forget() -> None:
            if cancel in self._escape_cancels:
                self._escape_cancels.remove(cancel)

        return forget

    def action_interrupt(self) -> None:
        """Escape: stop a command's work (`cancel_on_escape`), abort (queued text returns to the editor),
        kill a ``!cmd``, leave bash mode, or twice on an empty editor open the tree (or the fork list, or
        nothing: ``doubleEscapeAction``)."""
        if self.menu.is_shown:
            self.menu.hide()
            return
        if self._escape_cancels:
            self._escape_cancels.pop()()
            return
        session = self.session
        if session is not None and (self._busy or session.is_streaming):
            self._restore_queue()
            session.abort()
            return
        if self.user_bash.cancel():
            return
        if self.editor.text.startswith("!"):
            self.editor.set_text("")
            return
        # Twice on an empty editor: /tree, /fork or nothing (``doubleEscapeAction``), as in pi.
        settings = session.settings if session is not None else None
        action = settings.double_escape_action if settings is not None else "tree"
        if self.editor.text.strip() or action == "none":
            return
        now = time.monotonic()
        if now - self._last_escape < DOUBLE_PRESS_SECONDS:
            self._last_escape = 0.0
            self.run_command(f"/{action}")
            return
        self._last_escape = now

    async def action_quit(self, return_code: int = 0) -> None:
        """Close the session and leave; ``return_code`` is the process's exit code (128 + signal)."""
        session = self.session
        if session is not None:
            session_id = session.session_manager.id
            persisted = (
                session.session_manager.path is not None and Path(session.session_manager.path).exists()
            )
            try:
                await session.close()
            except Exception:
                log.exception("closing the session failed")
            if persisted:
                self.exit_message = f"To resume this session: pi-tui --session {session_id}"
        self.exit(return_code)

    exit_message: str | None = None

    def exit_transcript(self, *, color: bool, width: int | None = None) -> str:
        """The conversation to leave in the terminal after quitting (pi's ``fullscreenExitOutput``:
        ``transcript`` by default, nothing with ``resume-hint``); empty when there is none. ``width``:
        the terminal's columns, which the lines are wrapped to (None: not wrapped)."""
        session = self.session
        if session is None or self.exit_message is None:
            return ""
        settings = session.settings
        if settings is not None and settings.fullscreen_exit_output != "transcript":
            return ""
        from .exit_transcript import transcript

        return transcript(
            session.messages,
            color=color,
            hide_thinking=self.hide_thinking,
            thinking_label=self.hidden_thinking_label,
            width=width,
        )

    leave_if_resume_cancelled = False
    """Started by ``-r``: closing that first resume picker without a choice leaves the app, as pi does."""

    def take_resume_cancel(self) -> Callable[[], None] | None:
        """For the picker ``-r`` opens (once): what closing it without a choice does, i.e. leave the app
        saying so (pi prints "No session selected" and exits 0); None for any later ``/resume``."""
        if not self.leave_if_resume_cancelled:
            return None
        self.leave_if_resume_cancelled = False

        def leave() -> None:
            self.exit_message = "No session selected"
            self.call_later(self.action_quit)

        return leave
