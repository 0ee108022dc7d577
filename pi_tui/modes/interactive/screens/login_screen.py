"""``/login`` and ``/logout`` in the TUI: pick a provider, follow its login in a dialog, see the result.

The login flows are `pi_tui.ai.oauth`'s and run on a worker thread; `LoginScreen` is their face
(`TuiInteraction` carries events and questions between the thread and the app). The dialog shows the
URL to open (and opens it where there is a desktop), the device code to enter, progress, and asks
for a pasted code or an API key when needed. Esc cancels ("Login cancelled" is not an error).
"""

from __future__ import annotations

import concurrent.futures
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVarTuple

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_tui.ai.oauth import (
    AuthEvent,
    AuthPrompt,
    Interaction,
    LoginCancelled,
    OAuthError,
    oauth_provider_ids,
)
from pi_tui.ai.oauth.browser import open_in_browser
from pi_tui.ai.oauth.types import Credential
from pi_tui.modes.login_options import api_key_providers, auth_status, provider_display_name, sorted_by_name

if TYPE_CHECKING:
    from pi_tui.ai.model_registry import ModelRegistry

    from ..app import PiApp

__all__ = ["LoginScreen", "TuiInteraction", "open_login", "open_logout"]

LoginFlow = Callable[[Interaction], Credential]
Ts = TypeVarTuple("Ts")


class TuiInteraction:
    """`pi_tui.ai.oauth.Interaction` for the TUI: called on the flow's thread, shown by `LoginScreen`."""

    def __init__(self, screen: LoginScreen) -> None:
        self.screen = screen
        self.cancel = threading.Event()

    def _call(self, fn: Callable[[*Ts], object], *args: *Ts) -> None:
        try:
            self.screen.app.call_from_thread(fn, *args)
        except RuntimeError:  # the app is gone: nobody is watching any more
            self.cancel.set()

    def notify(self, event: AuthEvent) -> None:
        self._call(self.screen.show_event, event)

    def prompt(self, prompt: AuthPrompt) -> str:
        answer: concurrent.futures.Future[str | None] = concurrent.futures.Future()
        self._call(self.screen.ask, prompt, answer)
        while True:
            try:
                value = answer.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                if prompt.withdrawn.is_set():
                    self._call(self.screen.withdraw)
                    return ""
                if self.cancel.is_set():
                    raise LoginCancelled() from None
                continue
            if value is None:
                raise LoginCancelled()
            return value


class LoginScreen(ModalScreen[Credential | None]):
    """The dialog of one login. Dismisses with the credential, or None when cancelled.

    Args:
        title: ``Login to <provider name>``.
        flow: The login to run (on a worker thread) with this screen's `TuiInteraction`.
    """

    DEFAULT_CSS = """
    LoginScreen { align: center middle; }
    LoginScreen > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    LoginScreen .title { text-style: bold; color: $accent; }
    LoginScreen #login-log { height: auto; }
    LoginScreen #login-question { height: auto; display: none; }
    LoginScreen Input { display: none; }
    LoginScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,ctrl+c", "cancel", "Cancel", priority=True)]  # as pi: either cancels

    def __init__(self, title: str, flow: LoginFlow) -> None:
        super().__init__()
        self._title = title
        self._flow = flow
        self.interaction = TuiInteraction(self)
        self.lines: list[Text] = []
        self.error: str | None = None
        self._answer: concurrent.futures.Future[str | None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._title), classes="title")
            yield Static(id="login-log")
            yield Static(id="login-question")
            yield Input(id="login-input")
            yield Static("Esc cancel", classes="hint")

    def on_mount(self) -> None:
        self._run()

    @work(exclusive=True)
    async def _run(self) -> None:
        import asyncio

        try:
            credential = await asyncio.to_thread(self._flow, self.interaction)
        except LoginCancelled:
            credential = None
        except OAuthError as exc:
            self.error = str(exc)
            credential = None
        if self.is_attached and self.app.screen is self:
            self.dismiss(credential)

    # --- called from the flow's thread (through call_from_thread) ----------------------------------
    # Any of these may come while the dismissal takes the dialog down: Textual removes a screen's children
    # first and the screen counts as attached until it goes itself, so each looks its widgets up
    # optionally and does without the ones already gone.

    def _add(self, text: Text) -> None:
        self.lines.append(text)
        log = self.query_one_optional("#login-log", Static)
        if log is not None:
            log.update(Text("\n").join(self.lines))

    def show_event(self, event: AuthEvent) -> None:
        if event.kind == "auth_url":
            opened = open_in_browser(event.url)
            link = Text(event.url, style=f"link {event.url}")
            self._add(Text("Open this URL in your browser" + (" (opened):" if opened else ":")))
            self._add(link)
            if event.message:
                self._add(Text(event.message, style="dim"))
        elif event.kind == "device_code":
            self._add(Text("Open this URL in your browser:"))
            self._add(Text(event.url, style=f"link {event.url}"))
            self._add(Text.assemble("Enter code: ", (event.user_code, "bold")))
            self._add(Text("Waiting for authentication...", style="dim"))
        elif event.kind == "progress":
            self._add(Text(event.message, style="dim"))
        elif event.message:
            self._add(Text(event.message))

    def ask(self, prompt: AuthPrompt, answer: concurrent.futures.Future[str | None]) -> None:
        question = self.query_one_optional("#login-question", Static)
        field = self.query_one_optional(Input)
        if not self.is_attached or question is None or field is None:
            answer.set_result(None)  # the dialog is gone or going: nobody can answer
            return
        if prompt.kind == "select":
            self._ask_select(prompt, answer)
            return
        self._answer = answer
        question.update(Text(prompt.message))
        question.display = True
        field.password = prompt.kind == "secret"
        field.placeholder = prompt.placeholder
        field.value = ""
        field.display = True
        field.focus()

    def _ask_select(self, prompt: AuthPrompt, answer: concurrent.futures.Future[str | None]) -> None:
        from ..dialogs import SelectDialog

        def chosen(value: str | None) -> None:
            if not answer.done():
                answer.set_result(value)

        labels = [option.label for option in prompt.options]
        self.app.push_screen(
            SelectDialog(prompt.message, labels, values=[o.id for o in prompt.options]), chosen
        )

    def withdraw(self) -> None:
        """The flow no longer needs the answer (the browser's callback came first): hide the question."""
        self._answer = None
        for part in (self.query_one_optional("#login-question", Static), self.query_one_optional(Input)):
            if part is not None:
                part.display = False

    # --- user input -----------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.set_result(event.value)
        self.withdraw()
        self._add(Text("Checking...", style="dim"))

    def action_cancel(self) -> None:
        self.interaction.cancel.set()
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(None)
        self.dismiss(None)


# --- the commands ----------------------------------------------------------------------------------


def _account_label(provider: str) -> str:
    """The provider's own words for its account login (``Sign in with Kimi Code``), else pi's default."""
    from pi_tui.ai.catalog import provider_info

    info = provider_info(provider)
    label = info.login.label if info is not None and info.login is not None else None
    return label or "Sign in with an account"


def _method_names(provider: str, method: str | None) -> str:
    """What the provider calls its login (``Anthropic (Claude Pro/Max)``) and its key (``Anthropic API
    key``), for the list's filter; ``method`` keeps one of them (None: both)."""
    from pi_tui.ai.catalog import provider_info

    info = provider_info(provider)
    if info is None:
        return ""
    names = []
    if method != "api_key" and info.login is not None:
        names.append(info.login.name)
    if method != "oauth" and info.api_key_name is not None:
        names.append(info.api_key_name)
    return " ".join(names)


def _status(app: PiApp, provider: str, method: str | None) -> str:
    """pi's status after a provider's name: configured (and from where), configured for the other
    method, or unconfigured. ``method`` is the list's (``oauth`` or ``api_key``; None: any)."""
    registry = app.require_session().registry
    if registry is None:
        return ""
    status = auth_status(registry, provider)
    if status is None:
        return "• unconfigured"
    if method is not None and status.type != method:
        return "• subscription configured" if status.type == "oauth" else "• API key configured"
    if not status.source or status.source == "stored credential":
        return "✓ configured"
    # variable names read as ``env: …``; other origins (``models_json_key``) are shown as they are
    source = status.source
    return (
        f"✓ env: {source}" if re.fullmatch(r"[A-Z][A-Z0-9_]*(, [A-Z][A-Z0-9_]*)*", source) else f"✓ {source}"
    )


async def _choose(app: PiApp, title: str, items: list[tuple[str, str]], method: str | None) -> str | None:
    from ..bridge import ask
    from ..dialogs import SelectDialog

    # The name and status only, as pi, so a row fits one line; the filter also matches the id and, as
    # pi's, the method's own name (``Claude Pro/Max``, ``ChatGPT Plus/Pro``, ``OpenRouter API key``).
    labels = [f"{name} {_status(app, provider_id, method)}" for provider_id, name in items]
    ids = [provider_id for provider_id, _ in items]
    keys = [
        f"{label} {provider_id} {_method_names(provider_id, method)}"
        for label, provider_id in zip(labels, ids, strict=True)
    ]
    return await ask(app, SelectDialog(title, labels, values=ids, search_keys=keys))


def _match(ref: str, items: list[tuple[str, str]]) -> str | None:
    wanted = ref.strip().lower()
    for provider_id, name in items:
        if wanted in (provider_id.lower(), name.lower()):
            return provider_id
    return None


async def open_login(app: PiApp, args: str) -> None:
    """``/login [provider]``: choose a method and a provider, run the login in a dialog, report."""
    from ..bridge import ask
    from ..dialogs import SelectDialog

    session = app.require_session()
    registry = session.registry
    if registry is None:
        app.chat_notice("Logins need the model registry, which this session does not have", "error")
        return
    accounts = sorted_by_name([(p, provider_display_name(p)) for p in oauth_provider_ids()])
    keyed = api_key_providers(registry)
    method: str | None = None
    provider: str | None = None
    if args:
        in_accounts, in_keyed = _match(args, accounts), _match(args, keyed)
        if in_accounts and in_keyed:
            provider = in_accounts
            name = provider_display_name(provider)
            method = await ask(
                app,
                SelectDialog(
                    f"Select authentication method for {name}:",
                    [_account_label(provider), "Sign in with an API key"],
                    values=["oauth", "api_key"],
                ),
            )
            if method is None:
                return
        elif in_accounts or in_keyed:
            provider = in_accounts or in_keyed
            method = "oauth" if in_accounts else "api_key"
    while provider is None:
        # Escape in the provider list goes back to the method menu (as pi), and Escape there closes.
        if method is None:
            method = await ask(
                app,
                SelectDialog(
                    "Select authentication method:",
                    ["Sign in with an account", "Sign in with an API key"],
                    values=["oauth", "api_key"],
                ),
            )
            if method is None:
                return
        provider = await _choose(
            app, "Select provider to configure:", accounts if method == "oauth" else keyed, method
        )
        if provider is None:
            method = None
    assert method is not None
    await _run_login(app, registry, provider, method)


async def _run_login(app: PiApp, registry: ModelRegistry, provider: str, method: str) -> None:
    from pi_tui.ai.catalog import provider_info
    from pi_tui.ai.oauth import get_oauth_provider

    from ..bridge import ask

    storage = registry.auth
    info = provider_info(provider)
    if method == "oauth":
        oauth = get_oauth_provider(provider)
        assert oauth is not None
        name = provider_display_name(provider)
        flow: LoginFlow = oauth.login
    else:
        name = info.name if info is not None else provider
        key_name = (info.api_key_name if info is not None else None) or f"{name} API key"
        from pi_tui.ai.key_login import api_key_login

        flow = api_key_login(provider, key_name)

    from pi_tui.ai.auth import AuthFileError

    try:  # a malformed auth.json fails now, before the user signs in or types a key to be thrown away
        storage.check_readable()
    except AuthFileError as exc:
        app.chat_notice(
            f"Cannot log in to {name}: {exc}. Fix that file (or move it away), then /login again; "
            "nothing was changed.",
            "error",
        )
        return
    screen = LoginScreen(f"Login to {name}", flow)
    credential = await ask(app, screen)
    if credential is None:
        if screen.error is not None:
            app.chat_notice(f"Failed to login to {name}: {screen.error}", "error")
        return
    try:
        storage.set(provider, credential)
    except AuthFileError as exc:
        app.chat_notice(f"Failed to save the credentials for {name}: {exc}", "error")
        return
    registry.refresh()
    action = f"Logged in to {name}" if method == "oauth" else f"Saved API key for {name}"
    current = app.require_session().model
    selected = ""
    if current is None or (current.provider != provider and not registry.has_auth(current.provider)):
        default = registry.default_model_for(provider)
        if default is not None:
            app.switch_model(default, None, announce=False)  # the line below names it
            # saved as the default too, as pi does: the next start opens on it
            settings = app.require_session().settings
            if settings is not None:
                settings.set_default_model(default.provider, default.id)
            selected = f" Selected {default.id}."
    app.chat_notice(f"{action}.{selected} Credentials saved to {storage.path}")
    if method == "oauth" and provider == "anthropic":
        app.router.warn_extra_usage()
    app.refresh_footer()


async def open_logout(app: PiApp, args: str) -> None:
    """``/logout [provider]``: remove a stored login or API key (nothing is revoked at the provider)."""

    session = app.require_session()
    registry = session.registry
    if registry is None:
        return
    storage = registry.auth
    storage.reload()
    stored = storage.providers()
    if not stored:
        app.chat_notice(
            "No stored credentials to remove. /logout only removes credentials saved by /login; "
            "environment variables and models.json config are unchanged."
        )
        return

    def name_of(provider: str) -> str:
        # by the provider's name, a login as well as a key (pi 0.87.1)
        return provider_display_name(provider)

    items = sorted_by_name([(p, name_of(p)) for p in stored])
    provider = _match(args, items) if args else None
    if provider is None:
        provider = await _choose(app, "Select provider to logout:", items, None)
        if provider is None:
            return
    from pi_tui.ai.oauth import logout

    entry = storage.get(provider) or {}
    name = name_of(provider)  # before the entry is gone
    try:
        logout(provider, storage)
    except OAuthError as exc:
        app.chat_notice(f"Failed to logout of {name}: {exc}", "error")
        return
    registry.refresh()
    if entry.get("type") == "oauth":
        app.chat_notice(f"Logged out of {name}")
    else:
        app.chat_notice(
            f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    app.refresh_footer()
