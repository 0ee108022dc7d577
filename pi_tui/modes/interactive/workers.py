"""Starting a worker from a coroutine function rather than from a coroutine.

``run_worker(self.job())`` makes the coroutine at once. A worker cancelled before its first step (the app
closing just after it was started) never runs it, and Python warns "coroutine ... was never awaited"
when the coroutine is collected: on the terminal, or as an error in whatever test runs then. Given the
function, Textual makes the coroutine only when the worker runs.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine

from textual.dom import DOMNode
from textual.worker import Worker

__all__ = ["run_later"]


def run_later(
    node: DOMNode,
    job: Callable[[], Coroutine[None, None, None]],
    *,
    group: str = "default",
    exit_on_error: bool = True,
) -> Worker[None]:
    """Run ``job()`` in a worker of ``node``, calling it only once the worker starts.

    Args:
        node: the widget, screen or app the worker belongs to (it is cancelled with it).
        job: a coroutine function taking no arguments (`functools.partial` binds them).
        group: the worker group.
        exit_on_error: whether the app exits when the job raises.

    Returns:
        The worker.
    """
    # The worker keeps what it was given for as long as it lives, and it lives in a cycle (its task's
    # context names it as the active worker) until a full collection: the job is handed over once
    # called, so what the job holds (a window's widgets) goes with the coroutine once it is done.
    waiting = [job]

    async def run() -> None:
        await waiting.pop()()

    return node.run_worker(run, group=group, exit_on_error=exit_on_error)
