"""``pi-tui auth check|print-api-key|print-bearer-token``: pi 0.87.1's credential commands for scripts.

- ``auth check --provider P | --model M [--json] [--credentials] [--no-refresh]`` prints ``ready``,
  ``not_ready`` or ``invalid`` (exit 0, 1, 2), or with ``--json`` one line
  ``{"status", "provider", "authType" | "reason"}``; ``--credentials`` prints the key or token itself (or
  adds it to the JSON). An expiring login is refreshed first unless ``--no-refresh``.
- ``auth print-api-key --provider P`` prints the provider's API key (auth.json, models.json or the
  environment, pi's order); a provider signed in with a login is refused.
- ``auth print-bearer-token --provider P [--min-expiry 30m]`` prints a login's access token, refreshed
  (and saved) first when it has less than ``--min-expiry`` left (default 30 minutes).

Messages, JSON fields and exit codes are pi's. Nothing else is printed to stdout, so the output can be
captured: ``TOKEN=$(pi-tui auth print-bearer-token --provider github-copilot)``.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pi_tui.ai.model_registry import ModelRegistry

__all__ = ["run_auth_command"]

_USAGE = """Usage:
  pi-tui auth print-api-key [--provider <provider>] [--model <model>]
  pi-tui auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi-tui auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Auth commands require at least one of --provider or --model. Checks refresh expired OAuth credentials by \
default; --no-refresh prevents this. --credentials emits the credential, or includes it in JSON output.
"""
_KINDS = {"check": "check", "print-api-key": "api_key", "print-bearer-token": "bearer_token"}
_NAMES = {"check": "auth check", "api_key": "auth print-api-key", "bearer_token": "auth print-bearer-token"}
_USAGES = {
    "check": "pi-tui auth check --provider <provider> [--json] [--credentials] [--no-refresh]",
    "api_key": "pi-tui auth print-api-key --provider <provider> [--model <model>]",
    "bearer_token": "pi-tui auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]",
}
_DURATION = re.compile(r"^(\d+)(ms|s|m|h)$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000}
_DEFAULT_MIN_EXPIRY_MS = 30 * 60_000


class _Refused(Exception):
    """One line for stderr (``Error: …``)."""


@dataclass
class _Command:
    kind: str
    provider: str | None = None
    model: str | None = None
    json: bool = False
    credentials: bool = False
    refresh: bool = True
    min_expiry_ms: int | None = None


def _parse(argv: list[str]) -> _Command:
    kind = _KINDS.get(argv[1] if len(argv) > 1 else "")
    if kind is None:
        raise _Refused(
            f'Unknown auth command "{argv[1] if len(argv) > 1 else ""}". Use "pi-tui auth print-api-key", '
            '"pi-tui auth print-bearer-token", or "pi-tui auth check".'
        )
    command = _Command(kind)
    args = argv[2:]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--provider", "--model"):
            index += 1
            value = args[index].strip() if index < len(args) else ""
            if not value:
                raise _Refused(f"{arg} needs a value")
            if arg == "--provider":
                command.provider = value
            else:
                command.model = value
        elif arg == "--min-expiry":
            if kind != "bearer_token":
                raise _Refused("--min-expiry is only supported by print-bearer-token")
            index += 1
            match = _DURATION.match(args[index]) if index < len(args) else None
            if match is None:
                raise _Refused("--min-expiry must use a duration such as 30m or 1h")
            command.min_expiry_ms = int(match[1]) * _UNIT_MS[match[2].lower()]
        elif arg in ("--json", "--credentials", "--no-refresh"):
            if kind != "check":
                raise _Refused(f"{arg} is only supported by auth check")
            command.json = command.json or arg == "--json"
            command.credentials = command.credentials or arg == "--credentials"
            command.refresh = command.refresh and arg != "--no-refresh"
        elif arg.startswith("-"):
            raise _Unknown(arg.lstrip("-").partition("=")[0], kind)
        else:
            raise _Refused("Auth commands only accept --provider and --model")
        index += 1
    return command


class _Unknown(Exception):
    def __init__(self, option: str, kind: str) -> None:
        super().__init__(option)
        self.option = option
        self.kind = kind


def _provider_of(command: _Command, registry: ModelRegistry) -> str:
    """The provider ``--provider``/``--model`` name (a model is resolved as ``--model`` is for a run)."""
    from pi_tui.ai.model_resolver import ModelResolutionError, resolve_cli_model

    if command.model is None:
        assert command.provider is not None
        return command.provider
    try:
        resolved = resolve_cli_model(registry, command.provider, command.model)
    except ModelResolutionError as exc:
        raise _Refused(str(exc)) from None
    if resolved.model is None:
        raise _Refused(f'Unable to resolve model "{command.model}"')
    return resolved.model.provider


def _login_token(provider: str, min_validity_ms: int | None, refresh: bool) -> str | None:
    """A stored login's bearer token (refreshed first when it expires within ``min_validity_ms``)."""
    from pi_tui.ai.auth import AuthStorage
    from pi_tui.ai.oauth.resolve import MIN_VALIDITY_MS, resolve_oauth
    from pi_tui.ai.paths import auth_json_path

    storage = AuthStorage(auth_json_path())
    if not refresh:
        credential = storage.oauth(provider)
        access = credential.get("access") if credential is not None else None
        return access if isinstance(access, str) and access else None
    auth = resolve_oauth(storage, provider, min_validity_ms=max(min_validity_ms or 0, MIN_VALIDITY_MS))
    if auth is None:
        return None
    if auth.api_key:
        return auth.api_key
    header = next((v for k, v in (auth.headers or {}).items() if k.lower() == "authorization"), "")
    match = re.match(r"^Bearer\s+(.+)$", header, re.IGNORECASE)
    return match[1] if match else None


def _check(command: _Command, out: TextIO) -> int:
    from pi_tui.ai.catalog import builtin_providers
    from pi_tui.ai.model_registry import AMBIENT_CREDENTIALS, ModelRegistry
    from pi_tui.ai.oauth import OAuthError

    requested = command.provider or command.model or ""
    result: dict[str, str]
    credential: str | None = None
    try:
        registry = ModelRegistry()
        provider = _provider_of(command, registry)
        if registry.errors:
            result = {"status": "invalid", "provider": provider, "reason": "invalid_state"}
        elif provider not in builtin_providers() and provider not in registry.providers():
            result = {"status": "not_ready", "provider": provider, "reason": "provider_not_found"}
        elif registry.auth.oauth(provider) is not None:
            token = _login_token(provider, None, command.refresh)
            result = {"status": "ready", "provider": provider, "authType": "oauth"}
            if command.credentials:
                credential = token
        else:
            key = registry.get_api_key_for_provider(provider)
            if key is None:
                result = {"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"}
            else:
                result = {"status": "ready", "provider": provider, "authType": "api_key"}
                if command.credentials and key != AMBIENT_CREDENTIALS:
                    credential = key
        if command.credentials and result["status"] == "ready" and not credential:
            result = {"status": "not_ready", "provider": provider, "reason": "credential_not_available"}
    except (_Refused, OAuthError, ValueError, OSError):
        result = {"status": "invalid", "provider": requested, "reason": "invalid_state"}
    if command.json:
        shown = {**result, **({"credentials": credential} if credential else {})}
        out.write(json.dumps(shown, separators=(",", ":"), ensure_ascii=False) + "\n")
    else:
        out.write(f"{credential or result['status']}\n")
    return {"ready": 0, "not_ready": 1}.get(result["status"], 2)


def _print(command: _Command, out: TextIO) -> int:
    from pi_tui.ai.catalog import builtin_providers
    from pi_tui.ai.model_registry import AMBIENT_CREDENTIALS, ModelRegistry
    from pi_tui.ai.oauth import OAuthError

    registry = ModelRegistry()
    if command.provider is not None and command.provider not in builtin_providers():
        if command.provider not in registry.providers():
            raise _Refused(
                f'Unknown provider "{command.provider}". Use --list-models to see available providers.'
            )
    provider = _provider_of(command, registry)
    is_login = registry.auth.oauth(provider) is not None
    if command.kind == "api_key":
        if is_login:
            raise _Refused(f'Provider "{provider}" is configured with OAuth, not an API key')
        key = registry.get_api_key_for_provider(provider)
        if not key or key == AMBIENT_CREDENTIALS:
            raise _Refused("No usable API key is configured")
        out.write(f"{key}\n")
        return 0
    if not is_login:
        raise _Refused(f'Provider "{provider}" is not configured with an OAuth bearer token')
    try:
        token = _login_token(provider, command.min_expiry_ms or _DEFAULT_MIN_EXPIRY_MS, refresh=True)
    except OAuthError as exc:
        raise _Refused(str(exc)) from None
    if not token:
        raise _Refused("No usable OAuth bearer token is configured")
    out.write(f"{token}\n")
    return 0


def run_auth_command(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``pi-tui auth …`` (``argv`` starts with ``auth``); returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    if len(argv) < 2 or argv[1] == "help" or "--help" in argv or "-h" in argv:
        out.write(_USAGE)
        return 0
    try:
        command = _parse(argv)
    except _Unknown as exc:
        err.write(f'Unknown option --{exc.option} for "{_NAMES[exc.kind]}".\n')
        err.write(f'Use "pi-tui --help" or "{_USAGES[exc.kind]}".\n')
        return 1
    except _Refused as exc:
        err.write(f"Error: {exc}\n")
        return 1
    if command.provider is None and command.model is None:
        if command.kind == "check":
            err.write("Error: Auth checks require --provider <provider> or --model <model>\n")
            return 2
        err.write("Error: Credential printing requires --provider <provider> or --model <model>\n")
        return 1
    try:
        return _check(command, out) if command.kind == "check" else _print(command, out)
    except _Refused as exc:
        err.write(f"Error: {exc}\n")
        return 1
