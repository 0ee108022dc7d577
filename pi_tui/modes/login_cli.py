"""``pi-tui login [provider]`` and ``pi-tui logout [provider]``: logins from the shell.

The flows are `pi_tui.ai.oauth`'s; this module is their console face (`ConsoleInteraction`): it
prints the URL or device code, reads answers from the terminal, and treats Ctrl+C as cancel. Output
goes to stdout, errors to stderr; no token is ever printed.
"""

from __future__ import annotations

import getpass
import select
import sys
import threading
from typing import TextIO

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.catalog import provider_info
from pi_tui.ai.oauth import (
    ANTHROPIC_EXTRA_USAGE_WARNING,
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

__all__ = ["ConsoleInteraction", "find_login_provider", "run_login_command"]


def find_login_provider(ref: str) -> str | None:
    """The login provider ``ref`` names (its id or display name, any case), or None."""
    wanted = ref.strip().lower()
    for provider_id in oauth_provider_ids():
        if wanted in (provider_id.lower(), oauth_provider_name(provider_id).lower()):
            return provider_id
    return None


class ConsoleInteraction:
    """An `pi_tui.ai.oauth.Interaction` on a plain terminal (or pipes)."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.cancel = threading.Event()
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        """Print one line (thread-safe)."""
        with self._lock:
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def notify(self, event: AuthEvent) -> None:
        if event.kind == "auth_url":
            self.say(f"\nOpen this URL in your browser:\n{event.url}")
            if event.message:
                self.say(event.message)
        elif event.kind == "device_code":
            self.say(f"\nOpen this URL in your browser:\n{event.url}\nEnter code: {event.user_code}")
            self.say("Waiting for authentication...")
        elif event.message:
            self.say(event.message)

    def _read_line(self, prompt: AuthPrompt) -> str:
        """One line from stdin, giving up when the prompt is withdrawn or the login cancelled."""
        try:
            fileno = self.stdin.fileno()
        except (OSError, ValueError):
            fileno = -1
        while fileno >= 0:
            if prompt.withdrawn.is_set() or self.cancel.is_set():
                return ""
            ready, _, _ = select.select([fileno], [], [], 0.1)
            if ready:
                break
        line = self.stdin.readline()
        if not line:
            if prompt.kind == "manual_code":  # nothing to read: keep waiting for the browser
                while not (prompt.withdrawn.wait(0.1) or self.cancel.is_set()):
                    pass
                return ""
            raise LoginCancelled()
        return line.rstrip("\r\n")

    def prompt(self, prompt: AuthPrompt) -> str:
        if self.cancel.is_set():
            raise LoginCancelled()
        if prompt.kind == "select":
            self.say(f"\n{prompt.message}")
            for number, option in enumerate(prompt.options, 1):
                self.say(f"  {number}. {option.label}")
            with self._lock:
                self.stdout.write(f"Enter number (1-{len(prompt.options)}): ")
                self.stdout.flush()
            answer = self._read_line(prompt).strip()
            if not answer.isdigit() or not 1 <= int(answer) <= len(prompt.options):
                raise OAuthError(f"Not a choice: {answer!r}")
            return prompt.options[int(answer) - 1].id
        hint = f" (e.g. {prompt.placeholder})" if prompt.placeholder and prompt.kind != "manual_code" else ""
        if prompt.kind == "secret" and self.stdin.isatty():
            return getpass.getpass(f"{prompt.message}{hint} ", stream=self.stdout)
        with self._lock:
            self.stdout.write(f"{prompt.message}{hint} ")
            self.stdout.flush()
        answer = self._read_line(prompt)
        if prompt.withdrawn.is_set():
            self.say("")
        return answer


def _choose(io: ConsoleInteraction, message: str, ids: list[str]) -> str:
    from pi_tui.ai.oauth import PromptOption

    options = tuple(PromptOption(i, oauth_provider_name(i)) for i in ids)
    return io.prompt(AuthPrompt("select", message, options=options))


def _login(args: list[str], io: ConsoleInteraction, storage: AuthStorage) -> int:
    if args:
        provider_id = find_login_provider(args[0])
        if provider_id is None:
            sys.stderr.write(
                f'Error: no login for "{args[0]}". Providers with a login: {", ".join(oauth_provider_ids())}\n'
            )
            return 1
    else:
        provider_id = _choose(io, "Select provider to login:", oauth_provider_ids())
    provider = get_oauth_provider(provider_id)
    assert provider is not None
    login(provider_id, io, storage)
    io.say(f"Logged in to {provider.name}. Credentials saved to {storage.path}")
    if provider_id == "anthropic":
        io.say(ANTHROPIC_EXTRA_USAGE_WARNING)
    return 0


def _logout(args: list[str], io: ConsoleInteraction, storage: AuthStorage) -> int:
    storage.reload()
    for error in storage.drain_errors():
        sys.stderr.write(f"Error: {error}\n")
    stored = storage.providers()
    if args:
        ref = args[0].strip()
        provider_id = find_login_provider(ref) or ref
        if provider_id not in stored:
            sys.stderr.write(
                f'Error: no stored credentials for "{ref}". Stored: {", ".join(stored) or "none"}\n'
            )
            return 1
    elif not stored:
        io.say(
            "No stored credentials to remove. /logout only removes credentials saved by /login; "
            "environment variables and models.json config are unchanged."
        )
        return 0
    else:
        provider_id = _choose(io, "Select provider to logout:", stored)
    entry = storage.get(provider_id) or {}
    logout(provider_id, storage)
    if entry.get("type") == "oauth":
        name = oauth_provider_name(provider_id)
    else:  # an API key is named by its provider, not by the subscription login of the same id
        info = provider_info(provider_id)
        name = info.name if info is not None else provider_id
    if entry.get("type") == "oauth":
        io.say(f"Logged out of {name}")
    else:
        io.say(
            f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    return 0


def run_login_command(argv: list[str]) -> int:
    """Run ``login``/``logout`` (``argv[0]``) with its arguments; returns the exit code."""
    command, args = argv[0], [a for a in argv[1:] if a]
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(
            f"Usage: pi-tui {command} [provider]\n\nProviders with a login: {', '.join(oauth_provider_ids())}\n"
        )
        return 0
    io = ConsoleInteraction(sys.stdin, sys.stdout)
    storage = AuthStorage()
    try:
        if command == "login":
            return _login(args, io, storage)
        return _logout(args, io, storage)
    except KeyboardInterrupt:
        io.cancel.set()
        sys.stderr.write("\nLogin cancelled\n" if command == "login" else "\nCancelled\n")
        return 130
    except LoginCancelled:
        sys.stderr.write("Login cancelled\n")
        return 130
    except OAuthError as exc:
        action = "login" if command == "login" else "logout"
        sys.stderr.write(f"Error: {action} failed: {exc}\n")
        return 1
