"""Typed access to command fields: a wrong type is an error response that names the field."""

from __future__ import annotations

from typing import Any

__all__ = ["BUSY_ERROR", "RpcError", "req_str", "opt_str", "req_bool", "opt_bool"]

BUSY_ERROR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)
"""pi 0.87.1's answer to a ``prompt`` without ``streamingBehavior`` while the agent works."""


class RpcError(Exception):
    """A command failed; the message is the response's ``error``."""


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}.get(
        type(value), "an object"
    )


def req_str(command: dict[str, Any], key: str) -> str:
    value = command.get(key)
    if not isinstance(value, str):
        raise RpcError(f'"{key}" must be a string, got {_kind(value)}')
    return value


def opt_str(command: dict[str, Any], key: str) -> str | None:
    return None if command.get(key) is None else req_str(command, key)


def req_bool(command: dict[str, Any], key: str) -> bool:
    value = command.get(key)
    if not isinstance(value, bool):
        raise RpcError(f'"{key}" must be true or false, got {_kind(value)}')
    return value


def opt_bool(command: dict[str, Any], key: str) -> bool | None:
    return None if command.get(key) is None else req_bool(command, key)
