from __future__ import annotations

from pathlib import Path

from pi_tui.modes.interactive.footer import FooterState, StatusFooter

STATE = FooterState(
    cwd="/tmp/qatui/proj",
    branch="master",
    input=433,
    output=67,
    cache_read=3200,
    cache_hit=88.1,
    cost=0.002,
    context_tokens=1300,
    context_window=128_000,
    model="fake-openai/gpt-fake",
    sandbox="sandbox: workspace-write",
)


def _lines(width: int, state: FooterState = STATE) -> list[str]:
    footer = StatusFooter()
    footer.state = state
    return footer.plain(width).rstrip("\n").split("\n")


def test_a_wide_footer_shows_everything_with_the_right_side_flush_right() -> None:
    path, stats = _lines(100)
    assert path.startswith("/tmp/qatui/proj (master) ") and path.endswith("sandbox: workspace-write")
    assert stats.startswith("↑433 ↓67 R3.2k CH88.1% $0.002 1.0%/128k ")
    assert stats.endswith("fake-openai/gpt-fake") and len(stats) == 100


def test_a_narrow_footer_keeps_the_context_share_and_cuts_the_model_as_pi_does() -> None:
    # pi cuts the model with no ellipsis and shows whatever part of it fits after the two-space gap
    path, stats = _lines(58)
    assert stats == "↑433 ↓67 R3.2k CH88.1% $0.002 1.0%/128k  fake-openai/gpt-f"
    _, stats = _lines(42)
    assert stats == "↑433 ↓67 R3.2k CH88.1% $0.002 1.0%/128k  f"
    _, stats = _lines(41)  # no column left after the gap: the model is left out
    assert stats == "↑433 ↓67 R3.2k CH88.1% $0.002 1.0%/128k"


def test_stats_wider_than_the_footer_end_in_three_dots_as_pi_does() -> None:
    _, stats = _lines(30)
    assert stats == "↑433 ↓67 R3.2k CH88.1% $0.0..."


def test_the_model_stays_at_every_narrow_width_while_the_stats_leave_room() -> None:
    state = FooterState(
        cwd="~", output=3, cache_read=1400, cache_hit=100.0, cost=0.0001, context_tokens=1400,
        context_window=200_000, auto_compaction=True, model="claude-fake", provider="fake-anthropic",
    )  # fmt: skip
    # what pi 0.87.1 shows at these widths (its footer has no side padding, so its width is ours + 2)
    assert _lines(48, state)[1] == "↓3 R1.4k CH100.0% $0.000 0.7%/200k (auto)  claud"
    assert _lines(58, state)[1] == "↓3 R1.4k CH100.0% $0.000 0.7%/200k (auto)      claude-fake"
    assert _lines(38, state)[1] == "↓3 R1.4k CH100.0% $0.000 0.7%/200k ..."


def test_the_directory_is_cut_before_the_sandbox_with_a_gap_between_them() -> None:
    path, _ = _lines(45)
    assert path.endswith("...  sandbox: workspace-write") and len(path) <= 45
    assert path.startswith("/tmp/qatui/")


def test_extension_statuses_are_cut_to_one_line() -> None:
    state = FooterState(cwd="~", model="m", statuses={"a": "x" * 80})
    lines = _lines(40, state)
    assert len(lines) == 3 and lines[2].endswith("...") and len(lines[2]) == 40


def test_the_provider_is_named_in_parentheses_when_there_is_room_as_pi_does() -> None:
    state = FooterState(
        cwd="~", output=82, context_tokens=1300, context_window=200_000, auto_compaction=True,
        model="claude-fake", provider="fake-anthropic", thinking="medium",
    )  # fmt: skip
    _, stats = _lines(100, state)
    assert stats.startswith("↓82 0.7%/200k (auto) ")
    assert stats.endswith("  (fake-anthropic) claude-fake • medium") and len(stats) == 100
    _, stats = _lines(50, state)  # no room for the provider: the model alone, whole
    assert stats.endswith("  claude-fake • medium") and "(fake-anthropic)" not in stats


def test_thinking_off_reads_thinking_off_as_pi_shows_it() -> None:
    state = FooterState(
        cwd="~", context_tokens=0, context_window=200_000, model="claude-opus-4-8", thinking="off"
    )
    _, stats = _lines(80, state)
    assert stats.endswith("  claude-opus-4-8 • thinking off")
    _, stats = _lines(80, FooterState(cwd="~", model="claude-opus-4-8", thinking="high"))
    assert stats.endswith("  claude-opus-4-8 • high")


def test_auto_compaction_off_drops_the_auto_mark() -> None:
    state = FooterState(cwd="~", context_tokens=0, context_window=200_000, model="m")
    _, stats = _lines(60, state)
    assert stats.startswith("0.0%/200k ") and "(auto)" not in stats


async def test_the_context_share_counts_what_no_answer_measured_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.ai.providers.faux import FauxScript, faux_reply
    from pi_tui.ai.tokens import estimate_tokens

    from .helpers import make_app, submit, submit_and_wait, until

    slow = [faux_reply("never finished"), faux_reply("never finished either")]
    for reply in slow:
        reply.delay = 30  # each delta waits (abortably): Escape comes while it streams
    script = FauxScript(slow[0], faux_reply("measured"), slow[1])
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "first")
        await until(pilot, lambda: app._busy and script.call_count == 1)
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        # an aborted first answer measured nothing: the share is estimated (system prompt and messages)
        assert (app.footer.state.context_tokens or 0) >= estimate_tokens(app.session.system_prompt())
        await submit_and_wait(pilot, app, "second")
        measured = app.footer.state.context_tokens or 0
        assert measured > 0
        long_prompt = "z " * 400
        app.editor.text = long_prompt
        await pilot.press("enter")
        await until(pilot, lambda: app._busy and script.call_count == 3)
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        # the last measured size plus an estimate of what came after it (the long prompt)
        assert (app.footer.state.context_tokens or 0) >= measured + estimate_tokens(long_prompt)


async def test_a_prompt_just_sent_counts_in_the_context_share_before_its_answer(
    tmp_path: Path, agent_dir: Path
) -> None:
    import asyncio

    from pi_tui.ai.providers.faux import FauxScript, faux_reply
    from pi_tui.ai.tokens import estimate_tokens

    from .helpers import gated, make_app, submit_and_wait, until

    gate = asyncio.Event()
    script = FauxScript(faux_reply("first"), gated(gate, faux_reply("second")))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "one")
        measured = app.footer.state.context_tokens or 0
        long_prompt = "y " * 2000
        app.editor.text = long_prompt
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2)  # asked; no answer yet
        await until(
            pilot, lambda: (app.footer.state.context_tokens or 0) >= measured + estimate_tokens(long_prompt)
        )
        gate.set()
        await until(pilot, lambda: not app._busy)


def test_the_cache_hit_share_is_the_one_given_not_one_over_the_totals() -> None:
    """pi shows the newest answer's cache hit share; the totals' share (here 50%) is not it."""
    state = FooterState(cwd="~", input=1000, cache_read=1000, cache_hit=96.3, model="m")
    _, stats = _lines(80, state)
    assert stats.startswith("↑1.0k R1.0k CH96.3% ")
    _, stats = _lines(80, FooterState(cwd="~", input=1000, cache_read=1000, model="m"))
    assert "CH" not in stats  # no answer measured a share: none is shown
