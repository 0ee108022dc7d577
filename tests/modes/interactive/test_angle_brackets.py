"""Text in angle brackets (generics, HTML, JSX) in an answer is shown as written, streamed or loaded."""

from __future__ import annotations

from pathlib import Path

from textual.widgets.markdown import MarkdownBlock

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.markdown_block import AssistantText

from .helpers import make_app, type_text, until


def rendered(app: object) -> str:
    chat = app.chat  # type: ignore[attr-defined]
    return "\n".join(
        str(w.render()) for block in chat.query(AssistantText) for w in block.query(MarkdownBlock)
    )


async def test_the_faux_greeting_shows_its_hints_in_angle_brackets(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir)  # the faux demo model answers
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and "Try" in rendered(app))
        assert "“read <path>”" in rendered(app) and "“run <command>”" in rendered(app)


async def test_an_answer_about_generics_and_html_keeps_them_after_a_resume(
    tmp_path: Path, agent_dir: Path
) -> None:
    answer = (
        "`List<String>` is a list; List<String> in prose too, and <div> is a block.\n\n<div>\n<App />\n</div>"
    )
    script = FauxScript(faux_reply(answer))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "what is List<String> and <div>?")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and "block" in rendered(app))
        live = rendered(app)
        path = app.session.session_manager.path
        await app.session.close()  # lets the next run open the file (one writer at a time)
    assert "List<String> in prose too, and <div> is a block." in live and "<App />" in live
    resumed = make_app(tmp_path, agent_dir, argv=["--session", str(path)])
    async with resumed.run_test() as pilot:
        await until(pilot, lambda: resumed.ready.is_set() and "block" in rendered(resumed))
        assert "List<String> in prose too, and <div> is a block." in rendered(resumed)
