"""The ``message`` hook for messages saved outside the agent loop .

An extension's message sent while the agent is idle and a ``!cmd`` with its output are appended to the
session without a turn, so the loop's `pi_tui.extensions.loop_hooks.LoopHooks.message` never sees them.
`message_outside_turn` runs the same chain on them, synchronously (their callers are synchronous), so a
masking extension such as ``secret_redactor`` masks them before they reach the session file.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from .events import Event
from .loop_hooks import message_replacement, run_without_suspending
from .registry import positional_arity

if TYPE_CHECKING:
    from pi_tui.ai.types import Message

    from .dispatch import Dispatch

__all__ = ["message_outside_turn"]


def message_outside_turn(dispatch: Dispatch, message: Message) -> Message:
    """Run the ``message`` handlers on ``message``; returns the (possibly replaced) message.

    Each handler must finish without awaiting (a plain ``def``, or an ``async def`` that never awaits):
    one that awaits is skipped and reported. A failing one is reported and its change dropped, as in
    the loop.
    """
    current = message
    for ext, handler in dispatch.handlers("message"):
        event = Event("message", message=current.model_copy(deep=True))
        try:
            raw = handler(*(event, dispatch.context_for(ext))[: positional_arity(handler)])
            if inspect.isawaitable(raw):
                raw = _finish_without_awaiting(raw)
            if raw is None:
                continue
            replacement = message_replacement(current, raw)
        except Exception as exc:
            dispatch.report_soon(ext, "message", exc)
            continue
        if replacement is not None:
            current = replacement
    return current


def _finish_without_awaiting(awaitable: Any) -> Any:
    """The result of a coroutine that returns without awaiting anything (see `run_without_suspending`)."""
    return run_without_suspending(
        awaitable,
        not_coroutine="message handlers must return a value or a coroutine, not another awaitable",
        awaited="this message handler awaited on a message saved outside a turn (an extension message sent "
        "while idle, or !cmd), so it was skipped; such handlers must finish without awaiting",
    )
