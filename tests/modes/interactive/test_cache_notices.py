from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.ai.providers.faux import FauxResponse, FauxScript, faux_text
from pi_tui.ai.types import AssistantMessage, CompactionSummaryMessage, Usage, UserMessage
from pi_tui.context.ledger import Invalidation
from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.cache_notices import CACHE_TTL_MS, cache_miss_text, invalidation_text

from .helpers import make_app, type_text, until


def _answer(cache_read: int, input_: int, *, model: str = "m", at: int = 1_000_000) -> AssistantMessage:
    usage = Usage(input=input_, output=10, cache_read=cache_read)
    usage.cost.input = input_ * 3e-6
    usage.cost.cache_read = cache_read * 0.3e-6
    return AssistantMessage(provider="p", model=model, usage=usage, timestamp=at)


def test_a_large_miss_after_cached_turns_is_told_in_tokens_and_dollars() -> None:
    first = _answer(cache_read=60_000, input_=500)
    second = _answer(cache_read=0, input_=61_000, at=1_000_000 + 1000)
    text = cache_miss_text([UserMessage(content="a"), first, UserMessage(content="b")], second, 0.3)
    assert text == (
        "Cache miss: the provider had to read 60k tokens of earlier context again at the full price (~$0.16)."
    )


def test_why_a_miss_happened_is_told_when_it_is_known() -> None:
    first = _answer(cache_read=60_000, input_=500)
    switched = _answer(cache_read=0, input_=61_000, model="other", at=1_000_000 + 1000)
    assert "after the model switch" in (cache_miss_text([first], switched) or "")
    idle = _answer(cache_read=0, input_=61_000, at=1_000_000 + CACHE_TTL_MS + 120_000)
    assert "after 7 minutes idle" in (cache_miss_text([first], idle) or "")


def test_small_misses_first_turns_summaries_and_providers_without_caching_say_nothing() -> None:
    first = _answer(cache_read=60_000, input_=500)
    assert cache_miss_text([first], _answer(cache_read=59_500, input_=1500)) is None  # under the noise floor
    assert cache_miss_text([], _answer(cache_read=0, input_=61_000)) is None  # nothing before
    summary = CompactionSummaryMessage(summary="s", tokens_before=1)
    assert cache_miss_text([first, summary], _answer(cache_read=0, input_=61_000)) is None
    uncached = _answer(cache_read=0, input_=60_000)
    assert cache_miss_text([uncached], _answer(cache_read=0, input_=61_000)) is None


def test_invalidations_are_told_in_plain_words() -> None:
    undeclared = Invalidation(
        3, "messages", "prefix changed (no reason declared)", "messages[4] toolResult", 1200
    )
    assert invalidation_text(undeclared) == (
        "The prompt changed at message 5 of the conversation (a tool result) since the last request, "
        "so about 1,200 tokens the provider had cached are billed again in full."
    )
    declared = Invalidation(3, "redact", "redact secrets", "messages_cached_replace", 45_000)
    assert invalidation_text(declared) == (
        "redact changed earlier context (redact secrets), so about 45k tokens the provider had cached "
        "are billed again in full."
    )


def _cached_reply(text: str, cache_read: int, input_: int) -> FauxResponse:
    return FauxResponse(content=[faux_text(text)], usage=Usage(input=input_, output=5, cache_read=cache_read))


async def test_the_setting_turns_the_cache_miss_notice_on(tmp_path: Path, agent_dir: Path) -> None:
    for shown in (False, True):
        (agent_dir / "settings.json").write_text(json.dumps({"showCacheMissNotices": shown}))
        script = FauxScript(_cached_reply("one", 50_000, 100), _cached_reply("two", 0, 50_200))
        app = make_app(tmp_path, agent_dir, script)
        async with app.run_test() as pilot:
            await until(pilot, app.ready.is_set)
            for prompt in ("first", "second"):
                await type_text(pilot, prompt)
                app.menu.hide()
                await pilot.press("enter")
                await until(pilot, lambda app=app: not app._busy and not app.editor.text)  # type: ignore[misc]
            await pilot.pause()
            notices: list[Any] = [b.text for b in app.chat.query(NoticeBlock)]
            app.reload_chat()  # the branch loaded again, as on resume: the miss is worked out again
            await pilot.pause()
            loaded: list[Any] = [b.text for b in app.chat.query(NoticeBlock)]
        assert any(t.startswith("Cache miss: ") for t in notices) is shown
        assert sum(t.startswith("Cache miss: ") for t in loaded) == int(shown)


async def test_a_cache_refresh_is_told_with_its_cost_when_made_and_when_loaded(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.runtime.events import EntryAppended

    (agent_dir / "settings.json").write_text(json.dumps({"showCacheMissNotices": True}))
    app = make_app(tmp_path, agent_dir, FauxScript(_cached_reply("one", 0, 100)))
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        session = app.session
        assert session is not None
        usage = Usage(output=1, cache_read=1413)
        usage.cost.cache_read, usage.cost.output, usage.cost.total = 0.1413, 0.001, 0.1423
        entry = session.session_manager.append_usage("cache_warm", "p", "m", usage)
        await session.emit(EntryAppended(entry))
        await pilot.pause()
        told: list[Any] = [b.text for b in app.chat.query(NoticeBlock)]
        app.reload_chat()  # as on resume: the saved refresh is shown where it happened
        await pilot.pause()
        loaded: list[Any] = [b.text for b in app.chat.query(NoticeBlock)]
    assert told.count("Cache warmed: $0.1423") == 1
    assert loaded.count("Cache warmed: $0.1423") == 1


def test_a_miss_after_a_cache_refresh_is_measured_from_the_refresh() -> None:
    from datetime import UTC, datetime

    from pi_tui.modes.interactive.cache_notices import with_cache_miss_notices
    from pi_tui.session.entries import UsageEntry

    first = _answer(cache_read=60_000, input_=500, at=1_000_000)
    late = _answer(cache_read=0, input_=61_000, at=1_000_000 + 10 * 60_000)
    assert "after 10 minutes idle" in (cache_miss_text([first], late) or "")
    at = datetime.fromtimestamp((1_000_000 + 8 * 60_000) / 1000, UTC).isoformat().replace("+00:00", "Z")
    usage = Usage(output=1, cache_read=60_500)
    usage.cost.total = 0.0182
    warm = UsageEntry(
        id="w",
        parent_id=None,
        timestamp=at,
        kind="cache_warm",
        provider="p",
        model="m",
        usage=usage.to_json_dict(),
    )
    text = cache_miss_text([first], late, warmed=warm)
    assert text is not None and text.startswith("Cache miss: ")  # 2 minutes after the refresh: not idle
    shown = with_cache_miss_notices([first, warm, late])
    assert shown[0] is first and shown[2] is late
    assert [shown[1].text, shown[3].text] == ["Cache warmed: $0.0182", text]
