"""Typed access to command fields: a wrong type is an error response that names the field."""

from __future__ import annotations

from typing import Any, Final, TypeAlias

__all__ = [
    "BUSY_ERROR",
    "DEFERRED",
    "NO_DATA",
    "Command",
    "Marker",
    "Reply",
    "RpcError",
    "req_str",
    "opt_str",
    "req_bool",
    "opt_bool",
]

Command: TypeAlias = dict[str, object]
"""A command as the client sent it: a JSON object, each field read through the checks below."""


class Marker:
    """A handler's answer that is no response data: `NO_DATA` or `DEFERRED`."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


NO_DATA: Final = Marker("NO_DATA")
"""A response without ``data``."""
DEFERRED: Final = Marker("DEFERRED")
"""The handler sends its response itself, later."""

Reply: TypeAlias = dict[str, Any] | list[Any] | str | int | float | bool | None | Marker
"""What a handler answers: the response's ``data`` (JSON), or a `Marker`."""

BUSY_ERROR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)
"""pi 0.87.1's answer to a ``prompt`` without ``streamingBehavior`` while the agent works."""


class RpcError(Exception):
    """A command failed; the message is the response's ``error``."""


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}.get(
        type(value), "an object"
    )


def req_str(command: Command, key: str) -> str:
    value = command.get(key)
    if not isinstance(value, str):
        raise RpcError(f'"{key}" must be a string, got {_kind(value)}')
    return value


def opt_str(command: Command, key: str) -> str | None:
    return None if command.get(key) is None else req_str(command, key)


def req_bool(command: Command, key: str) -> bool:
    value = command.get(key)
    if not isinstance(value, bool):
        raise RpcError(f'"{key}" must be true or false, got {_kind(value)}')
    return value


def opt_bool(command: Command, key: str) -> bool | None:
    return None if command.get(key) is None else req_bool(command, key)
