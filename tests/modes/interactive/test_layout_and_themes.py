from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.providers.faux import FauxScript, faux_error, faux_reply
from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.theme import ThemeError, builtin_theme_dir, load_theme

from .helpers import make_app, submit, submit_and_wait, type_text, until

PANEL_EXTENSION = (
    "def register(pi):\n    pi.register_panel('Notes', lambda: 'remember the tests', placement='prefix')\n"
)


def _notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in app.chat.query(NoticeBlock)]


async def test_sidebar_lists_panels_with_tokens_placement_and_cost(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "notes.py"
    ext.write_text(PANEL_EXTENSION)
    script = FauxScript(faux_reply("a"), faux_reply("b"))
    app = make_app(tmp_path, agent_dir, script, argv=["-e", str(ext)])
    async with app.run_test(size=(130, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        for prompt in ("one", "two"):
            await submit_and_wait(pilot, app, prompt)
        await until(pilot, lambda: script.call_count == 2)
        await pilot.press("f2")
        assert app.sidebar.display and "-open" in app.sidebar.classes
        text = str(app.sidebar.render())
        assert "[P1] Notes" in text and "prefix (cached)" in text and "last: hit" in text
        assert "cache read:" in text and "cost: $" in text
        await pilot.press("f2")
        assert "-open" not in app.sidebar.classes


async def test_narrow_terminal_folds_the_sidebar_away(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("f2")
        assert "-open" not in app.sidebar.classes
        assert any("100 columns" in t for t in _notices(app))
        assert app.editor.region.width > 0 and app.footer.region.height >= 2


async def test_the_open_sidebar_folds_away_when_the_terminal_narrows(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(110, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("f2")
        assert "-open" in app.sidebar.classes
        await pilot.resize_terminal(80, 30)
        await until(pilot, lambda: app.size.width == 80)
        assert "-open" not in app.sidebar.classes and not app.sidebar.display


async def test_retry_banner_counts_down_and_escape_cancels_it(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 30000, "maxDelayMs": 60000}})
    )
    script = FauxScript(faux_error("529 overloaded_error: Overloaded"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: any(t.startswith("Retrying (1/") for t in _notices(app)))
        assert any("s… (escape to cancel)" in t for t in _notices(app))
        # the failed answer shows the error once; the banner does not repeat it (as pi's)
        assert sum("Overloaded" in t for t in _notices(app)) == 1
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        notices = _notices(app)
        assert notices[-1] == "Retry cancelled", notices  # you stopped it: nothing "gave up"
        assert not any("Gave up" in t or "escape to cancel" in t for t in notices), notices
        assert script.call_count == 1


async def test_the_retry_banner_names_the_users_interrupt_key_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi's banner says the key bound to interrupt; with it rebound, 'escape' would be a wrong hint."""
    (agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 30000, "maxDelayMs": 60000}})
    )
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.interrupt": ["ctrl+q"]}))
    script = FauxScript(faux_error("529 overloaded_error: Overloaded"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: any(t.startswith("Retrying (1/") for t in _notices(app)))
        assert any(t.endswith("s… (ctrl+q to cancel)") for t in _notices(app)), _notices(app)
        # and so does the start-up header's first hint
        assert _notices(app)[0].splitlines()[1].startswith("ctrl+q interrupt · ctrl+c/ctrl+d clear/exit · ")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app._busy)
        assert _notices(app)[-1] == "Retry cancelled"


async def test_a_retry_due_within_a_second_says_1s_not_0s(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 300, "maxRetries": 1}}))
    script = FauxScript(faux_error("529 overloaded_error: Overloaded"), faux_reply("fine"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: any(t.startswith("Retry") for t in _notices(app)))
        assert not any("in 0s" in t for t in _notices(app))
        await until(pilot, lambda: not app._busy)


async def test_spent_retry_banners_stop_counting_and_giving_up_is_told_last(
    tmp_path: Path, agent_dir: Path
) -> None:
    """A banner whose retry has run no longer reads "in 0s… (escape to cancel)", and the line that says
    the retries were used up comes after the last error, as pi's "Retry failed after N attempts" does."""
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10, "maxRetries": 2}}))
    script = FauxScript(*(faux_error("529 overloaded_error: Overloaded") for _ in range(3)))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: any("Gave up" in t for t in _notices(app)) and not app._busy)
        notices = _notices(app)
        assert not any("escape to cancel" in t or "in 0s" in t for t in notices), notices
        assert notices[-1].startswith("Gave up after 2 attempts: "), notices
        assert [t for t in notices if t.startswith("Retried")] == ["Retried (1/2)", "Retried (2/2)"]
        assert sum(t.startswith("Error:") for t in notices) == 3


async def test_a_retry_that_succeeds_after_a_failed_one_leaves_no_countdown(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10, "maxRetries": 3}}))
    script = FauxScript(
        faux_error("529 overloaded_error: Overloaded"),
        faux_error("529 overloaded_error: Overloaded"),
        faux_reply("ok"),
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: any("succeeded" in t for t in _notices(app)) and not app._busy)
        notices = _notices(app)
        assert not any("escape to cancel" in t for t in notices), notices
        assert "Retried (1/3)" in notices and "Retry 2 succeeded" in notices


async def test_error_answers_are_marked_in_the_chat(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_error("invalid_request_error: bad things"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: any("bad things" in t for t in _notices(app)) and not app._busy)
        errors = [b for b in app.chat.query(NoticeBlock) if "-error" in b.classes]
        assert errors and "bad things" in errors[-1].text


def test_builtin_themes_define_every_token() -> None:
    for name in ("dark", "light"):
        theme = load_theme(builtin_theme_dir() / f"{name}.json")
        assert theme.name == name and all(v.startswith("#") for v in theme.colors.values())


def test_a_theme_missing_tokens_is_refused_with_the_names(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"name": "bad", "colors": {"accent": "#ffffff"}}))
    try:
        load_theme(path)
    except ThemeError as exc:
        assert "missing colour token(s)" in str(exc) and "border" in str(exc)
    else:
        raise AssertionError("an incomplete theme was accepted")


async def test_light_theme_by_name_and_user_theme_hot_reload(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="light")
    async with app.run_test() as pilot:
        assert app.theme == "pi-light" and not app.current_theme.dark
    data = json.loads((builtin_theme_dir() / "dark.json").read_text())
    data["name"] = "mine"
    data["colors"]["accent"] = "#ff0000"
    themes = agent_dir / "themes"
    themes.mkdir()
    (themes / "mine.json").write_text(json.dumps(data))
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="mine")
    async with app.run_test() as pilot:
        assert app.theme == "pi-mine" and app.theme_variables["pi-accent"] == "#ff0000"
        data["colors"]["accent"] = "#00ff00"
        (themes / "mine.json").write_text(json.dumps(data))
        import os

        os.utime(themes / "mine.json", (1, 1))  # a new mtime even within the same second
        await until(pilot, lambda: app.theme_variables.get("pi-accent") == "#00ff00")


async def test_unknown_theme_falls_back_to_dark(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="nope")
    async with app.run_test():
        assert app.theme == "pi-dark"


async def test_a_cache_invalidation_is_announced_with_who_and_why(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "ticker.py"
    ext.write_text(
        "import itertools\n_n = itertools.count()\n"
        "def register(pi):\n"
        "    pi.register_panel('Ticker', lambda: 'tick ' + str(next(_n)) + ' ' + 'x' * 400, placement='prefix')\n"
    )
    script = FauxScript(faux_reply("a"), faux_reply("b"))
    app = make_app(tmp_path, agent_dir, script, argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for prompt in ("one", "two"):
            await submit_and_wait(pilot, app, prompt)
        await until(pilot, lambda: script.call_count == 2)
        ledger = app.session.engine.ledger
        await until(pilot, lambda: any("billed again" in t for t in _notices(app)))
        notice = next(t for t in _notices(app) if "billed again" in t)
        assert notice.startswith("The prompt changed at message ") and "of the conversation" in notice
        assert "no reason declared" not in notice and ledger.invalidations[-1].tokens_rebilled > 0
        from pi_tui.modes.interactive.markdown_block import AssistantText

        blocks = list(app.chat.children)
        told = next(b for b in app.chat.query(NoticeBlock) if "billed again" in b.text)
        answer = list(app.chat.query(AssistantText))[-1]  # "b", the answer to the changed request
        assert blocks.index(told) < blocks.index(answer)  # told above the answer it concerns


async def test_compact_shows_a_compaction_summary_block(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.blocks import SummaryBlock

    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"review": "never", "keepRecentTokens": 50}})
    )
    script = FauxScript(
        faux_reply("a" * 400),
        faux_reply("b" * 400),
        faux_reply("## Goal\nSUMMARYTEXT"),
        faux_reply("## Goal\nSUMMARYTEXT"),
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for prompt in ("one", "two"):
            await submit_and_wait(pilot, app, prompt)
        await submit(pilot, app, "/compact")
        await until(pilot, lambda: bool(app.chat.query(SummaryBlock)))
        assert "SUMMARYTEXT" in app.chat.query(SummaryBlock).last().summary
        assert app.footer.state.context_tokens is None  # "?" until the next answer, as pi
        await submit(pilot, app, "/compact")
        await until(pilot, lambda: any(t.startswith("Compaction failed:") for t in _notices(app)))


async def test_a_collapsed_compaction_says_what_it_is_not_the_summarys_first_line(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.ai.types import CompactionSummaryMessage
    from pi_tui.modes.interactive.blocks import SummaryBlock

    # a first compaction inside one long turn: pi's split-turn layout starts "No prior history."
    summary = "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n## Goal\nFix calc."
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        app.chat.add(CompactionSummaryMessage(summary=summary, tokens_before=1322))
        await until(pilot, lambda: bool(app.chat.query(SummaryBlock)))
        block = app.chat.query(SummaryBlock).last()
        await pilot.pause()
        collapsed = str(block.render())
        assert "[compaction] 1,322 tokens summarised" in collapsed
        assert "No prior history" not in collapsed and block.region.height == 1  # as pi: no preview
        await pilot.click(block)
        await until(pilot, lambda: "Fix calc." in str(block.render()))
        assert "No prior history" in str(block.render())  # expanded: the whole summary


async def test_a_failed_automatic_compaction_keeps_the_context_share(tmp_path: Path, agent_dir: Path) -> None:
    settings = {"reserveTokens": 199_000, "keepRecentTokens": 50, "review": "never"}
    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": settings, "retry": {"enabled": False}})
    )
    script = FauxScript(
        faux_reply("a" * 400),  # over the threshold: a compaction follows the answer
        faux_error("400 invalid_request_error: the summary request was refused"),
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "one")
        await until(pilot, lambda: any(t.startswith("Compaction failed:") for t in _notices(app)))
        await until(pilot, lambda: not app._busy)
        assert script.call_count == 2
        # nothing was compacted: the share is still known ("?" is for after a compaction, until an answer)
        assert app.footer.state.context_tokens is not None and app.footer.state.context_tokens > 0


async def test_escape_during_compact_says_it_was_cancelled_not_that_it_failed(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"review": "never", "keepRecentTokens": 50}})
    )
    slow = [faux_reply("## Goal\nlate"), faux_reply("## Goal\nlate")]
    for reply in slow:
        reply.delay = 30  # each delta waits (abortably): the summary is still coming when Escape comes
    script = FauxScript(faux_reply("a" * 400), faux_reply("b" * 400), *slow)
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for prompt in ("one", "two"):
            await submit_and_wait(pilot, app, prompt)
        await submit(pilot, app, "/compact")
        await until(pilot, lambda: app._busy and len(script.requests) >= 3)
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        await until(pilot, lambda: "Compaction cancelled" in _notices(app))
        assert not any(t.startswith("Compaction failed") for t in _notices(app))


def test_the_wheel_ships_the_built_in_themes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel install has no repository ``themes/`` folder: the themes ship as ``pi_tui.bundled_themes``."""
    import warnings

    repo = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(repo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # setuptools' notes about its own configuration
        from distutils.core import run_setup

        dist = run_setup("setup.py", stop_after="config")
        build_py = dist.get_command_obj("build_py")
        build_py.ensure_finalized()
        data = {package: files for package, _src, _build, files in build_py.data_files}

    assert dist.package_dir.get("pi_tui.bundled_themes") == "themes"
    assert {"dark.json", "light.json"} <= set(data.get("pi_tui.bundled_themes", []))


def test_built_in_themes_are_found_in_the_installed_package_without_a_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pi_tui.modes.interactive import theme as theme_module

    packaged = tmp_path / "site" / "pi_tui" / "bundled_themes"
    packaged.mkdir(parents=True)
    (packaged / "dark.json").write_text((builtin_theme_dir() / "dark.json").read_text())
    fake_file = tmp_path / "site" / "pi_tui" / "modes" / "interactive" / "theme.py"
    monkeypatch.setattr(theme_module, "__file__", str(fake_file))
    assert builtin_theme_dir() == packaged


async def test_a_new_session_starts_at_the_top_and_follows_the_end_once_it_overflows(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi's full-screen view: the start-up header on the first lines, the editor at the bottom, and the
    chat follows the newest line only once it no longer fits. The header sat just above the editor."""
    script = FauxScript(*(faux_reply("\n\n".join(f"line {i}" for i in range(12))) for _ in range(3)))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.pause()
        header = app.chat.query(NoticeBlock).first()
        assert "pi-tui v" in header.text and header.region.y <= 1, header.region
        assert app.editor.region.y > 20
        for _ in range(3):
            await type_text(pilot, "more")
            await pilot.press("enter")
            await until(pilot, lambda: not app._busy and not app.editor.text)
        await pilot.pause()
        assert app.chat.scroll_y > 0 and app.chat.scroll_y == app.chat.max_scroll_y
        assert header.region.bottom <= app.chat.region.y  # scrolled out of view at the top
        last = list(app.chat.query("AssistantText"))[-1]
        assert (
            last.region.bottom <= app.chat.region.bottom and last.region.bottom >= app.chat.region.bottom - 3
        )


async def test_the_start_up_header_is_compact_and_ctrl_o_shows_every_key_as_pi(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi 0.87's header ends its key line with "ctrl+o more" (not a pointer to /hotkeys) and Ctrl+O, the key
    that expands tool output, expands it too: one key per line; Ctrl+O again folds it back."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        header = app.chat.query(NoticeBlock).first()
        compact = str(header.render()).splitlines()
        assert compact[0].startswith("pi-tui v")
        assert compact[1] == "escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more"
        assert compact[2] == "Press ctrl+o to show full startup help."
        await pilot.press("ctrl+o")
        expanded = str(header.render()).splitlines()
        assert expanded[0] == compact[0] and expanded[1:3] == ["escape to interrupt", "ctrl+c to clear"]
        assert "ctrl+o to expand tools" in expanded and "!! to run bash (no context)" in expanded
        assert "f2 to show or hide the panels" in expanded and "/hotkeys for every key" in expanded
        await pilot.press("ctrl+o")
        assert str(header.render()).splitlines() == compact


async def test_use_theme_holds_over_the_setting_through_reload(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"theme": "dark"}))
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="light")
    app.theme_override = "light"  # what run_interactive sets for --use-theme light
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert app.theme == "pi-light"
        await submit_and_wait(pilot, app, "/reload")
        assert app.theme == "pi-light"
        assert json.loads((agent_dir / "settings.json").read_text()) == {"theme": "dark"}  # nothing saved
