from __future__ import annotations

from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call
from pi_tui.modes.interactive.blocks import NoticeBlock

from .helpers import make_app, submit, type_text, until

ASKING_EXTENSION = """
async def ask(args, ctx):
    ok = await ctx.ui.confirm("Proceed?", "It changes things")
    colour = await ctx.ui.select("Colour", ["red", "blue"])
    name = await ctx.ui.input("Name?", "your name")
    late = await ctx.ui.confirm("Too slow?", "nobody answers", timeout=0.2)
    ctx.ui.notify(f"answers: {ok} {colour} {name} {late}")

def status(args, ctx):
    ctx.ui.set_status("b-ext", "B-STATUS")
    ctx.ui.set_status("a-ext", "A-STATUS")
    ctx.ui.set_widget("todo", ["1. write tests", "2. ship"])
    ctx.ui.set_widget("hint", ["below!"], "belowEditor")
    ctx.ui.set_editor_text("prefilled by extension")

def register(pi):
    pi.register_command("ask", {"handler": ask, "description": "asks questions"})
    pi.register_command("status", {"handler": status, "description": "sets status"})
"""


def _notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in app.chat.query(NoticeBlock)]


async def test_extension_dialogs_are_modal_screens_with_timeouts(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "asking.py"
    ext.write_text(ASKING_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert any(c.value == "ask" and c.description == "asks questions" for c in app.router.candidates())
        await submit(pilot, app, "/ask")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmDialog")
        await pilot.press("y")
        await until(pilot, lambda: type(app.screen).__name__ == "SelectDialog")
        await pilot.press("down", "enter")
        await until(pilot, lambda: type(app.screen).__name__ == "InputDialog")
        await type_text(pilot, "Ada")
        await pilot.press("enter")
        await until(pilot, lambda: any(t.startswith("answers:") for t in _notices(app)))
        assert "answers: True blue Ada False" in _notices(app)
        assert app.screen is app.screen_stack[0]


async def test_status_widgets_and_editor_text_from_an_extension(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "status.py"
    ext.write_text(ASKING_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/status")
        await until(pilot, lambda: app.editor.text == "prefilled by extension")
        assert app.footer.plain().rstrip().endswith("A-STATUS B-STATUS")
        assert "1. write tests" in str(app.above.children[0].render())
        assert "below!" in str(app.below.children[0].render())


async def _gate_run(tmp_path: Path, agent_dir: Path, answer: str) -> tuple[FauxScript, bool]:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "file.txt").write_text("precious")
    script = FauxScript(
        faux_reply(faux_tool_call("bash", {"command": f"rm -rf {victim}"}, id="rm1")),
        faux_reply("done"),
    )
    app = make_app(tmp_path, agent_dir, script, argv=["-e", "permission_gate"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "clean up")
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmDialog")
        await pilot.press(answer)
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        block = app.chat.tools["rm1"]
        if answer == "n":
            assert "-error" in block.classes
    return script, victim.exists()


async def test_permission_gate_asks_and_yes_runs_the_command(tmp_path: Path, agent_dir: Path) -> None:
    _script, exists = await _gate_run(tmp_path, agent_dir, "y")
    assert not exists


async def test_permission_gate_asks_and_no_blocks_the_command(tmp_path: Path, agent_dir: Path) -> None:
    script, exists = await _gate_run(tmp_path, agent_dir, "n")
    assert exists
    results = [m for m in script.requests[-1].messages if getattr(m, "role", None) == "toolResult"]
    assert results and results[-1].is_error


async def test_untrusted_project_asks_before_loading_its_extensions(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive import project_needs_trust

    (tmp_path / ".pi" / "extensions").mkdir(parents=True)
    (tmp_path / ".pi" / "extensions" / "hello.py").write_text(
        "def register(pi):\n    pi.register_command('hello', {'handler': lambda a, c: None, 'description': 'hi'})\n"
    )
    assert project_needs_trust(tmp_path, agent_dir)
    app = make_app(
        tmp_path, agent_dir, FauxScript(), needs_trust=lambda where: project_needs_trust(where, agent_dir)
    )
    async with app.run_test() as pilot:
        await until(pilot, lambda: type(app.screen).__name__ == "SelectDialog")
        await pilot.press("enter")  # "Trust"
        await until(pilot, app.ready.is_set)
        assert any(c.value == "hello" for c in app.router.candidates())
    assert not project_needs_trust(tmp_path, agent_dir)


def test_approve_flags_decide_trust_without_asking(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.args import parse_args
    from pi_tui.modes.interactive import trust_question

    (tmp_path / ".pi" / "extensions").mkdir(parents=True)
    (tmp_path / ".pi" / "extensions" / "hello.py").write_text("def register(pi):\n    pass\n")
    asks = trust_question(parse_args([]), agent_dir)
    assert asks is not None and asks(tmp_path)
    assert trust_question(parse_args(["--approve"]), agent_dir) is None
    assert trust_question(parse_args(["--no-approve"]), agent_dir) is None


TITLE_EXTENSION = """
async def edit(args, ctx):
    ctx.ui.set_title("custom title")
    ctx.ui.set_working_message("Crunching")
    text = await ctx.ui.editor("Edit the note", "line one")
    ctx.ui.notify(f"edited: {text!r}", "warning")

def render(message, options, theme):
    return ["RENDERED: " + message.content]

async def say(args, ctx):
    pi.send_message({"customType": "note", "content": "hello note", "display": True})

def register(api):
    global pi
    pi = api
    api.register_command("edit", {"handler": edit})
    api.register_command("say", {"handler": say})
    api.register_message_renderer("note", render)
"""


async def test_title_working_message_editor_dialog_and_message_renderer(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.blocks import CustomBlock

    ext = tmp_path / "titles.py"
    ext.write_text(TITLE_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/edit")
        await until(pilot, lambda: type(app.screen).__name__ == "EditorDialog")
        assert app.title == "custom title" and app.working.message == "Crunching"
        await pilot.press("end")
        await type_text(pilot, " and two")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "edited: 'line one and two'" in _notices(app))
        await submit(pilot, app, "/say")
        await until(pilot, lambda: bool(app.chat.query(CustomBlock)))
        assert "RENDERED: hello note" in str(app.chat.query_one(CustomBlock).render())


HANGING_HOOK = """
import asyncio

def register(pi):
    @pi.on("before_agent_start")
    async def hang(event, ctx):
        ctx.ui.notify("HOOK-RUNNING")
        await asyncio.Event().wait()
"""


async def test_escape_during_a_prompt_hook_shows_an_abort_not_an_error(
    tmp_path: Path, agent_dir: Path
) -> None:
    ext = tmp_path / "hang.py"
    ext.write_text(HANGING_HOOK)
    script = FauxScript(faux_reply("never sent"))
    app = make_app(tmp_path, agent_dir, script, argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: "HOOK-RUNNING" in _notices(app))
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        notices = [
            (b.text, "warning" if b.has_class("-warning") else "other") for b in app.chat.query(NoticeBlock)
        ]
        assert not any("PromptAborted" in text for text, _ in notices), notices
        assert any("aborted" in text.lower() and level == "warning" for text, level in notices), notices
        assert script.call_count == 0


async def test_the_chat_stays_visible_behind_a_dialog(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(
        faux_reply(
            "Removing the build folder now.", faux_tool_call("bash", {"command": "rm -rf build"}, id="rm1")
        ),
        faux_reply("done"),
    )
    app = make_app(tmp_path, agent_dir, script, argv=["-e", "permission_gate"])
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "tidy")
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmDialog")
        await pilot.pause()
        shown = app.export_screenshot().replace("&#160;", " ")
        assert "Allow a destructive command?" in shown
        # what led to the question is still readable around the dialog, as in pi (dimmed, not blanked)
        assert "tidy" in shown and "Removing the build folder now." in shown
        await pilot.press("n")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
