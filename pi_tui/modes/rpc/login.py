"""RPC logins (pi-tui's own commands; pi 0.87.1's RPC has none): ``get_login_providers``, ``login``,
``abort_login`` and ``logout``.

A ``login`` runs the provider's flow (`pi_tui.ai.oauth`) on a worker thread. What it shows goes out as
``{"type": "login_event", "provider", "event": "auth_url" | "device_code" | "progress" | "info", ...}``
records (plus a ``notify`` extension-UI request, so a client that knows only pi's protocol still shows
the URL); what it asks uses pi's extension-UI dialogs (``input`` for a pasted code or a key, ``select``
for a choice), answered with ``extension_ui_response``. The ``login`` response comes when the login
ends: ``{"provider", "name", "savedTo"}``, or the error (``Login cancelled`` after
``abort_login``). No token is ever sent to the client.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from pi_tui.ai.oauth import (
    AuthEvent,
    AuthPrompt,
    LoginCancelled,
    OAuthError,
    get_oauth_provider,
    login,
    logout,
    oauth_provider_ids,
    oauth_provider_name,
)
from pi_tui.modes.login_options import api_key_providers, login_options, provider_display_name

from .fields import Command, Reply, RpcError, req_str

if TYPE_CHECKING:
    from pi_tui.ai.auth import AuthStorage
    from pi_tui.ai.model_registry import ModelRegistry

    from .server import RpcServer

__all__ = ["LoginCommands"]

T = TypeVar("T")


class _RpcInteraction:
    """`pi_tui.ai.oauth.Interaction` over RPC; called on the flow's thread."""

    def __init__(self, server: RpcServer, loop: asyncio.AbstractEventLoop, provider: str) -> None:
        self.server = server
        self.loop = loop
        self.provider = provider
        self.cancel = threading.Event()

    def _on_loop(self, fn: Callable[[], None]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def _await(self, make: Callable[[], Coroutine[Any, Any, T]], withdrawn: threading.Event) -> T | None:
        future = asyncio.run_coroutine_threadsafe(make(), self.loop)
        while True:
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                if withdrawn.is_set() or self.cancel.is_set():
                    future.cancel()
                    if self.cancel.is_set():
                        raise LoginCancelled() from None
                    return None

    def notify(self, event: AuthEvent) -> None:
        record: dict[str, Any] = {"type": "login_event", "provider": self.provider, "event": event.kind}
        if event.message:
            record["message"] = event.message
        if event.url:
            record["url"] = event.url
        if event.user_code:
            record["userCode"] = event.user_code
        if event.expires_in is not None:
            record["expiresIn"] = event.expires_in
        if event.kind == "auth_url":
            text = f"Open this URL in your browser: {event.url}" + (
                f"\n{event.message}" if event.message else ""
            )
        elif event.kind == "device_code":
            text = f"Open {event.url} and enter the code {event.user_code}"
        else:
            text = event.message

        def send() -> None:
            self.server.send(record)
            if text:
                self.server.ui.notify(text, "info")

        self._on_loop(send)

    def prompt(self, prompt: AuthPrompt) -> str:
        ui = self.server.ui
        if prompt.kind == "select":
            labels = [option.label for option in prompt.options]
            chosen = self._await(lambda: ui.select(prompt.message, labels), prompt.withdrawn)
            for option in prompt.options:
                if option.label == chosen:
                    return option.id
            raise LoginCancelled()
        answer = self._await(lambda: ui.input(prompt.message, prompt.placeholder or None), prompt.withdrawn)
        if prompt.withdrawn.is_set():
            return ""
        if answer is None:
            raise LoginCancelled()
        return answer


def _save_api_key(provider: str, io: _RpcInteraction, storage: AuthStorage) -> None:
    """Ask for ``provider``'s key (and what else pi asks with it) and save it in auth.json."""
    from pi_tui.ai.auth import AuthFileError
    from pi_tui.ai.catalog import provider_info
    from pi_tui.ai.key_login import api_key_login

    info = provider_info(provider)
    key_name = (
        info.api_key_name if info is not None else None
    ) or f"{provider_display_name(provider)} API key"
    try:
        storage.check_readable()  # a malformed auth.json fails now, before a key is typed to be thrown away
    except AuthFileError as exc:
        raise OAuthError(f"Cannot save a key: {exc}. Fix or move the file, then try again") from None
    credential = api_key_login(provider, key_name)(io)
    try:
        storage.set(provider, credential)
    except AuthFileError as exc:
        raise OAuthError(f"The key could not be saved: {exc}") from None


class LoginCommands:
    """The login commands, mixed into `pi_tui.modes.rpc.handlers.CommandHandlers`."""

    server: RpcServer
    _login: _RpcInteraction | None = None

    @property
    def _registry(self) -> ModelRegistry:
        return self.server.session.registry

    def cmd_get_login_providers(self, cmd_id: object, command: Command) -> Reply:
        registry = self._registry
        if registry is None:
            return {"providers": []}
        storage = registry.auth
        providers = []
        for option in login_options(registry):
            stored = storage.get(option.id)
            entry: dict[str, object] = {
                "id": option.id,
                "name": option.name,
                "authType": option.auth_type,
                "status": None
                if option.status is None
                else {"type": option.status.type, "source": option.status.source},
                # a credential of this kind saved in auth.json (what logout would remove)
                "loggedIn": stored is not None
                and (stored.get("type") == "oauth") == (option.auth_type == "oauth"),
            }
            if option.auth_type == "oauth":
                oauth = get_oauth_provider(option.id)
                assert oauth is not None
                entry["loginLabel"] = oauth.login_label
                entry["subscription"] = oauth.is_subscription
            providers.append(entry)
        return {"providers": providers}

    async def cmd_login(self, cmd_id: object, command: Command) -> Reply:
        provider = req_str(command, "provider")
        registry = self._registry
        if registry is None:
            raise RpcError("This session has no model registry to log in with")
        auth_type = command.get("authType")
        if auth_type not in (None, "oauth", "api_key"):
            raise RpcError('"authType" must be "oauth" or "api_key"')
        keyed = dict(api_key_providers(registry))
        if auth_type is None:  # an account login where the provider has one, else its key
            auth_type = (
                "oauth" if get_oauth_provider(provider) is not None or provider not in keyed else "api_key"
            )
        if auth_type == "oauth" and get_oauth_provider(provider) is None:
            raise RpcError(
                f'No login for "{provider}". Providers with a login: {", ".join(oauth_provider_ids())}'
            )
        if auth_type == "api_key" and provider not in keyed:
            raise RpcError(
                f'No API key login for "{provider}". Providers that take a key: {", ".join(keyed)}'
            )
        if self._login is not None:
            raise RpcError(f"A login to {self._login.provider} is already running; send abort_login first")
        interaction = _RpcInteraction(self.server, asyncio.get_running_loop(), provider)
        self._login = interaction
        name = oauth_provider_name(provider) if auth_type == "oauth" else provider_display_name(provider)
        try:
            if auth_type == "oauth":
                await asyncio.to_thread(login, provider, interaction, registry.auth)
            else:
                await asyncio.to_thread(_save_api_key, provider, interaction, registry.auth)
        except LoginCancelled:
            raise RpcError("Login cancelled") from None
        except OAuthError as exc:
            raise RpcError(f"Failed to login to {name}: {exc}") from None
        finally:
            self._login = None
        registry.refresh()
        return {"provider": provider, "name": name, "savedTo": str(registry.auth.path)}

    def cmd_abort_login(self, cmd_id: object, command: Command) -> Reply:
        running = self._login
        if running is not None:
            running.cancel.set()
        return {"aborted": running is not None}

    def cmd_logout(self, cmd_id: object, command: Command) -> Reply:
        provider = req_str(command, "provider")
        registry = self._registry
        if registry is None:
            raise RpcError("This session has no model registry")
        try:
            removed = logout(provider, registry.auth)
        except OAuthError as exc:
            raise RpcError(str(exc)) from None
        registry.refresh()
        return {"removed": removed}
