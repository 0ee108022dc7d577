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

``auth.json`` (``{"anthropic": {"type": "api_key", "key": "..."}}``) is written with mode 0600 in a
directory created 0700. Every write re-reads the file under a lock so entries that another process
wrote meanwhile are kept, and a file that does not parse is never overwritten.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .catalog import PROVIDER_ENV_VARS
from .paths import auth_json_path

__all__ = [
    "AuthFileError",
    "ConfigValueError",
    "expand_config_value",
    "AuthStorage",
    "CommandValue",
    "resolve_config_value",
    "resolve_headers",
    "resolve_request_headers",
    "clear_config_value_cache",
    "env_api_key",
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


def expand_config_value(value: str) -> str:
    """Expand a template value: ``$NAME``/``${NAME}`` from the environment, ``$$`` and ``$!``.

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
        found = os.environ.get(name)
        if not found:  # pi treats an empty variable as unset too
            raise ConfigValueError(f"environment variable {name} is not set")
        return found

    return _TEMPLATE.sub(replace, value)


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


def resolve_config_value(value: str | None, *, where: str | None = None, cache: bool = True) -> str | None:
    """Resolve a configured key or header value (see the module docstring). Empty results are None.

    Args:
        value: The configured text.
        where: Names the file and field (``"models.json providers.x.apiKey"``) in the warning logged
            when the value cannot be resolved.
        cache: Whether a ``!command`` result is kept for the process (``!!`` never is).
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
            return expand_config_value(value) or None
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
    """Environment variables that may hold ``provider``'s key, highest priority first."""
    return PROVIDER_ENV_VARS.get(provider, ())


def env_api_key(provider: str) -> str | None:
    """The provider's key from the environment (read fresh each time, never cached)."""
    for name in env_vars_for(provider):
        value = os.environ.get(name)
        if value:
            return value
    return None


class AuthStorage:
    """Read and write ``auth.json``.

    Args:
        path: The file to use; defaults to ``auth.json`` in the agent dir.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._path = path if path is not None else auth_json_path()
        self._data: dict[str, dict[str, Any]] = {}
        self._errors: list[str] = []
        self._lock = threading.Lock()
        self.reload()

    @property
    def path(self) -> Path:
        return self._path

    # --- reading ---------------------------------------------------------------------------------

    def _read_disk(self) -> dict[str, dict[str, Any]]:
        """The file's entries; {} when missing. Raises AuthFileError when it cannot be used."""
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
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AuthFileError(f"{self._path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(data, dict):
            raise AuthFileError(f"{self._path}:1: expected a JSON object of providers")
        return {name: entry for name, entry in data.items() if isinstance(entry, dict)}

    def reload(self) -> None:
        """Re-read the file. On error the previous entries stay in memory and the error is recorded."""
        with self._lock:
            try:
                self._data = self._read_disk()
            except AuthFileError as exc:
                message = f"auth.json error: {exc}"
                logger.warning("%s", message)
                self._errors.append(message)

    def drain_errors(self) -> list[str]:
        """Errors seen since the last call (each reported once)."""
        with self._lock:
            errors, self._errors = self._errors, []
            return errors

    def get(self, provider: str) -> dict[str, Any] | None:
        """The raw credential entry for ``provider``."""
        entry = self._data.get(provider)
        return dict(entry) if entry is not None else None

    def has(self, provider: str) -> bool:
        return provider in self._data

    def providers(self) -> list[str]:
        return list(self._data)

    def api_key(self, provider: str) -> str | None:
        """The usable key stored for ``provider``: a resolved ``api_key`` entry or an OAuth access token.

        OAuth tokens are returned as stored; refreshing them is not implemented here.
        """
        entry = self._data.get(provider)
        if entry is None:
            return None
        kind = entry.get("type")
        if kind == "api_key":
            key = entry.get("key")
            if not isinstance(key, str):
                return None
            return resolve_config_value(key, where=f"{self._path}: {provider}.key")
        if kind == "oauth":
            access = entry.get("access")
            return access if isinstance(access, str) and access else None
        return None

    # --- writing ---------------------------------------------------------------------------------

    def set(self, provider: str, credential: dict[str, Any]) -> None:
        """Store ``credential`` for ``provider``, keeping every other provider's entry.

        Raises:
            AuthFileError: the file on disk is malformed (it is left untouched) or cannot be written.
        """
        self._modify(lambda data: data.__setitem__(provider, dict(credential)))

    def set_api_key(self, provider: str, key: str) -> None:
        """Store a plain API key (or a ``!command`` / env-var name) for ``provider``."""
        self.set(provider, {"type": "api_key", "key": key})

    def remove(self, provider: str) -> None:
        """Delete ``provider``'s entry, keeping the others."""
        self._modify(lambda data: data.pop(provider, None))

    def _modify(self, change: Callable[[dict[str, dict[str, Any]]], object]) -> None:
        with self._lock, self._file_lock():
            data = self._read_disk()  # raises on a malformed file, so it is never overwritten
            change(data)
            self._write(data)
            self._data = data

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """An advisory lock on a sibling file, so two pi processes don't interleave writes."""
        self._ensure_dir()
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; the atomic rename still prevents torn files
            yield
            return
        lock_path = self._path.with_name(f".{self._path.name}.lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _ensure_dir(self) -> None:
        directory = self._path.parent
        if not directory.exists():
            try:
                directory.mkdir(parents=True, mode=0o700)
            except FileExistsError:
                pass
            except OSError as exc:
                raise AuthFileError(f"cannot create {directory}: {exc.strerror or exc}") from exc

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        text = json.dumps(data, indent=2) + "\n"
        try:
            # mkstemp creates the file 0600, so the key is never readable by others, even briefly.
            fd, tmp_name = tempfile.mkstemp(prefix=".auth-", suffix=".tmp", dir=self._path.parent)
        except OSError as exc:
            raise AuthFileError(f"cannot write {self._path}: {exc.strerror or exc}") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, self._path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise AuthFileError(f"cannot write {self._path}: {exc.strerror or exc}") from exc
