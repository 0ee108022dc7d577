"""Opening ``/context`` again counts only the messages that are new since the last report: the session
keeps each message's token count, and the numbers are the same as counting afresh."""

from __future__ import annotations

from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.context.report import message_tokens
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

ANTHROPIC = "fake-anthropic/claude-fake"


async def test_reopening_counts_only_new_messages(fake: FakeLLM, tmp_path: Path) -> None:
    fake.responder = lambda _request: Reply([text("ok " * 50)])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    for n in range(3):
        await session.prompt(f"question {n}: " + "words " * 40)
    first = await session.context_report()
    cache = first.token_cache
    assert len(first.cached) + len(first.uncached) == 6
    assert cache.counted == 6
    first.projection()  # the projection sizes its blocks from the same counts
    assert cache.counted == 6

    second = await session.context_report()
    assert second.token_cache is cache
    assert cache.counted == 6  # nothing new: nothing tokenised
    rows = [(r.index, r.tokens) for r in (*second.cached, *second.uncached)]
    assert rows == [(r.index, r.tokens) for r in (*first.cached, *first.uncached)]
    assert rows == [(r.index, message_tokens(r.message)) for r in (*second.cached, *second.uncached)]
    assert second.projection().total == first.projection().total
    assert second.cached[0] is first.cached[0]  # the rows themselves are kept, not built again

    await session.prompt("one more question")
    third = await session.context_report()
    assert len(third.cached) + len(third.uncached) == 8
    assert cache.counted == 8  # the new prompt and its answer only
    assert [(r.index, r.tokens) for r in (*third.cached, *third.uncached)] == [
        (i, message_tokens(m)) for i, m in enumerate((*third.envelope.cached, *third.envelope.uncached))
    ]
    await session.close()
    assert fake.violations == []
