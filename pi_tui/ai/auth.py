"""Credentials: ``auth.json`` storage and the resolution of configured key values.

A configured value (an ``auth.json`` key, a ``models.json`` ``apiKey`` or header value) is one of:

- ``!command``: run through the shell, stdout trimmed; the result (including a failure, which yields
  None) is cached for the life of the process, so a password manager is asked once (``models.json``
  ``apiKey`` commands run on every request instead, as in pi 0.63+);
- ``!!command``: the same, but run on every resolution (never cached);
- a template (pi 0.77+): ``$NAME`` and ``${NAME}`` are replaced by environment variables, ``$$`` by
  ``$`` and ``$!`` by ``!``; a variable that is not set makes the value unusable (None, with a
  warning naming it);
- the bare name of an environment variable that is set: that variable's value (pi before 0.77; kept
  so older files still work, as no real key is spelled like a set variable's name);
- anything else: the literal value.

``auth.json`` (``{"anthropic": {"type": "api_key", "key": "..."}}``, or for a login
``{"type": "oauth", "access": ..., "refresh": ..., "expires": <epoch ms>, ...}``) is pi's file, in pi's
format: 2-space JSON, mode 0600, in a directory created 0700. Every write re-reads the file under pi's
own lock (`pi_tui.ai.auth_lock`) so entries that another process (pi or pi-tui) wrote meanwhile are
kept; a file that does not parse is never overwritten, and entries this code does not understand are
written back as they were.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from .catalog import env_vars, provider_info
from .paths import auth_json_path

__all__ = [
    "AuthFileError",
    "ConfigValueError",
    "expand_config_value",
    "config_value_env_names",
    "AuthStorage",
    "CommandValue",
    "resolve_config_value",
    "resolve_headers",
    "resolve_request_headers",
    "clear_config_value_cache",
    "env_api_key",
    "env_key_variables",
    "env_vars_for",
]

logger = logging.getLogger(__name__)

_COMMAND_TIMEOUT_S = 10.0

_command_cache: dict[str, str | None] = {}
_command_cache_lock = threading.Lock()


class AuthFileError(Exception):
    """auth.json cannot be read or written safely (it is malformed, or the disk refused)."""


class ConfigValueError(ValueError):
    """A configured value cannot be resolved (an unset variable, a failing command); one line."""


_TEMPLATE = re.compile(r"\$(?:(\$)|(!)|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand_config_value(value: str, env: Mapping[str, str] | None = None) -> str:
    """Expand a template value: ``$NAME``/``${NAME}`` from ``env`` (an auth.json entry's own variables),
    then the environment; ``$$`` and ``$!``.

    A ``$`` followed by anything else stays as it is. Commands (``!``) are not handled here.

    Raises:
        ConfigValueError: a referenced environment variable is not set.
    """

    def replace(match: re.Match[str]) -> str:
        dollar, bang, braced, bare = match.groups()
        if dollar:
            return "$"
        if bang:
            return "!"
        name = braced or bare
        found = (env or {}).get(name) or os.environ.get(name)
        if not found:  # pi treats an empty variable as unset too
            raise ConfigValueError(f"environment variable {name} is not set")
        return found

    return _TEMPLATE.sub(replace, value)


def config_value_env_names(value: str) -> list[str]:
    """The environment variables a template value (``$NAME``, ``${NAME}``) reads, in order; empty for
    a command (``!…``) or a value without a template."""
    if value.startswith("!"):
        return []
    names = (braced or bare for _, _, braced, bare in _TEMPLATE.findall(value))
    return list(dict.fromkeys(name for name in names if name))


def _run_command(command: str) -> str | None:
    try:
        completed = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=_COMMAND_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("key command failed to run: %s", exc)
        return None
    if completed.returncode != 0:
        logger.warning("key command %r exited with status %d", command, completed.returncode)
        return None
    output = completed.stdout.decode("utf-8", errors="replace").strip()
    return output or None


def resolve_config_value(
    value: str | None,
    *,
    where: str | None = None,
    cache: bool = True,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Resolve a configured key or header value (see the module docstring). Empty results are None.

    Args:
        value: The configured text.
        where: Names the file and field (``"models.json providers.x.apiKey"``) in the warning logged
            when the value cannot be resolved.
        cache: Whether a ``!command`` result is kept for the process (``!!`` never is).
        env: Variables a template looks up before the environment (an auth.json entry's ``env``).
    """
    if not value:
        return None
    label = f"{where}: " if where else ""
    if value.startswith("!!") or (value.startswith("!") and not cache):
        command = value[2:] if value.startswith("!!") else value[1:]
        result = _run_command(command)
        if result is None:
            logger.warning("%scommand %r gave no value", label, command)
        return result
    if value.startswith("!"):
        command = value[1:]
        with _command_cache_lock:
            if command in _command_cache:
                return _command_cache[command]
            result = _run_command(command)
            _command_cache[command] = result
        if result is None:
            logger.warning("%scommand %r gave no value", label, command)
        return result
    if "$" in value:
        try:
            return expand_config_value(value, env) or None
        except ConfigValueError as exc:
            logger.warning("%s%s", label, exc)
            return None
    from_env = os.environ.get(value)
    return from_env if from_env else value


class CommandValue(str):
    """A configured ``!command`` header value, kept unrun until a request needs it (pi 0.63+).

    The string itself is the configured text (``prefix`` + ``!command``), so a listing or a dump shows
    the command, never its output. `resolve` runs it (every time: a rotated token is picked up by the
    next request) and puts ``prefix`` (``"Bearer "`` for ``authHeader``) before the output.
    """

    prefix: str
    where: str | None

    def __new__(cls, raw: str, prefix: str = "", where: str | None = None) -> CommandValue:
        value = super().__new__(cls, prefix + raw)
        value.prefix = prefix
        value.where = where
        return value

    def __deepcopy__(self, memo: dict[int, Any]) -> CommandValue:
        return self  # immutable, like any str

    def resolve(self) -> str | None:
        """The header value now: the command's output after ``prefix``; None when it gives nothing."""
        output = resolve_config_value(self[len(self.prefix) :], where=self.where, cache=False)
        return self.prefix + output if output else None


def resolve_headers(
    headers: dict[str, str] | None, *, defer_commands: bool = False, where: str | None = None
) -> dict[str, str] | None:
    """Resolve each header value; headers whose value resolves to nothing are dropped.

    With ``defer_commands`` a ``!command`` value is not run here but kept as a `CommandValue`, which
    `resolve_request_headers` runs for each request. ``where`` names the field in warnings.
    """
    if not headers:
        return None
    resolved: dict[str, str] = {}
    for name, raw in headers.items():
        label = f"{where}.{name}" if where else None
        if defer_commands and raw.startswith("!"):
            resolved[name] = CommandValue(raw, where=label)
        elif value := resolve_config_value(raw, where=label):
            resolved[name] = value
    return resolved or None


def resolve_request_headers(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` with each `CommandValue` run now (dropped when it gives nothing); others as they are."""
    if not any(type(value) is CommandValue for value in headers.values()):
        return headers
    out: dict[str, str] = {}
    for name, value in headers.items():
        if type(value) is CommandValue:
            resolved = value.resolve()
            if resolved:
                out[name] = resolved
        else:
            out[name] = value
    return out


def clear_config_value_cache() -> None:
    """Forget cached ``!command`` results (for tests and an explicit re-login)."""
    with _command_cache_lock:
        _command_cache.clear()


def env_vars_for(provider: str) -> tuple[str, ...]:
    """Environment variables pi reads for ``provider``'s credentials, in its order (the catalog's)."""
    return env_vars(provider)


# For providers whose credentials are more than one key, the variable that holds the key itself.
_KEY_VARIABLE = {
    "bedrock": "AWS_BEARER_TOKEN_BEDROCK",
    "vertex": "GOOGLE_CLOUD_API_KEY",
    "cloudflare": "CLOUDFLARE_API_KEY",
}


def env_key_variables(provider: str) -> tuple[str, ...]:
    """The variables whose value is sent as ``provider``'s API key, in pi's order.

    Anthropic's ``ANTHROPIC_AUTH_TOKEN`` comes first, as in pi; its value goes out as an
    ``Authorization: Bearer`` header (`ModelRegistry` puts it on the provider's models), not as a key.
    """
    info = provider_info(provider)
    if info is None:
        return ()
    if info.auth in _KEY_VARIABLE:
        return (_KEY_VARIABLE[info.auth],)
    return info.env


def env_api_key(provider: str) -> str | None:
    """The provider's key from the environment (read fresh each time, never cached). Like pi, a
    variable that is empty or only whitespace counts as unset."""
    for name in env_key_variables(provider):
        value = os.environ.get(name)
        if value and value.strip():
            return value
    return None


def _entry_problem(entry: object) -> str | None:
    """Why a stored credential cannot be used (pi's own checks), or None when it can."""
    if not isinstance(entry, dict):
        return "not an object"
    kind = entry.get("type")
    if kind == "api_key":
        key, env = entry.get("key"), entry.get("env")
        if key is not None and not isinstance(key, str):
            return '"key" is not a string'
        if env is not None and not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
            return '"env" is not an object of strings'
        return None
    if kind == "oauth":
        expires = entry.get("expires")
        if not isinstance(entry.get("access"), str) or not isinstance(entry.get("refresh"), str):
            return '"access" and "refresh" must be strings'
        if isinstance(expires, bool) or not isinstance(expires, int | float) or expires != expires:
            return '"expires" must be a number (milliseconds since 1970)'
        return None
    return f'unknown "type" {kind!r}'


FileRevision = tuple[int, int, int, int]


class AuthStorage:
    """Read and write ``auth.json``.

    Args:
        path: The file to use; defaults to ``auth.json`` in the agent dir.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._path = path if path is not None else auth_json_path()
        self._data: JsonObject = {}
        self._revision: FileRevision | None = None
        self._errors: list[str] = []
        self._lock = threading.RLock()
        self.reload()

    @property
    def path(self) -> Path:
        return self._path

    # --- reading ---------------------------------------------------------------------------------

    def _file_revision(self) -> FileRevision | None:
        try:
            info = self._path.stat()
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)

    def _read_disk(self) -> JsonObject:
        """Every entry in the file, as written; {} when missing. Raises AuthFileError when it cannot be used."""
        try:
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise AuthFileError(f"cannot read {self._path}: {exc.strerror or exc}") from exc
        text = text.removeprefix("\ufeff")  # tolerated, as pi 0.84.3 does
        if not text.strip():
            return {}
        try:
            data = json_safe.loads(text)
        except json.JSONDecodeError as exc:
            raise AuthFileError(f"{self._path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(data, dict):
            raise AuthFileError(f"{self._path}:1: expected a JSON object of providers")
        return data

    def reload(self) -> None:
        """Re-read the file. On error the previous entries stay in memory and the error is recorded."""
        with self._lock:
            revision = self._file_revision()
            try:
                data = self._read_disk()
            except AuthFileError as exc:
                message = f"auth.json error: {exc}"
                logger.warning("%s", message)
                self._errors.append(message)
                return
            for provider, entry in data.items():
                problem = _entry_problem(entry)
                if problem is not None:
                    message = f'auth.json error: {self._path}: the credential for "{provider}" is unusable: {problem}'
                    logger.warning("%s", message)
                    self._errors.append(message)
            self._data = data
            self._revision = revision

    def check_readable(self) -> None:
        """Raise when the file on disk cannot be used (before a login, so it fails before the browser).

        Raises:
            AuthFileError: the file is malformed or unreadable (its line and problem in the message).
        """
        self._read_disk()

    def reload_if_changed(self) -> None:
        """Re-read the file when another process changed it since it was last read (cheap: one stat)."""
        if self._file_revision() != self._revision:
            self.reload()

    def drain_errors(self) -> list[str]:
        """Errors seen since the last call (each reported once)."""
        with self._lock:
            errors, self._errors = self._errors, []
            return errors

    def get(self, provider: str) -> JsonObject | None:
        """The raw credential entry for ``provider`` (None when absent or unusable)."""
        entry = self._data.get(provider)
        return dict(entry) if isinstance(entry, dict) and _entry_problem(entry) is None else None

    def has(self, provider: str) -> bool:
        return self.get(provider) is not None

    def providers(self) -> list[str]:
        return [name for name in self._data if self.has(name)]

    def stored_env(self, provider: str) -> dict[str, str]:
        """The variables an ``api_key`` entry carries for ``provider`` (pi's ``env``: e.g. Vertex's project,
        location and credentials file from ``/login``); they take precedence over the process environment."""
        entry = self.get(provider)
        env = entry.get("env") if entry is not None and entry.get("type") == "api_key" else None
        return {k: v for k, v in env.items() if isinstance(v, str)} if isinstance(env, dict) else {}

    def oauth(self, provider: str) -> JsonObject | None:
        """``provider``'s stored login (``type: oauth``), None when it has none."""
        entry = self.get(provider)
        return entry if entry is not None and entry.get("type") == "oauth" else None

    def api_key(self, provider: str) -> str | None:
        """The usable key stored for ``provider``: a resolved ``api_key`` entry or an OAuth access token.

        OAuth tokens are returned as stored; `pi_tui.ai.oauth.resolve` refreshes them when they expire.
        """
        entry = self.get(provider)
        if entry is None:
            return None
        kind = entry.get("type")
        if kind == "api_key":
            key = entry.get("key")
            if not isinstance(key, str):
                return None
            # pi: a template names the entry's own variables first, then the environment
            env = self.stored_env(provider)
            return resolve_config_value(key, where=f"{self._path}: {provider}.key", env=env)
        if kind == "oauth":
            access = entry.get("access")
            return access if isinstance(access, str) and access else None
        return None

    # --- writing ---------------------------------------------------------------------------------

    def set(self, provider: str, credential: JsonObject) -> None:
        """Store ``credential`` for ``provider``, keeping every other provider's entry.

        Raises:
            AuthFileError: the file on disk is malformed (it is left untouched) or cannot be written.
        """
        self.modify(provider, lambda _current: dict(credential))

    def set_api_key(self, provider: str, key: str) -> None:
        """Store a plain API key (or a ``!command`` / env-var name) for ``provider``."""
        self.set(provider, {"type": "api_key", "key": key})

    def remove(self, provider: str) -> bool:
        """Delete ``provider``'s entry, keeping the others; whether there was one.

        Raises:
            AuthFileError: the file on disk is malformed (it is left untouched) or cannot be written.
        """
        removed: list[bool] = []

        def change(data: JsonObject) -> bool:
            removed.append(data.pop(provider, None) is not None)
            return removed[-1]

        self._modify(change)
        return bool(removed and removed[0])

    def modify(
        self,
        provider: str,
        change: Callable[[JsonObject | None], JsonObject | None],
        *,
        cancel: threading.Event | None = None,
    ) -> JsonObject | None:
        """Replace ``provider``'s entry with ``change(current entry)`` under the file lock.

        The file is re-read under the lock, so ``change`` sees what another process wrote last (an OAuth
        refresh uses this to refresh once between processes). When ``change`` returns None nothing is
        written. Returns the entry that is stored afterwards.

        Raises:
            AuthFileError: the file on disk is malformed (it is left untouched), cannot be written, or
                its lock stayed held by another process.
        """
        result: list[JsonObject | None] = []

        def apply(data: JsonObject) -> bool:
            current = data.get(provider)
            usable = dict(current) if isinstance(current, dict) and _entry_problem(current) is None else None
            replacement = change(usable)
            if replacement is None:
                result.append(usable)
                return False
            data[provider] = replacement
            result.append(dict(replacement))
            return True

        self._modify(apply, cancel=cancel)
        return result[0] if result else None

    def _modify(
        self, change: Callable[[JsonObject], bool], *, cancel: threading.Event | None = None
    ) -> None:
        with self._lock, self._file_lock(cancel):
            data = self._read_disk()  # raises on a malformed file, so it is never overwritten
            if change(data):
                self._write(data)
            self._data = data
            self._revision = self._file_revision()

    @contextlib.contextmanager
    def _file_lock(self, cancel: threading.Event | None = None) -> Iterator[None]:
        """pi's own lock on auth.json (`pi_tui.ai.auth_lock`), so pi and pi-tui never interleave writes."""
        from .auth_lock import AuthLockError, hold_lock  # only writers need it

        self._ensure_dir()
        try:
            with hold_lock(self._path, cancel=cancel):
                yield
        except AuthLockError as exc:
            raise AuthFileError(str(exc)) from exc

    def _ensure_dir(self) -> None:
        directory = self._path.parent
        if not directory.exists():
            try:
                directory.mkdir(parents=True, mode=0o700)
            except FileExistsError:
                pass
            except OSError as exc:
                raise AuthFileError(f"cannot create {directory}: {exc.strerror or exc}") from exc

    def _write(self, data: JsonObject) -> None:
        text = json.dumps(data, indent=2)
        try:
            # A new file is created 0600, so a token is never readable by others, even briefly; an
            # existing file keeps the mode the user or an administrator chose, as in pi. A symbolic
            # link (auth.json kept elsewhere) is followed and stays a link, as pi's in-place write does.
            from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

            replace_file_bytes(self._path, text.encode("utf-8"), new_file_mode=0o600)
        except OSError as exc:
            raise AuthFileError(f"cannot write {self._path}: {exc.strerror or exc}") from exc
