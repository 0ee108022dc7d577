"""Work done ahead for the first ``/tree``, ``/context`` and ``/resume``, shared with the screens that
need it, so a first open costs what a later one does, or at most what is left of its own work.

Each screen keeps what it computed for the next open (`tree_rows` keeps the rows per session, the
session keeps each message's token count, the listing keeps the rows of session files by size and
mtime). Computing that for a 20k-entry session or a folder of 1,000 sessions takes ~0.1–0.2 s per
screen. `ScreenPreparation` holds that work as named steps, each cut into small pieces (a few
milliseconds each): pure Python over data already loaded or read from disk, with no Textual calls, run
in a worker thread one piece at a time.

- Once a session is shown, the app starts the steps in the background (`ScreenPreparation.start`),
  pausing between steps while an answer is being made. A long resumed session's messages are counted
  by the start-up thread before it is shown (`ScreenPreparation.run_now`): that step is done by then.
- A screen being opened asks for its own step (`ScreenPreparation.need`): done, it returns at once;
  running, the open waits for the rest of it; queued behind another step, that step stops at its next
  piece and the screen's step goes first. A step is never done twice.
- While the editor holds the start of one of those commands (typed during the load, or being typed),
  its step goes first in the background (`ScreenPreparation.prefer`, `step_for_command`): a first open
  on Enter then finds it done, or under way. The other steps wait meanwhile, and until the command sent
  has drawn its screen (the app holds them: `ScreenPreparation.hold`).

Every step is only an aid: a step that failed, or work a later change made stale (a new entry, another
session), is computed by the screen itself, as it would have been anyway.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from pi_tui.util.collector import collector_paused

from ..handoff import quick_handoff

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from pi_tui.runtime.agent_session import AgentSession

__all__ = [
    "SCREEN_STEPS",
    "STEPS",
    "ScreenPreparation",
    "Step",
    "forget_preparation",
    "preparation_for",
    "push_prepared",
    "run_in_daemon_thread",
    "step_for_command",
]

log = logging.getLogger(__name__)

_Result = TypeVar("_Result")

Step = Callable[[], Iterator[object]]
"""A step: called once, it returns an iterator whose every ``next`` does one small piece of the work."""

STEPS = ("imports", "tree_index", "recent", "tokens", "tree", "tree_texts", "listing")
"""The steps of `preparation_for`, in the order the background runs them: what the three screens' first
frames start from, cheapest first (the modules, ``/tree``'s children index, ``/resume``'s first page,
the messages' token counts: ``/context`` shows no figure without them), then the rest of their work."""

COMMAND_STEPS = {"context": "tokens", "tree": "tree_index", "resume": "recent"}
"""The step whose result a command's screen draws its first frame from."""

SCREEN_STEPS = {
    "tokens": ("tokens", "imports"),
    "tree_index": ("tree_index", "imports", "tree", "tree_texts"),
    "recent": ("recent", "imports", "listing"),
}
"""A screen's steps, by the one its first frame draws from (`COMMAND_STEPS`), in the order they run when
its command is typed (`ScreenPreparation.prefer`): that one, the modules, then the rest of its work."""

FREEZE_STEP_ABOVE = 10_000
"""A step (or the part of it run at once) that left more new objects than this has them frozen: what
the screens keep lives as long as the session, and no later collection need walk it."""

CHUNK = 1000
"""Messages counted or entries described per piece (~3–5 ms)."""


async def run_in_daemon_thread(work: Callable[[], object]) -> None:
    """Run ``work`` in a daemon thread and wait for it: work that is only an aid must not hold up
    quitting (``asyncio.to_thread``'s pool is joined at exit)."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if finished.done():
            return
        if error is None:
            finished.set_result(None)
        else:
            finished.set_exception(error)

    def run() -> None:
        error: BaseException | None = None
        try:
            with quick_handoff():  # the keys and frames of the UI thread go first
                work()
        except Exception as exc:
            error = exc
        try:
            loop.call_soon_threadsafe(settle, error)
        except RuntimeError:  # the app has closed its loop meanwhile: nobody waits any more
            pass

    threading.Thread(target=run, name="pi-tui-prepare", daemon=True).start()
    await finished


class ScreenPreparation:
    """Named steps of work ahead, each run at most once, one at a time, in a worker thread.

    Args:
        steps: Step name → the step (see `Step`); the background runs them in this order.
    """

    def __init__(self, steps: dict[str, Step]) -> None:
        self._steps = dict(steps)
        self._started: dict[str, Iterator[object]] = {}
        self._finished: set[str] = set()  # written by the worker thread, read by the loop
        self._events: dict[str, asyncio.Event] = {name: asyncio.Event() for name in steps}
        self._wanted: list[str] = []  # steps a screen waits for, first asked first
        self._preferred: str | None = None  # the step of the command being typed (see `prefer`)
        self._background = False
        self._wait_idle: Callable[[], Awaitable[None]] | None = None
        self._keys_pending: Callable[[], float] = _no_keys
        self._driver: asyncio.Task[None] | None = None
        self._stopped = False
        self._holds = 0  # screens opening (`hold`)
        self._typed_holds = 0  # commands typed or on their way to a screen (`hold(typed=True)`)
        self._wake = asyncio.Event()  # a screen asked for a step, or released its hold
        self.pieces: dict[str, int] = {name: 0 for name in steps}
        """Pieces run per step so far (what a test or a benchmark can look at)."""

    def done(self, name: str) -> bool:
        """Whether step ``name`` has finished (or failed: then the screen computes it itself)."""
        return name in self._finished

    def all_done(self) -> bool:
        """Whether every step has finished."""
        return self._finished.issuperset(self._steps)

    def run_now(self, name: str) -> None:
        """Run step ``name`` whole in the calling thread, before `start` (the start-up thread counts a
        long session's messages while it loads): the background and the screens then find it done.
        An unknown step, or one started already, is left alone."""
        if name not in self._steps or name in self._started or self.done(name):
            return
        pieces = self._started[name] = self._steps[name]()
        for _ in pieces:
            self.pieces[name] += 1
        self.pieces[name] += 1
        self._finished.add(name)

    def start(
        self,
        wait_idle: Callable[[], Awaitable[None]] | None = None,
        keys_pending: Callable[[], float] | None = None,
    ) -> None:
        """Run every step in the background, in order.

        Args:
            wait_idle: awaited before each piece of work nobody waits for (the app waits there while an
                answer is being made).
            keys_pending: how many more seconds the user's keys count as coming (≤ 0: they paused).
                Work nobody waits for stops at its next piece while they come and goes on once they
                pause: a key handled beside it waited for the interpreter (20-40 ms of a keystroke's
                33). The steps of the command being typed go on (its screen needs them)."""
        for name in self._finished:  # run before (`run_now`): whoever waits for them goes on
            self._events[name].set()
        self._background = True
        self._wait_idle = wait_idle
        if keys_pending is not None:
            self._keys_pending = keys_pending
        self._ensure_driver()

    async def need(self, name: str) -> None:
        """Return once step ``name`` has run: at once when it has, else after running it (or the rest
        of it) ahead of any other step. Unknown names return at once."""
        if name not in self._steps or self.done(name):
            return
        if name not in self._wanted:
            self._wanted.append(name)
        self._wake.set()
        self._ensure_driver()
        await self._events[name].wait()

    @property
    def preferred(self) -> str | None:
        """The step of the command being typed (`prefer`), if any."""
        return self._preferred

    def prefer(self, name: str | None) -> None:
        """Run step ``name`` before the other background steps (the user is typing the command that
        needs it), then the rest of its screen's steps (`SCREEN_STEPS`), or none first again (None).
        Nobody waits for them yet: it changes the order, a step a screen waits for still goes before
        them, and they go on while a screen opens (`hold`: most likely their own). Unknown names are
        ignored."""
        name = name if name in self._steps else None
        if name == self._preferred:
            return
        self._preferred = name
        if self._first_preferred() is not None:
            self._wake.set()  # a step running now stops at its next piece

    def stop(self) -> None:
        """Run no piece after the current one, and let whoever waits go (a screen then computes what
        it needs itself): the work is for a session file no longer open."""
        self._stopped = True
        self._wake.set()
        for event in self._events.values():
            event.set()

    def hold(self, *, typed: bool = False) -> Callable[[], None]:
        """Pause the work nobody waits for (at its next piece); call the returned function to let it go on.

        A screen opening holds it until its first frame is drawn (the work would take the interpreter
        from its first paint): only the first step of the typed command (`prefer`) goes on. With
        ``typed``, a command is in the editor or on its way to its screen: the steps of that command's
        screen (`SCREEN_STEPS`) go on, the other screens' wait."""
        if typed:
            self._typed_holds += 1
        else:
            self._holds += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            if typed:
                self._typed_holds -= 1
            else:
                self._holds -= 1
            self._wake.set()

        return release

    @property
    def held(self) -> bool:
        """Whether the work nobody waits for is paused (`hold`)."""
        return self._holds > 0 or self._typed_holds > 0

    async def wait_unheld(self) -> None:
        """Return once no screen is opening (see `hold`)."""
        while self.held:
            self._wake.clear()
            await self._wake.wait()

    async def wait(self) -> None:
        """Return once every step has finished (after `start`)."""
        for name in self._steps:
            await self._events[name].wait()

    # --- the driver -----------------------------------------------------------------------------------

    def _ensure_driver(self) -> None:
        if self._driver is None or self._driver.done():
            self._driver = asyncio.get_running_loop().create_task(self._drive())

    def _first_wanted(self) -> str | None:
        return next((name for name in self._wanted if not self.done(name)), None)

    def _first_preferred(self) -> str | None:
        """The next step of the typed command's screen still to run (None: none, or all done)."""
        preferred = self._preferred
        if preferred is None:
            return None
        group = SCREEN_STEPS.get(preferred, (preferred,))
        return next((name for name in group if name in self._steps and not self.done(name)), None)

    def _may_run(self, name: str) -> bool:
        """Whether step ``name``, which nobody waits for, may run now (see `hold`)."""
        preferred = self._preferred
        if self._holds:
            return name == preferred
        if self._typed_holds:
            return preferred is not None and name in SCREEN_STEPS.get(preferred, (preferred,))
        return True

    def _paused(self) -> bool:
        """Whether the next step in the background's order must wait for a hold's release."""
        name = self._next()
        return name is not None and not self._may_run(name)

    def _next(self) -> str | None:
        if self._stopped:
            return None
        wanted = self._first_wanted()
        if wanted is not None or not self._background:
            return wanted
        preferred = self._first_preferred()
        if preferred is not None:
            return preferred
        return next((name for name in self._steps if not self.done(name)), None)

    async def _free(self) -> bool:
        """Wait until work nobody waits for may go on: no screen is opening and the app is idle.
        False as soon as a screen asks for a step (that goes first)."""
        while self._first_wanted() is None and not self._stopped:
            self._wake.clear()
            if self._paused():
                await self._wake.wait()
                continue
            keys_left = self._keys_pending()
            if keys_left > 0 and self._next() != self._first_preferred():
                try:  # the keys go first; a screen asking for a step (wake) goes first too
                    await asyncio.wait_for(self._wake.wait(), keys_left)
                except TimeoutError:
                    pass
                continue
            if self._wait_idle is None:
                return True
            idle = asyncio.ensure_future(self._wait_idle())
            woken = asyncio.ensure_future(self._wake.wait())
            await asyncio.wait((idle, woken), return_when=asyncio.FIRST_COMPLETED)
            woken.cancel()
            if not idle.done():
                idle.cancel()
                continue
            if not self._paused() and self._first_wanted() is None and not self._stopped:
                return True
        return False

    async def _drive(self) -> None:
        while (name := self._next()) is not None:
            if name != self._first_wanted():
                if not await self._free():
                    continue  # a screen asked for a step meanwhile
                # What goes first may have changed meanwhile (the command being typed).
                if (name := self._next()) is None:
                    break
            try:
                await run_in_daemon_thread(functools.partial(self._advance, name))
            except Exception:
                log.debug("preparing a screen failed", exc_info=True)
                self._finished.add(name)
            for finished in [n for n in self._steps if self.done(n)]:
                self._events[finished].set()
                if finished in self._wanted:
                    self._wanted.remove(finished)

    def _advance(self, name: str) -> None:
        """In the worker thread: run pieces of ``name`` until it ends, or until a screen waits for
        another step (it goes first; this one goes on from where it stopped later).

        The collector is off meanwhile: a step makes tens of thousands of objects that live with the
        session, and every full collection it set off walked them all again (50-100 ms, on the UI
        thread's keys as much as on this thread)."""
        with collector_paused(freeze_above=FREEZE_STEP_ABOVE):
            self._run_pieces(name)

    def _run_pieces(self, name: str) -> None:
        pieces = self._started.get(name)
        if pieces is None:
            pieces = self._started[name] = self._steps[name]()
        for _ in pieces:
            self.pieces[name] += 1
            if self._stopped:
                return
            first = self._first_wanted()
            if first != name and (first is not None or not self._may_run(name)):
                return
            if first is None and self._first_preferred() not in (None, name):
                return  # the step of the command being typed goes first
            if first is None and self._first_preferred() != name and self._keys_pending() > 0:
                return  # the user's keys go first; this goes on once they pause
        self.pieces[name] += 1
        self._finished.add(name)


def _no_keys() -> float:
    return 0.0


# One preparation per session object, for the app (which starts it) and the screens (which need it).
_PREPARATIONS: weakref.WeakKeyDictionary[AgentSession, ScreenPreparation] = weakref.WeakKeyDictionary()


def preparation_for(session: AgentSession) -> ScreenPreparation:
    """The session's `ScreenPreparation` (made on first use, not started: see `ScreenPreparation.start`)."""
    found = _PREPARATIONS.get(session)
    if found is None:
        found = _PREPARATIONS[session] = ScreenPreparation(_steps_of(session))
    return found


async def push_prepared(
    app: App[_Result], session: AgentSession, step: str, screen: Callable[[], Screen[None]]
) -> None:
    """Push ``screen()`` once step ``step`` of the session's preparation has run; the work ahead of
    the other screens waits until the screen has drawn its first frame."""
    preparation = preparation_for(session)
    release = preparation.hold()
    try:
        await preparation.need(step)
        await app.push_screen(screen())
    finally:
        app.call_after_refresh(release)


def step_for_command(text: str) -> str | None:
    """The step of the screen that the editor's ``text`` is on the way to open: the first of
    `COMMAND_STEPS` whose command starts with the word typed after ``/`` (``/co`` → ``tokens``), or
    None for a prompt, a bare ``/`` or another command."""
    if not text.startswith("/"):
        return None
    word = text[1:].split(maxsplit=1)[0] if text[1:].strip() else ""
    if not word or text[1:2].isspace():
        return None
    return next((step for command, step in COMMAND_STEPS.items() if command.startswith(word)), None)


def forget_preparation(session: AgentSession) -> None:
    """Stop and drop the session's preparation (its work is stale after a switch to another session
    file); the next `preparation_for` makes a new one."""
    old = _PREPARATIONS.pop(session, None)
    if old is not None:
        old.stop()


def _steps_of(session: AgentSession) -> dict[str, Step]:
    def imports() -> Iterator[object]:
        """The screens' modules and the Textual widgets they use (a first open imported them)."""
        from textual.widgets import Input, Tree  # noqa: F401

        yield None
        from . import context_screen  # noqa: F401

        yield None
        from . import tree_screen  # noqa: F401

        yield None
        from . import resume_screen  # noqa: F401

    def tree_index() -> Iterator[object]:
        from .tree_rows import prepare_children

        return prepare_children(session.session_manager)

    def recent() -> Iterator[object]:
        """Read the rows of the folder's sessions modified last (``/resume``'s first page, which it
        then reads again from what this keeps: their files are not opened again)."""
        from pi_tui.session.listing import list_recent_sessions

        from .resume_screen import FIRST_LOOK

        list_recent_sessions(session.cwd, session.new_session_dir(), FIRST_LOOK)
        yield None

    def tokens() -> Iterator[object]:
        return session.count_context_tokens_in_steps(CHUNK)

    def tree() -> Iterator[object]:
        from .tree_rows import prepare_rows

        return prepare_rows(session.session_manager)

    def tree_texts() -> Iterator[object]:
        from .tree_rows import describe_entries

        return describe_entries(session.session_manager, CHUNK)

    def listing() -> Iterator[object]:
        from pi_tui.session.listing import list_sessions_in_steps

        return list_sessions_in_steps(session.cwd, session.new_session_dir())

    return {
        "imports": imports,
        "tree_index": tree_index,
        "recent": recent,
        "tokens": tokens,
        "tree": tree,
        "tree_texts": tree_texts,
        "listing": listing,
    }
