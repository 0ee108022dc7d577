"""Session totals count only the entries appended since the last call, and equal a count from scratch."""

from __future__ import annotations

from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.runtime.factory import create_session
from pi_tui.runtime.session_stats import StatsCounter
from pi_tui.testing import FakeLLM, Reply, text

ANTHROPIC = "fake-anthropic/claude-fake"


async def test_totals_count_only_appended_entries(fake: FakeLLM, tmp_path: Path) -> None:
    fake.responder = lambda _request: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    counter = StatsCounter()
    await session.prompt("first")
    await session.prompt("second")
    entries = session.session_manager.get_entries()
    first = counter.totals(session.session_manager, entries)
    assert counter.counted == len(entries)
    assert first.user_messages == 2 and first.assistant_messages == 2 and first.cache_write > 0

    assert counter.totals(session.session_manager, session.session_manager.get_entries()) == first
    assert counter.counted == len(entries)  # nothing appended: nothing counted again

    await session.prompt("third")
    grown = session.session_manager.get_entries()
    third = counter.totals(session.session_manager, grown)
    assert counter.counted == len(grown)  # only the appended entries
    assert third == StatsCounter().totals(session.session_manager, grown)
    assert third.user_messages == 3 and third.cache_write > first.cache_write
    assert session.stats() == third

    # another session's entries (or a list that no longer starts with the counted ones) start over
    assert counter.totals(object(), grown[:2]) == StatsCounter().totals(object(), grown[:2])
    await session.close()
    assert fake.violations == []


async def test_the_cache_hit_rate_is_the_latest_answers_as_pi_shows_it(fake: FakeLLM, tmp_path: Path) -> None:
    """pi's footer 'CH' is the newest assistant message's cacheRead / (input + cacheRead + cacheWrite),
    not a rate over the whole session's totals."""
    fake.responder = lambda _request: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    await session.prompt("first")
    first = session.stats()
    assert first.latest_cache_hit == 0.0  # the first request only writes the cache
    await session.prompt("second")
    stats = session.stats()
    last = session.last_assistant_message()
    assert last is not None
    u = last.usage
    assert u.cache_read > 0
    assert stats.latest_cache_hit == 100 * u.cache_read / (u.input + u.cache_read + u.cache_write)
    totals_rate = 100 * stats.cache_read / (stats.input + stats.cache_read + stats.cache_write)
    assert abs(stats.latest_cache_hit - totals_rate) > 1  # the two differ here: the test tells them apart
    assert StatsCounter().totals(session.session_manager, session.session_manager.get_entries()) == stats
    await session.close()
