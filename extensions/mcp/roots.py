"""The roots a server asks for during its start-up, and the wait for them to be answered and applied."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_types import JSONRPCMessage

__all__ = ["ROOTS_WAIT", "RootsWatch"]

ROOTS_WAIT = 5.0  # seconds a first call waits for the roots a server asked for to be answered


class RootsWatch:
    """The roots a server asked for: whether they have been answered (the answer written to its stdin).

    A server that asks for the client's roots does so right after ``initialize``, before it answers
    ``tools/list`` (the reference filesystem server does). The protocol has no acknowledgement for
    *applying* them, and the reference server applies them asynchronously after our answer (it resolves
    and stats each root first), so a call sent at once may still see its command-line folders. What
    the client can do: hold the first call until the answer has gone out, then give the server a few
    turns of its event loop (``PINGS`` round trips) to finish; see ``settled``. The pings go out as soon
    as the answer has, while the listings are still on their way, not after them.
    """

    PINGS = 3  # each ~1 ms; measured: 15 of 20 first calls saw the old folders without, 4 of 30 with 3

    def __init__(self) -> None:
        self.asked = 0
        self._unanswered: set[object] = set()
        self._answered = asyncio.Event()
        self._decided = asyncio.Event()  # the server asked, or answered tools/list without asking

    @property
    def unanswered(self) -> int:
        """Roots requests received but not answered yet."""
        return len(self._unanswered)

    def received(self, message: JSONRPCMessage) -> None:
        """Every message from the server, before the session sees it (the stdio transport's hook)."""
        from mcp_types import JSONRPCRequest

        if isinstance(message, JSONRPCRequest) and message.method == "roots/list":
            self.note_asked(message.id)

    def note_asked(self, ident: object) -> None:
        """The server sent a roots request with id ``ident``."""
        self.asked += 1
        self._unanswered.add(ident)
        self._answered.clear()
        self._decided.set()

    def note_answered(self, ident: object) -> None:
        """The answer to roots request ``ident`` was written."""
        if ident in self._unanswered:
            self._unanswered.discard(ident)
            if not self._unanswered:
                self._answered.set()

    def sent(self, message: JSONRPCMessage) -> None:
        """Every message to the server, once written (the stdio transport's hook)."""
        from mcp_types import JSONRPCError, JSONRPCResponse

        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self.note_answered(message.id)

    async def settled(self, ping: Callable[[], Awaitable[object]], listed: Awaitable[object]) -> None:
        """Return once the roots the server asked for are answered (at most ``ROOTS_WAIT`` s) and it
        has answered ``PINGS`` pings since; once ``listed`` (the listings) is done if the server has not
        asked by then (a server that asks does so before it answers ``tools/list``)."""
        if not self.asked:
            asyncio.ensure_future(listed).add_done_callback(lambda _: self._decided.set())
            await self._decided.wait()
            if not self.asked:
                return
        if self._unanswered:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), ROOTS_WAIT)
        for _ in range(self.PINGS):
            await ping()
