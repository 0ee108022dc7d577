"""A browser login for extensions: the OAuth authorization-code redirect to a loopback server.

`BrowserLogin` is pi's own login machinery (`pi_tui.ai.oauth.callback`: the one-shot callback server,
the race with a pasted redirect URL) made available to an extension that runs an OAuth flow of its own
(the bundled ``mcp`` extension logs in to remote MCP servers with it). It shows the authorization URL
through ``ctx.ui`` (and opens the browser in the TUI where there is a desktop, as ``/login`` does), asks
in the TUI and RPC for the redirect URL pasted from a browser on another machine, and gives up after a
time limit. Nothing heavy is imported until a login starts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import sys
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from .ui import UIBridge

if TYPE_CHECKING:
    from pi_tui.ai.oauth.callback import CallbackServer
    from pi_tui.ai.oauth.types import AuthEvent, AuthPrompt

__all__ = ["BrowserAuthorization", "BrowserLogin", "BrowserLoginError"]

DEFAULT_TIMEOUT_S = 300.0


class BrowserLoginError(Exception):
    """The browser step failed: cancelled, timed out, refused by the user, or the port is taken."""


@dataclass(frozen=True)
class BrowserAuthorization:
    """What the authorization server sent back to the redirect URI."""

    code: str
    state: str | None
    iss: str | None  # RFC 9207 issuer, when the server sends it


class _UiInteraction:
    """`pi_tui.ai.oauth.Interaction` over ``ctx.ui``, called on the login's worker thread."""

    def __init__(self, ui: UIBridge, mode: str, loop: asyncio.AbstractEventLoop, title: str) -> None:
        self.ui = ui
        self.ask = mode in ("tui", "rpc")  # someone can paste a redirect URL
        self.open = mode == "tui"  # the browser runs on this machine (an RPC client shows the URL itself)
        self.loop = loop
        self.title = title
        self.cancel = threading.Event()
        self.context = contextvars.copy_context()  # made on the event loop, where the login started
        self.shown = ""  # the URL line, repeated in the question (a dialog may cover the chat)

    def notify(self, event: AuthEvent) -> None:
        if event.kind == "auth_url":
            from pi_tui.ai.oauth.browser import open_in_browser

            opened = self.open and open_in_browser(event.url)
            text = (f"{self.title}: open this URL in your browser{' (opened)' if opened else ''} to log in:\n"
                    f"{event.url}")  # fmt: skip
        else:
            text = f"{self.title}: {event.message}"
        if event.kind == "auth_url":
            self.shown = text
        if not self.ask:
            # Print and JSON runs have no UI to notify, yet the URL is the one thing the user must see:
            # it goes to stderr whole (never stdout, which belongs to the answer or the JSON stream), and
            # only there: those modes' notices go to stderr too, folded to one line, so it would repeat.
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
            return
        self.loop.call_soon_threadsafe(self.ui.notify, text, "info")

    def prompt(self, prompt: AuthPrompt) -> str:
        from pi_tui.ai.oauth.types import LoginCancelled

        if not self.ask:  # print mode: nobody can paste; wait for the browser (or the time limit)
            while not prompt.withdrawn.wait(0.1):
                if self.cancel.is_set():
                    raise LoginCancelled()
            return ""
        # The question is asked from a task started in the login's own context (the UI may need context
        # variables of its event loop, as Textual's dialogs do), and withdrawn when the browser answers.
        answered: concurrent.futures.Future[str | None] = concurrent.futures.Future()
        started: list[asyncio.Task[str | None]] = []

        def start() -> None:
            question = f"{self.shown}\n\n{prompt.message}" if self.shown else prompt.message
            task = asyncio.ensure_future(self.ui.input(question, prompt.placeholder or None))
            started.append(task)
            task.add_done_callback(lambda done: _settle(done, answered))

        def withdraw() -> None:
            for task in started:
                task.cancel()

        self.loop.call_soon_threadsafe(start, context=self.context)
        while True:
            try:
                answer = answered.result(timeout=0.1)
                break
            except TimeoutError:
                if prompt.withdrawn.is_set() or self.cancel.is_set():
                    self.loop.call_soon_threadsafe(withdraw)
                    if self.cancel.is_set():
                        raise LoginCancelled() from None
                    return ""
        if prompt.withdrawn.is_set():
            return ""
        if answer is None:
            raise LoginCancelled()
        return answer


def _settle(task: asyncio.Task[str | None], answered: concurrent.futures.Future[str | None]) -> None:
    """Hand a finished question's answer to the waiting thread (None when it was withdrawn)."""
    if answered.done():
        return
    if task.cancelled():
        answered.set_result(None)
    elif task.exception() is not None:
        answered.set_exception(task.exception())
    else:
        answered.set_result(task.result())


class BrowserLogin:
    """The redirect half of one OAuth login; use as ``async with BrowserLogin(...) as login``.

    Args:
        ui: ``ctx.ui``.
        mode: ``ctx.mode``: the browser is opened in the TUI; a pasted redirect URL is asked for in the TUI
            and RPC; print and JSON runs show the URL and wait for the browser.
        title: Names the login in messages and on the browser page ("MCP server docs").
        port: The redirect port; 0 takes a free one (what dynamically registered clients want).
        path: The redirect path.

    Raises:
        BrowserLoginError: the port cannot be bound.
    """

    def __init__(
        self, ui: UIBridge, mode: str, title: str, *, port: int = 0, path: str = "/callback"
    ) -> None:
        from pi_tui.ai.oauth.callback import CallbackServer
        from pi_tui.ai.oauth.types import OAuthError

        self.ui = ui
        self.mode = mode
        self.title = title
        try:
            self._server: CallbackServer | None = CallbackServer(port, path, None, title)
        except OAuthError as exc:
            raise BrowserLoginError(str(exc)) from None
        host = self._server.host if ":" not in self._server.host else f"[{self._server.host}]"
        self.redirect_uri = f"http://{host}:{self._server.port}{path}"

    async def __aenter__(self) -> BrowserLogin:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:  # fmt: skip
        self.close()

    def close(self) -> None:
        """Stop listening for the redirect."""
        server, self._server = self._server, None
        if server is not None:
            server.close()

    async def authorize(self, url: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> BrowserAuthorization:
        """Show ``url`` and wait for the browser's redirect (or a pasted redirect URL).

        Raises:
            BrowserLoginError: the user cancelled, the time ran out, or the server reported an error
                (``access_denied`` when the user declined).
        """
        from pi_tui.ai.oauth.callback import wait_for_authorization
        from pi_tui.ai.oauth.types import LoginCancelled, OAuthError

        if self._server is None:
            raise BrowserLoginError(f"{self.title}: the login is already over")
        loop = asyncio.get_running_loop()
        io = _UiInteraction(self.ui, self.mode, loop, self.title)
        timed_out = threading.Event()

        def time_up() -> None:
            timed_out.set()
            io.cancel.set()

        timer = loop.call_later(timeout, time_up)
        server = self._server
        try:
            got = await asyncio.to_thread(
                wait_for_authorization, io, server, url=url, instructions="",
                manual_message="If the browser is on another machine, paste the address it was sent to here "
                               "(Esc cancels the login):",
                placeholder="http://127.0.0.1:…/callback?code=…",
            )  # fmt: skip
        except LoginCancelled:
            if timed_out.is_set():
                raise BrowserLoginError(
                    f"{self.title}: no answer from the browser within {timeout:g}s"
                ) from None
            raise BrowserLoginError(f"{self.title}: login cancelled") from None
        except OAuthError as exc:
            raise BrowserLoginError(str(exc)) from None
        except asyncio.CancelledError:
            io.cancel.set()
            raise
        finally:
            timer.cancel()
        return BrowserAuthorization(got.code, got.state, got.iss)
