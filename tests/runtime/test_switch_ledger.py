"""Switching sessions starts the cache ledger afresh: the next session's first request is not compared
with the request of the session left behind."""

from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import ANTHROPIC, open_session


async def test_a_new_session_reports_no_cache_invalidation_for_the_one_it_left(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("first")]), Reply([text("second")]), Reply([text("fresh")])])
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("one")
        await session.prompt("two")
        assert session.engine.ledger.invalidations == []
        await session.new_session()
        await session.prompt("a fresh start")
        # Before, the old conversation's cached messages counted as "billed again in full" (the chat's
        # warning after /new, /resume or /fork), though the new request never sends them.
        assert session.engine.ledger.invalidations == []
        assert len(session.engine.ledger.requests) == 1
    assert len(fake.requests) == 3
