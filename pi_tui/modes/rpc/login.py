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

from .fields import RpcError, req_str

if TYPE_CHECKING:
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


class LoginCommands:
    """The login commands, mixed into `pi_tui.modes.rpc.handlers.CommandHandlers`."""

    server: RpcServer
    _login: _RpcInteraction | None = None

    @property
    def _registry(self) -> Any:
        return self.server.session.registry

    def cmd_get_login_providers(self, cmd_id: object, command: dict[str, Any]) -> Any:
        storage = self._registry.auth if self._registry is not None else None
        providers = []
        for provider_id in oauth_provider_ids():
            oauth = get_oauth_provider(provider_id)
            assert oauth is not None
            providers.append(
                {
                    "id": provider_id,
                    "name": oauth.name,
                    "loginLabel": oauth.login_label,
                    "subscription": oauth.is_subscription,
                    "loggedIn": storage is not None and storage.oauth(provider_id) is not None,
                }
            )
        return {"providers": providers}

    async def cmd_login(self, cmd_id: object, command: dict[str, Any]) -> Any:
        provider = req_str(command, "provider")
        registry = self._registry
        if registry is None:
            raise RpcError("This session has no model registry to log in with")
        if get_oauth_provider(provider) is None:
            raise RpcError(
                f'No login for "{provider}". Providers with a login: {", ".join(oauth_provider_ids())}'
            )
        if self._login is not None:
            raise RpcError(f"A login to {self._login.provider} is already running; send abort_login first")
        interaction = _RpcInteraction(self.server, asyncio.get_running_loop(), provider)
        self._login = interaction
        try:
            await asyncio.to_thread(login, provider, interaction, registry.auth)
        except LoginCancelled:
            raise RpcError("Login cancelled") from None
        except OAuthError as exc:
            raise RpcError(f"Failed to login to {oauth_provider_name(provider)}: {exc}") from None
        finally:
            self._login = None
        registry.refresh()
        return {
            "provider": provider,
            "name": oauth_provider_name(provider),
            "savedTo": str(registry.auth.path),
        }

    def cmd_abort_login(self, cmd_id: object, command: dict[str, Any]) -> Any:
        running = self._login
        if running is not None:
            running.cancel.set()
        return {"aborted": running is not None}

    def cmd_logout(self, cmd_id: object, command: dict[str, Any]) -> Any:
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
