"""Reading MCP server configuration: ``mcp.json`` in pi-mcp-adapter's and Claude Code's shape.

Files, lowest precedence first (a later file's server of the same name replaces an earlier one):

- ``<agent dir>/mcp.json`` (``$PI_CODING_AGENT_DIR``, default ``~/.pi/agent``);
- the project's ``.mcp.json`` (Claude Code) and ``.pi/mcp.json`` (pi-mcp-adapter), read only when the
  project is trusted.

Each file holds ``{"mcpServers": {"name": {...}}}``. A server has ``command`` (+ ``args``, ``env``,
``cwd``) for a stdio server, or ``url`` (+ ``headers``; ``type``/``transport`` ``"sse"`` for old SSE
servers) for a remote one. ``${VAR}`` and ``${VAR:-default}`` (and pi-mcp-adapter's ``$env:VAR``) are
expanded in every string from the environment. Per server: ``enabled`` (or ``disabled``), ``lifecycle``
(``lazy``, the default, or ``keep-alive``/``eager``), ``timeout`` (seconds per call, default 60; or
``requestTimeoutMs``), ``direct``/``directTools`` (expose its tools as first-class tools).

Authentication of a remote server: ``headers`` as given (``"Authorization": "Bearer ${TOKEN}"``), or
pi-mcp-adapter's ``"auth": "bearer"`` with ``bearerToken`` or ``bearerTokenEnv`` (Codex's
``bearer_token_env_var`` too), which becomes that header. Otherwise a server that answers 401 is logged in
to with OAuth (``/mcp login NAME``); ``oauth.clientId``/``clientSecret`` name a client registered
beforehand (no dynamic registration then), ``oauth.redirectUri`` (pi-mcp-adapter) or
``oauth.callbackPort`` (Claude Code) fix the loopback redirect, ``oauth.scopes`` (a list, or one
space-separated string) are the scopes asked for instead of the ones the server names. ``"auth": "none"`` (or ``false``) turns
OAuth off for a server. Fields this client does not use (``toolPrefix``, …) are accepted and ignored, so a
file written for pi-mcp-adapter or Claude Code loads unchanged.

This module needs only the standard library and the extension API (its ``decode_json``, the project's
depth-checked JSON decoder): reading the config never imports the MCP SDK.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.extensions.api import decode_json

__all__ = [
    "ConfigError",
    "OAuthSettings",
    "ServerConfig",
    "McpConfig",
    "agent_dir",
    "config_paths",
    "project_config_paths",
    "load_config",
    "parse_file",
    "save_enabled",
]

DEFAULT_TIMEOUT = 60.0
LIFECYCLES = ("lazy", "keep-alive", "eager", "lazy-keep-alive")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$env:([A-Za-z_][A-Za-z0-9_]*)")


class ConfigError(ValueError):
    """A malformed ``mcp.json``: the message names the file, the line and what is wrong."""


@dataclass(frozen=True)
class OAuthSettings:
    """How to log in to a remote server that asks for OAuth (all optional)."""

    client_id: str = ""  # a client registered beforehand: no dynamic registration
    client_secret: str = ""
    port: int = 0  # the loopback redirect's port; 0 = a free one
    path: str = "/callback"
    scope: str = ""  # the scopes asked for, space-separated; "" = the ones the server names


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server."""

    name: str
    source: Path
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    transport: str = "stdio"  # stdio, http or sse
    enabled: bool = True
    lifecycle: str = "lazy"
    timeout: float = DEFAULT_TIMEOUT
    direct: bool = False
    oauth: OAuthSettings | None = OAuthSettings()  # None: never log in (static headers or "auth": "none")

    @property
    def keep_alive(self) -> bool:
        """Started with the session rather than on first use."""
        return self.lifecycle in ("keep-alive", "eager")


@dataclass
class McpConfig:
    """Every server from every file read, and the problems found on the way."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get("PI_CODING_AGENT_DIR", "").strip()
    return Path(os.path.expanduser(configured)) if configured else Path.home() / ".pi" / "agent"


# The project's own files, relative to it, lowest precedence first: Claude Code's, then pi-tui's.
PROJECT_FILES = (".mcp.json", ".pi/mcp.json")


def project_config_paths(cwd: str | Path) -> list[Path]:
    """The project's files, lowest precedence first: ``.mcp.json`` (Claude Code), ``.pi/mcp.json``."""
    return [Path(cwd) / name for name in PROJECT_FILES]


def config_paths(cwd: str | Path, trusted: bool) -> list[Path]:
    """The files read, lowest precedence first; the project's only when ``trusted``."""
    return [agent_dir() / "mcp.json", *(project_config_paths(cwd) if trusted else [])]


def expand(value: str, env: dict[str, str] | None = None) -> str:
    """``${VAR}``, ``${VAR:-default}`` and ``$env:VAR`` replaced from ``env`` (default: the environment)."""
    source = os.environ if env is None else env

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        found = source.get(name)
        if found:
            return found
        return match.group(2) or ""

    return _VAR.sub(sub, value)


def _line_of(text: str, needle: str, start: int = 0) -> int:
    at = text.find(needle, start)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _decode(path: Path, text: str) -> dict[str, Any]:
    """One file's JSON object, through the depth-checked decoder (a ``[[[[…]]]]`` file is malformed JSON).

    Raises:
        ConfigError: ``<path>:<line>: not valid JSON: …``, or the file holds no object.
    """
    try:
        data = decode_json(text.removeprefix("\ufeff") or "{}")
    except json.JSONDecodeError as exc:  # too deep is one too (JsonTooDeepError), at the bracket
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ConfigError(f'{path}:1: expected an object with an "mcpServers" key')
    return data


def parse_file(path: Path, text: str) -> dict[str, ServerConfig]:
    """The servers in one file's ``text``.

    Raises:
        ConfigError: ``<path>:<line>: <what is wrong>`` for bad JSON or a server entry of the wrong shape.
    """
    return _servers_in(path, text, _decode(path, text))


def _servers_in(path: Path, text: str, data: dict[str, Any]) -> dict[str, ServerConfig]:
    """The servers of a decoded file (``text`` gives the lines errors name); ``data`` is not changed."""
    servers = data.get("mcpServers", data.get("servers", {}))
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}:{_line_of(text, "mcpServers")}: "mcpServers" must be an object of servers')
    found: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        line = _line_of(text, json.dumps(name))
        found[name] = _server(path, line, name, entry)
    return found


def _strings(path: Path, line: int, name: str, key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise ConfigError(f'{path}:{line}: server "{name}": "{key}" must be an object of strings')
    return {str(k): expand(str(v)) for k, v in value.items()}


def _server(path: Path, line: int, name: str, entry: Any) -> ServerConfig:
    where = f'{path}:{line}: server "{name}"'
    if not isinstance(entry, dict):
        raise ConfigError(f'{where}: must be an object with "command" or "url"')
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ConfigError(f"{where}: a name may only hold letters, digits, '_', '-' and '.'")
    command, url = entry.get("command"), entry.get("url")
    if command is None and url is None:
        raise ConfigError(f'{where}: needs "command" (a local server) or "url" (a remote one)')
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise ConfigError(f'{where}: "command" must be a non-empty string')
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://", "${"))):
        raise ConfigError(f'{where}: "url" must be an http:// or https:// address')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise ConfigError(f'{where}: "args" must be a list of strings')
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f'{where}: "cwd" must be a string')
    lifecycle = entry.get("lifecycle", "lazy")
    if lifecycle not in LIFECYCLES:
        raise ConfigError(f'{where}: "lifecycle" must be one of {", ".join(LIFECYCLES)} (got {lifecycle!r})')
    timeout = entry.get("timeout")
    if timeout is None and entry.get("requestTimeoutMs") is not None:
        timeout = (
            entry["requestTimeoutMs"] / 1000 if isinstance(entry["requestTimeoutMs"], int | float) else "x"
        )
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError(f'{where}: "timeout" must be a positive number of seconds')
    kind = str(entry.get("type") or entry.get("transport") or ("stdio" if command else "http")).lower()
    kind = {"streamable-http": "http", "streamablehttp": "http", "streamable_http": "http"}.get(kind, kind)
    if kind not in ("stdio", "http", "sse"):
        raise ConfigError(f'{where}: "type" must be stdio, http or sse (got {kind!r})')
    enabled = entry.get("enabled", not entry.get("disabled", False))
    direct = entry.get("direct", entry.get("directTools", False))
    headers = _strings(path, line, name, "headers", entry.get("headers"))
    oauth = _auth(where, entry, headers)
    return ServerConfig(
        name=name,
        source=path,
        command=expand(command) if isinstance(command, str) else None,
        args=tuple(expand(str(a)) for a in args),
        env=_strings(path, line, name, "env", entry.get("env")),
        cwd=expand(cwd) if cwd else None,
        url=expand(url) if isinstance(url, str) else None,
        headers=headers,
        transport="stdio" if command else kind,
        enabled=bool(enabled),
        lifecycle=str(lifecycle),
        timeout=float(timeout),
        direct=bool(direct),
        oauth=oauth,
    )


def _auth(where: str, entry: dict[str, Any], headers: dict[str, str]) -> OAuthSettings | None:
    """The server's OAuth settings (None when it authenticates otherwise); a bearer token goes to ``headers``."""
    auth = entry.get("auth")
    token_env = entry.get("bearerTokenEnv", entry.get("bearer_token_env_var"))
    if auth == "bearer" or entry.get("bearerToken") is not None or token_env is not None:
        token = entry.get("bearerToken")
        if token is None and isinstance(token_env, str):
            token = os.environ.get(token_env)
            if not token:
                raise ConfigError(
                    f"{where}: the environment variable {token_env} (bearerTokenEnv) is not set"
                )
        if not isinstance(token, str) or not token:
            raise ConfigError(f'{where}: "auth": "bearer" needs "bearerToken" or "bearerTokenEnv"')
        headers["Authorization"] = f"Bearer {expand(token)}"
        return None
    if auth in (False, "none") or any(k.lower() == "authorization" for k in headers):
        return None
    if auth not in (None, True, "oauth"):
        raise ConfigError(f'{where}: "auth" must be "oauth", "bearer" or "none" (got {auth!r})')
    raw = entry.get("oauth") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f'{where}: "oauth" must be an object')
    client_id, secret = raw.get("clientId", ""), raw.get("clientSecret", "")
    if not isinstance(client_id, str) or not isinstance(secret, str):
        raise ConfigError(f'{where}: "oauth.clientId" and "oauth.clientSecret" must be strings')
    port, route = raw.get("callbackPort", 0), "/callback"
    redirect = raw.get("redirectUri")
    if isinstance(redirect, str) and redirect:
        parts = urllib.parse.urlsplit(expand(redirect))
        if (
            parts.scheme != "http"
            or parts.hostname not in ("127.0.0.1", "localhost", "::1")
            or not parts.port
        ):
            raise ConfigError(f'{where}: "oauth.redirectUri" must be a loopback http:// address with a port')
        port, route = parts.port, parts.path or "/callback"
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65536:
        raise ConfigError(f'{where}: "oauth.callbackPort" must be a port number')
    scopes = raw.get("scopes", [])
    if isinstance(scopes, str):
        scopes = scopes.split()
    if not isinstance(scopes, list) or not all(isinstance(one, str) for one in scopes):
        raise ConfigError(f'{where}: "oauth.scopes" must be a list of strings')
    scope = " ".join(word for one in scopes for word in expand(one).split())
    return OAuthSettings(
        client_id=expand(client_id), client_secret=expand(secret), port=port, path=route, scope=scope
    )


def load_config(cwd: str | Path, trusted: bool) -> McpConfig:
    """Read every config file that exists; a broken file is reported in ``errors`` and skipped."""
    config = McpConfig()
    for path in config_paths(cwd, trusted):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            config.errors.append(f"{path}:1: cannot be read: {exc.strerror or exc}")
            continue
        try:
            config.servers.update(parse_file(path, text))
        except ConfigError as exc:
            config.errors.append(str(exc))
            continue
        config.files.append(path)
    return config


def _indent_of(text: str) -> int | str | None:
    """The indentation the file uses (spaces count or a tab), or None for a one-line file."""
    match = re.search(r"\n([ \t]+)\S", text)
    if match is None:
        return None
    found = match.group(1)
    return "\t" if found.startswith("\t") else len(found)


def _flag_span(text: str, name: str) -> tuple[int, int, int] | None:
    """In ``text``: where server ``name``'s object opens, and the span of its ``enabled``/``disabled`` pair.

    Returns ``(object start, pair start, pair end)`` (the pair span empty when there is no such key), or
    None when the server is not found. A small scanner: strings are skipped whole, depth is counted.
    """
    depth, i, key, path = 0, 0, "", [""] * 8
    opened, pair_start = -1, -1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            token = decode_json(text[i : end + 1])
            after = text[end + 1 :].lstrip()
            if after.startswith(":"):
                key = token
                if opened >= 0 and depth == 3 and key in ("enabled", "disabled"):
                    pair_start = i
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
            if depth < len(path):
                path[depth] = key
            if ch == "{" and depth == 3 and path[2] in ("mcpServers", "servers") and key == name:
                opened = i
            key = ""
        elif ch in "}]":
            if opened >= 0 and depth == 3:
                return opened, i, i
            depth -= 1
        elif pair_start >= 0 and ch in ",}" and depth == 3:
            return opened, pair_start, i
        elif pair_start >= 0 and ch in "tf" and text.startswith(("true", "false"), i):
            stop = i + (4 if text.startswith("true", i) else 5)
            return opened, pair_start, stop
        i += 1
    return None


def _edited_in_place(text: str, name: str, enabled: bool) -> str | None:
    """``text`` with only server ``name``'s flag written (or added first in its object); None if unsure."""
    try:
        found = _flag_span(text, name)
    except (IndexError, ValueError):
        return None
    if found is None:
        return None
    opened, start, end = found
    pair = f'"enabled": {"true" if enabled else "false"}'
    if start < end:
        return text[:start] + pair + text[end:]
    inside = text[opened + 1 :]
    gap = inside[: len(inside) - len(inside.lstrip())]
    if inside.lstrip().startswith("}"):
        return text[: opened + 1] + pair + text[opened + 1 :]
    return text[: opened + 1] + gap + pair + "," + text[opened + 1 :]


def save_enabled(path: Path, name: str, enabled: bool) -> None:
    """Write server ``name``'s ``enabled`` flag back into ``path``, keeping everything else in the file.

    Only the flag's text changes (a missing one is added first in the server's object), so the rest of
    the file stays byte for byte; should that edit not give the expected JSON, the file is written again
    from its parsed content with its indentation and key order. A ``disabled`` key (Claude Code's
    spelling) is replaced by ``enabled``. The file is replaced atomically.

    Raises:
        ConfigError: the file cannot be read or written, is no longer valid, or no longer lists ``name``.
    """
    from pi_tui.util.dir_lock import directory_lock  # writers only: off start-up

    try:
        # Another pi-tui toggling a server of the same file waits, so neither's change is lost.
        with directory_lock(path.parent):
            _save_enabled(path, name, enabled)
    except OSError as exc:
        raise ConfigError(f"{path}:1: cannot be written: {exc.strerror or exc}") from None


def _save_enabled(path: Path, name: str, enabled: bool) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}:1: cannot be read: {exc.strerror or exc}") from None
    data = _decode(path, text)
    _servers_in(path, text, data)  # the same checks as loading: never rewrite a file pi-tui could not read
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict) or not isinstance(servers.get(name), dict):
        raise ConfigError(f'{path}:1: server "{name}" is no longer in this file')
    entry = servers[name]
    if "disabled" in entry:
        keys = list(entry)
        entry = {("enabled" if k == "disabled" else k): (enabled if k == "disabled" else v)
                 for k, v in zip(keys, entry.values(), strict=True)}  # fmt: skip
        servers[name] = entry
    entry["enabled"] = enabled
    out = _edited_in_place(text, name, enabled)
    if out is None or decode_json(out.removeprefix("\ufeff")) != data:
        out = json.dumps(data, indent=_indent_of(text), ensure_ascii=False)
        out += "\n" if text.endswith("\n") else ""
    from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

    try:
        # Atomic and keeping the file's mode (a 0600 file, which may hold tokens, stays 0600) and links.
        replace_file_bytes(path, out.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}:1: cannot be written: {exc.strerror or exc}") from None
