from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widget import Widget
from textual.worker import WorkerCancelled, WorkerState

from pi_tui.ai.providers.faux import FauxCall, FauxResponse, FauxScript, faux_reply
from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp
from pi_tui.runtime.factory import create_session


def make_app(
    cwd: Path,
    agent_dir: Path,
    script: FauxScript | None = None,
    argv: list[str] | None = None,
    *,
    hold: threading.Event | None = None,
    **kwargs: Any,
) -> PiApp:
    """A PiApp on the faux provider; ``script`` answers every request (default: the faux demo).

    With ``hold``, the session is created (in the app's start-up thread) only once the test sets it: what
    the test does before is done while the session loads, however fast the loading is.
    """
    args = ["--provider", "faux", *(argv or [])]

    def create(trust: bool | None) -> Any:
        if hold is not None and not hold.wait(timeout=30):
            raise TimeoutError("the test never let the session load (make_app's hold was not set)")
        parsed = parse_args(args)
        if trust:
            parsed.trust_project = True
        return create_session(parsed, cwd, stream_fn=script.stream if script is not None else None)

    return PiApp(create, cwd=cwd, agent_dir=agent_dir, **kwargs)


async def until(pilot: Any, predicate: Callable[[], Any], timeout: float = 30.0) -> None:
    """Let the app run until ``predicate()`` holds (fails the test after ``timeout`` seconds).

    The timeout only bounds a failure: a passing test waits for the state, however long the machine
    takes. 10 s was not enough on a machine at load 12, where an app with the MCP extension took longer
    than that to load its session."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not reached in time; {app_state(pilot.app)}")
        await pilot.pause(0.01)


async def workers_done(app: App[Any]) -> None:
    """Wait until none of the app's workers runs: the work a key or a command started is done.

    Textual's ``app.workers.wait_for_complete()`` raises ``WorkerCancelled`` when a worker it waits for
    was replaced by a newer one of its exclusive group (a search typed on, rows read again after a
    resize), which happens or not depending on how fast the machine is. Here a replaced worker is no
    error, only the newer one is waited for (as is any worker the finished ones started); a worker that
    failed still fails the test.
    """
    while True:
        running = [worker for worker in app.workers if worker.state == WorkerState.RUNNING]
        if not running:
            return
        outcomes = await asyncio.gather(*(worker.wait() for worker in running), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and not isinstance(outcome, WorkerCancelled):
                raise outcome


def card_lines(block: Widget) -> list[str]:
    """The lines a chat block draws (before they are wrapped to its width), without their styles."""
    return str(block.render()).split("\n")


def app_state(app: Any) -> str:
    """What a failed wait reports: busy/streaming flags, queued messages and the newest chat items."""
    session = getattr(app, "session", None)
    agent = getattr(session, "agent", None)
    items = [repr(item)[:200] for item in getattr(getattr(app, "chat", None), "items", [])[-6:]]
    return (
        f"busy={getattr(app, '_busy', None)} streaming={getattr(session, 'is_streaming', None)} "
        f"steering={len(getattr(agent, 'steering_queue', ()))} follow_up={len(getattr(agent, 'follow_up_queue', ()))} "
        f"screen={type(app.screen).__name__} newest chat items: {items}"
    )


async def type_text(pilot: Any, text: str) -> None:
    keys = ["space" if ch == " " else ch for ch in text]
    await pilot.press(*keys)


async def submit(pilot: Any, app: PiApp, text: str) -> None:
    """Type ``text`` in the editor, close the completion menu it may have opened, and press Enter."""
    await type_text(pilot, text)
    app.menu.hide()
    await pilot.press("enter")


async def submit_and_wait(pilot: Any, app: PiApp, text: str) -> None:
    """`submit` ``text``, then wait until the app is idle with an empty editor: the prompt answered or
    the command done."""
    await submit(pilot, app, text)
    await pilot.pause()
    await until(pilot, lambda: not app._busy and not app.editor.text)
    await pilot.pause()


def gated(gate: asyncio.Event, response: FauxResponse) -> Callable[[FauxCall], Any]:
    """A script step that answers only once ``gate`` is set (the agent streams meanwhile)."""

    async def step(_call: FauxCall) -> FauxResponse:
        await gate.wait()
        return response

    return step


def last_user_text(script: FauxScript) -> str:
    request = script.requests[-1]
    for message in reversed(request.messages):
        if getattr(message, "role", None) == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return "".join(getattr(c, "text", "") for c in content)
    return ""


__all__ = ["faux_reply", "gated", "last_user_text", "make_app", "type_text", "until", "workers_done"]
