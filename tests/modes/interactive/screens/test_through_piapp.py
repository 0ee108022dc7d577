from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.screens._dialogs import ChoiceScreen
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.modes.interactive.screens.tree_screen import TreeScreen
from pi_tui.session import SessionManager

from ..helpers import make_app, type_text, until

NAVIGATED = "Navigated to selected point"


async def _submit(pilot: Any, app: Any, text: str) -> None:
    await type_text(pilot, text)
    app.menu.hide()
    await pilot.press("enter")
    await pilot.pause()


async def _prompt(pilot: Any, app: Any, text: str) -> None:
    await _submit(pilot, app, text)
    await until(pilot, lambda: not app._busy and not app.editor.text)
    await pilot.pause()


async def test_context_and_tree_through_the_shell_jump_back_and_branch(
    tmp_path: Path, agent_dir: Path
) -> None:
    script = FauxScript(faux_reply("one"), faux_reply("two"), faux_reply("three"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _prompt(pilot, app, "alpha question")
        await _prompt(pilot, app, "beta question")

        await _submit(pilot, app, "/context")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ContextScreen))

        await _submit(pilot, app, "/tree")
        await until(pilot, lambda: isinstance(app.screen, TreeScreen))
        tree = app.screen
        assert isinstance(tree, TreeScreen)
        index = next(i for i, r in enumerate(tree.shown) if r.text == "user: beta question")
        tree.query_one("#tree-list").cursor = index  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")  # no summary
        await until(pilot, lambda: not isinstance(app.screen, (TreeScreen, ChoiceScreen)))
        await until(pilot, lambda: app.editor.text == "beta question")
        # as pi, the chat says where you are now (it had no word for the jump)
        await until(pilot, lambda: [b.text for b in app.chat.query(NoticeBlock)][-1:] == [NAVIGATED])
        app.editor.text = ""
        await _prompt(pilot, app, "gamma question")
        path = app.session.session_manager.path
    manager = SessionManager.open(path, read_only=True)
    users = [e for e in manager.get_entries() if getattr(getattr(e, "message", None), "role", None) == "user"]
    texts = sorted(
        str(e.message.content if isinstance(e.message.content, str) else e.message.content[0].text)
        for e in users
    )
    assert texts == ["alpha question", "beta question", "gamma question"]
    beta = next(e for e in users if "beta" in str(e.message.content))
    gamma = next(e for e in users if "gamma" in str(e.message.content))
    assert beta.parent_id == gamma.parent_id  # two branches from the first answer
    manager.close()


async def test_screen_keys_win_over_the_app_keys_of_the_same_name(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen

    script = FauxScript(faux_reply("one"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _prompt(pilot, app, "alpha question")
        await _submit(pilot, app, "/tree")
        await until(pilot, lambda: isinstance(app.screen, TreeScreen))
        tree = app.screen
        assert isinstance(tree, TreeScreen)
        seen = []
        for key in ("ctrl+u", "ctrl+t", "ctrl+l", "ctrl+a", "ctrl+o", "ctrl+d"):
            await pilot.press(key)
            seen.append(tree.model.mode)
        assert seen == ["user-only", "no-tools", "labeled-only", "all", "default", "default"]
        assert app.is_running and isinstance(app.screen, TreeScreen)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TreeScreen))
        await _submit(pilot, app, "/resume")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        resume = app.screen
        assert isinstance(resume, ResumeScreen)
        await pilot.press("ctrl+p")  # pi's togglePath; the main screen's next-model key
        assert resume.show_paths


async def test_compact_in_the_shell_shows_the_review_and_applies_the_accepted_summary(
    tmp_path: Path, agent_dir: Path
) -> None:
    import json

    from pi_tui.modes.interactive.screens.compaction_review import ReviewScreen

    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 5}}))
    script = FauxScript(
        faux_reply("one " * 40), faux_reply("two " * 40), faux_reply("SUMMARY from faux"), faux_reply("more")
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _prompt(pilot, app, "alpha question")
        await _prompt(pilot, app, "beta question")
        await _submit(pilot, app, "/compact")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert "SUMMARY from faux" in app.screen.summary  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ReviewScreen) and not app._busy)
        entries = app.session.session_manager.get_entries()
        assert any(
            op.get("op") == "compaction_apply" and "SUMMARY from faux" in op.get("summary", "")
            for e in entries
            for op in (getattr(e, "patch", None) or [])
        )


async def test_resume_picker_in_the_shell_switches_and_the_chat_shows_the_old_session(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.blocks import UserBlock
    from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen

    script = FauxScript(faux_reply("one"), faux_reply("two"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _prompt(pilot, app, "alpha question")
        first_file = app.session.session_manager.path
        await _submit(pilot, app, "/new")
        await until(pilot, lambda: app.session.session_manager.path != first_file and not app._busy)
        await _prompt(pilot, app, "beta question")
        await _submit(pilot, app, "/resume")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await type_text(pilot, "alpha")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.session_manager.path == first_file)
        await until(pilot, lambda: [b.text for b in app.chat.query(UserBlock)] == ["alpha question"])


async def test_resuming_a_session_with_an_unreadable_line_says_so(tmp_path: Path, agent_dir: Path) -> None:
    """A line the loader skips (here one nested 100,000 deep) is reported when the session is picked in
    /resume, as `-c` reports it at start-up; the rest of the session is shown."""
    from pi_tui.modes.interactive.blocks import NoticeBlock, UserBlock
    from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen

    script = FauxScript(faux_reply("one"), faux_reply("two"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _prompt(pilot, app, "alpha question")
        first_file = app.session.session_manager.path
        assert first_file is not None
        deep_line = len(first_file.read_text(encoding="utf-8").splitlines()) + 1
        with open(first_file, "a", encoding="utf-8") as f:
            f.write("[" * 100_000 + "]" * 100_000 + "\n")
        await _submit(pilot, app, "/new")
        await until(pilot, lambda: app.session.session_manager.path != first_file and not app._busy)
        await _prompt(pilot, app, "beta question")
        await _submit(pilot, app, "/resume")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await type_text(pilot, "alpha")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.session_manager.path == first_file)
        await until(pilot, lambda: [b.text for b in app.chat.query(UserBlock)] == ["alpha question"])
        await until(pilot, lambda: any("unreadable line" in b.text for b in app.chat.query(NoticeBlock)))
        warning = next(b.text for b in app.chat.query(NoticeBlock) if "unreadable line" in b.text)
        assert first_file.name in warning and f"line {deep_line}" in warning and "nested deeper" in warning


async def test_fork_through_the_shell_says_forked_to_new_session(tmp_path: Path, agent_dir: Path) -> None:
    """pi's words after /fork are "Forked to new session" in the chat; the file is not named."""
    from pi_tui.modes.interactive.screens.tree_screen import ForkScreen

    script = FauxScript(faux_reply("one"), faux_reply("two"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await _prompt(pilot, app, "alpha question")
        old_path = app.session.session_manager.path
        await _submit(pilot, app, "/fork")
        await until(pilot, lambda: isinstance(app.screen, ForkScreen))
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ForkScreen))
        await until(pilot, lambda: app.editor.text == "alpha question")
        await until(
            pilot, lambda: [b.text for b in app.chat.query(NoticeBlock)][-1:] == ["Forked to new session"]
        )
        assert app.session.session_manager.path != old_path
        assert not [n for n in app._notifications if "Forked" in n.message]
