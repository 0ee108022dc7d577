"""The shapes every login flow shares: what a flow asks of the user, what it tells them, and its result.

A flow (`OAuthProvider.login`) is plain blocking code run on a worker thread. It talks to the person
only through an `Interaction`: `Interaction.notify` shows an `AuthEvent` (a URL to open, a device
code, progress) and `Interaction.prompt` asks an `AuthPrompt` (text, a secret, a choice, or the
authorization code pasted from another machine) and blocks until answered. The TUI, the plain
console of ``pi-tui login`` and RPC each implement `Interaction`; the flows never know which.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pi_tui.util.json_types import JsonObject

__all__ = [
    "AuthEvent",
    "AuthPrompt",
    "Interaction",
    "LoginCancelled",
    "OAuthError",
    "OAuthProvider",
    "PromptOption",
    "RequestAuth",
    "CANCELLED_MESSAGE",
]

CANCELLED_MESSAGE = "Login cancelled"

Credential = JsonObject
"""A stored login as pi writes it: ``{"type": "oauth", "access", "refresh", "expires", ...extras}``."""


class OAuthError(Exception):
    """A login or refresh failed; the message is one line a user can act on and never holds a token."""


class LoginCancelled(OAuthError):
    """The user cancelled the login (Esc, Ctrl+C, or the RPC client)."""

    def __init__(self) -> None:
        super().__init__(CANCELLED_MESSAGE)


@dataclass(frozen=True)
class PromptOption:
    """One choice of a ``select`` prompt."""

    id: str
    label: str
    description: str = ""


@dataclass(frozen=True)
class AuthPrompt:
    """A question for the user.

    Attributes:
        kind: ``text``, ``secret`` (not echoed), ``select`` (answer = an option id) or ``manual_code``
            (the code or redirect URL pasted from a browser on another machine; asked while the flow
            also waits for the browser's callback).
        message: The question.
        placeholder: An example answer.
        options: The choices of a ``select``.
        withdrawn: Set by the flow when the answer is no longer needed (the browser's callback arrived
            first); the interface closes the question and `Interaction.prompt` returns "".
    """

    kind: Literal["text", "secret", "select", "manual_code"]
    message: str
    placeholder: str = ""
    options: tuple[PromptOption, ...] = ()
    withdrawn: threading.Event = field(default_factory=threading.Event, compare=False)


@dataclass(frozen=True)
class AuthEvent:
    """Something to show during a login.

    Attributes:
        kind: ``auth_url`` (open ``url`` in a browser; ``message`` says what to do there),
            ``device_code`` (open ``url`` and enter ``user_code``), ``progress`` or ``info``.
        message: Text for ``info``/``progress``, the instructions for ``auth_url``.
        url: The page to open.
        user_code: The device code to type there.
        expires_in: Seconds the device code stays valid.
    """

    kind: Literal["auth_url", "device_code", "progress", "info"]
    message: str = ""
    url: str = ""
    user_code: str = ""
    expires_in: float | None = None


class Interaction(Protocol):
    """How a login flow reaches the user; implemented by the TUI, ``pi-tui login`` and RPC.

    ``cancel`` is set when the user gives up; a flow checks it between steps and while waiting.
    """

    cancel: threading.Event

    def notify(self, event: AuthEvent) -> None:
        """Show ``event``; never blocks for long."""

    def prompt(self, prompt: AuthPrompt) -> str:
        """Ask ``prompt`` and block until answered.

        Raises:
            LoginCancelled: the user cancelled instead of answering.
        """


@dataclass(frozen=True)
class RequestAuth:
    """What a stored login contributes to a model request.

    Attributes:
        api_key: The key the provider's adapter uses (for Anthropic an ``sk-ant-oat`` token, which
            switches the adapter to Claude Code mode).
        headers: Extra request headers (Kimi sends its token as ``Authorization``).
        base_url: A different endpoint (GitHub Copilot's token names its own API host).
    """

    api_key: str | None = None
    headers: dict[str, str] | None = None
    base_url: str | None = None


class OAuthProvider:
    """One provider's login: its flow, its refresh, and how its credential authenticates requests.

    Subclasses set the class attributes and implement `login` and `refresh`.
    """

    id: str = ""
    name: str = ""
    login_label: str = "Sign in with an account"
    is_subscription: bool = True

    def login(self, io: Interaction) -> Credential:
        """Run the whole login; returns the credential to store.

        Raises:
            LoginCancelled: the user cancelled.
            OAuthError: the login failed (the message says why and what to try).
        """
        raise NotImplementedError

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        """A fresh credential from the stored one's refresh token.

        Raises:
            OAuthError: the server refused (an expired or revoked login) or could not be reached.
        """
        raise NotImplementedError

    def to_auth(self, credential: Credential) -> RequestAuth:
        """How ``credential`` authenticates a request (pure; no I/O)."""
        access = credential.get("access")
        return RequestAuth(api_key=access if isinstance(access, str) else None)
