"""What provider error lines say on screen: no sub-second wait, no advice to retry once retries are spent."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_error
from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.error_text import gave_up_text, shown_error

from .helpers import make_app, type_text, until

_OVERLOADED = "529 overloaded_error: Overloaded (anthropic is overloaded or unavailable; retrying may help)"


def test_a_wait_under_a_second_is_not_shown_but_a_longer_one_is() -> None:
    assert shown_error(f"{_OVERLOADED} (retry after 1 ms)") == _OVERLOADED
    assert shown_error(f"{_OVERLOADED} (retry after 999 ms)") == _OVERLOADED
    assert shown_error(f"{_OVERLOADED} (retry after 30000 ms)") == f"{_OVERLOADED} (retry after 30000 ms)"


def test_giving_up_neither_suggests_a_retry_nor_gives_a_wait() -> None:
    text = gave_up_text(3, f"{_OVERLOADED} (retry after 30000 ms)")
    assert (
        text
        == "Gave up after 3 attempts: 529 overloaded_error: Overloaded (anthropic is overloaded or unavailable)"
    )
    assert gave_up_text(1, "boom") == "Gave up after 1 attempt: boom"


async def test_the_chat_shows_errors_and_the_give_up_line_without_contradictions(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10, "maxRetries": 2}}))
    script = FauxScript(*(faux_error(f"{_OVERLOADED} (retry after 1 ms)") for _ in range(3)))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        notices = lambda: [b.text for b in app.chat.query(NoticeBlock)]  # noqa: E731
        await until(pilot, lambda: any("Gave up" in t for t in notices()) and not app._busy)
        errors = [t for t in notices() if t.startswith("Error:")]
        assert errors and all("retry after" not in t for t in errors), errors
        assert notices()[-1] == (
            "Gave up after 2 attempts: 529 overloaded_error: Overloaded (anthropic is overloaded or unavailable)"
        )
