"""The shared AWS files: ``~/.aws/credentials`` and ``~/.aws/config`` (``AWS_SHARED_CREDENTIALS_FILE``
and ``AWS_CONFIG_FILE`` move them).

A profile is the credentials file's ``[name]`` merged over the config file's ``[profile name]``
(``[default]`` or ``[profile default]`` for the default profile): a setting in the credentials file
wins, as the AWS SDK merges them. ``[sso-session NAME]`` sections of the config file hold SSO sessions.
"""

from __future__ import annotations

import configparser
from collections.abc import Mapping
from pathlib import Path

__all__ = ["AwsFiles", "AwsSetupError"]


class AwsSetupError(Exception):
    """Bedrock cannot be reached with what is configured; the message says what to set or run."""


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _read_ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise AwsSetupError(f"Cannot read the AWS file {path}: {exc}") from exc
    return parser


class AwsFiles:
    """The two files of one environment, read once."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.credentials_path = Path(
            _env(env, "AWS_SHARED_CREDENTIALS_FILE") or Path.home() / ".aws" / "credentials"
        ).expanduser()
        self.config_path = Path(_env(env, "AWS_CONFIG_FILE") or Path.home() / ".aws" / "config").expanduser()
        self._credentials: configparser.ConfigParser | None = None
        self._config: configparser.ConfigParser | None = None

    def _files(self) -> tuple[configparser.ConfigParser, configparser.ConfigParser]:
        if self._credentials is None or self._config is None:
            self._credentials = _read_ini(self.credentials_path)
            self._config = _read_ini(self.config_path)
        return self._credentials, self._config

    def where(self) -> str:
        """Both paths, for messages."""
        return f"{self.credentials_path} or {self.config_path}"

    def profile(self, name: str) -> dict[str, str] | None:
        """The profile's settings (values stripped), or None when neither file has it.

        Raises:
            AwsSetupError: a file exists but cannot be read or parsed.
        """
        credentials, config = self._files()
        merged: dict[str, str] = {}
        found = False
        for section in (f"profile {name}", name) if name == "default" else (f"profile {name}",):
            if config.has_section(section):
                merged.update(config.items(section))
                found = True
                break
        if credentials.has_section(name):
            merged.update(credentials.items(name))
            found = True
        return {key: value.strip() for key, value in merged.items()} if found else None

    def sso_session(self, name: str) -> dict[str, str] | None:
        """The ``[sso-session name]`` section of the config file, or None."""
        _, config = self._files()
        section = f"sso-session {name}"
        if not config.has_section(section):
            return None
        return {key: value.strip() for key, value in config.items(section)}
