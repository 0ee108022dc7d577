from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from textual import events

from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_thinking, faux_tool_call
from pi_tui.ai.types import BashExecutionMessage
from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.blocks import (
    AssistantText,
    BashBlock,
    NoticeBlock,
    ThinkingBlock,
    UserBlock,
)
from pi_tui.modes.interactive.status import WorkingLine
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import card_lines, gated, last_user_text, make_app, submit_and_wait, type_text, until


async def test_enter_sends_and_the_answer_streams_into_the_chat(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply(faux_thinking("pondering"), "The **answer** is 42."))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "what is it")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and app.chat.query(AssistantText))
        await until(pilot, lambda: "42" in app.chat.query(AssistantText).last().text)
        assert [b.text for b in app.chat.query(UserBlock)] == ["what is it"]
        thinking = app.chat.query_one(ThinkingBlock)
        assert not thinking.hidden and thinking.text == "pondering"
        assert app.editor.text == ""
        assert "faux-1" in app.footer.state.model and app.footer.state.output > 0
        assert last_user_text(script) == "what is it"


async def test_thinking_lists_and_line_breaks_are_drawn_as_pi_draws_them(
    tmp_path: Path, agent_dir: Path
) -> None:
    thought = (
        "Plan:\nfirst line\n\n- read the file\n- a step long enough that it has to wrap onto a second row here"
        "\n\n1. one\n2. two"
    )
    script = FauxScript(faux_reply(faux_thinking(thought), "Done."))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(60, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and app.chat.query(ThinkingBlock))
        block = app.chat.query_one(ThinkingBlock)
        await pilot.pause()
        rows = [strip.text.strip() for strip in block.render_lines(block.region.reset_offset)]
        assert "•" not in "".join(rows)
        assert "- read the file" in rows and "1. one" in rows and "2. two" in rows, rows
        assert rows[:2] == ["Plan:", "first line"]  # a line of its own, as pi keeps it
        wrapped = next(i for i, row in enumerate(rows) if row.startswith("- a step long"))
        assert not rows[wrapped + 1].startswith("-")  # the item's second row, under its text


async def test_edit_tool_call_shows_its_diff_and_success(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    edit = {"path": "a.py", "edits": [{"oldText": "y = 2", "newText": "y = 3"}]}
    script = FauxScript(faux_reply(faux_tool_call("edit", edit, id="call_1")), faux_reply("Changed y."))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "bump y")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and script.call_count == 2)
        tool = app.chat.tools["call_1"]
        assert "-success" in tool.classes and tool.diff is not None
        assert "-" in tool.diff and "y = 3" in tool.diff
        assert (tmp_path / "a.py").read_text() == "x = 1\ny = 3\n"


async def test_failed_tool_call_is_marked_as_an_error(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(
        faux_reply(faux_tool_call("read", {"path": "missing.txt"}, id="c1")), faux_reply("no file")
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "read it")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        assert "-error" in app.chat.tools["c1"].classes


async def test_long_tool_output_is_truncated_until_ctrl_o(tmp_path: Path, agent_dir: Path) -> None:
    content = "".join(f"line {i}\n" for i in range(60))
    script = FauxScript(
        faux_reply(faux_tool_call("write", {"path": "big.txt", "content": content}, id="c1")),
        faux_reply("written"),
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "write big")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        tool = app.chat.tools["c1"]
        lines = card_lines(tool)
        assert len(lines) == 12 and lines[-1] == "... (50 more lines, 60 total, ctrl+o to expand)", lines
        await pilot.press("ctrl+o")
        lines = card_lines(tool)
        assert len(lines) == 61 and lines[-1] == "+line 59", lines
        await pilot.press("ctrl+o")
        assert card_lines(tool)[-1] == "... (50 more lines, 60 total, ctrl+o to expand)"


async def test_a_collapsed_read_shows_only_its_title_until_ctrl_o(tmp_path: Path, agent_dir: Path) -> None:
    """As pi 0.75.5+: the file a read returned is the model's; the card shows ``read big.txt`` alone
    (it showed the first ten lines) and Ctrl+O shows the whole file."""
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(60)))
    script = FauxScript(faux_reply(faux_tool_call("read", {"path": "big.txt"}, id="c1")), faux_reply("read"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "read big")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        tool = app.chat.tools["c1"]
        assert card_lines(tool) == ["✓ read big.txt"]
        await pilot.press("ctrl+o")
        lines = card_lines(tool)
        assert len(lines) == 61 and "line 0" in lines[1] and "line 59" in lines[60], lines


async def test_long_bash_output_shows_its_tail_under_an_earlier_lines_hint(
    tmp_path: Path, agent_dir: Path
) -> None:
    """bash keeps the last lines, so the hint says how many came before and stands above them (as pi)."""
    script = FauxScript(
        faux_reply(faux_tool_call("bash", {"command": "seq 1 30"}, id="c1")), faux_reply("ok")
    )
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "count")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        lines = card_lines(app.chat.tools["c1"])
        assert lines[:2] == ["✓ $ seq 1 30", "... (25 earlier lines, ctrl+o to expand)"], lines
        assert (
            lines[2:7] == ["26", "27", "28", "29", "30"] and lines[7].startswith("Took ") and len(lines) == 8
        )
        await pilot.press("ctrl+o")
        lines = card_lines(app.chat.tools["c1"])
        assert lines[1:3] == ["1", "2"] and lines[30] == "30" and lines[31].startswith("Took "), lines


def test_durations_read_as_pi_shows_them() -> None:
    from pi_tui.modes.interactive.blocks import format_duration

    assert format_duration(1.234) == "1.2s"
    assert format_duration(59.94) == "59.9s"
    assert format_duration(125.7) == "2m 5s"
    assert format_duration(3607) == "1h 0m 7s"


async def test_bash_card_counts_elapsed_time_then_says_how_long_it_took(
    tmp_path: Path, agent_dir: Path
) -> None:
    # The command runs until the test has seen the card tick: a busy machine cannot end it first.
    go = tmp_path / "go"
    command = f"while [ ! -e {go} ]; do sleep 0.05; done"
    script = FauxScript(faux_reply(faux_tool_call("bash", {"command": command}, id="c1")), faux_reply("ok"))
    app = make_app(tmp_path, agent_dir, script)

    def seconds(label: str) -> float:
        return float(label.split()[-1].removesuffix("s"))

    def at_most(label: str, passed: float) -> bool:
        # the label rounds to a tenth: 1.08 s shows as 1.1s
        return seconds(label) <= round(passed, 1)

    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "wait")
        await pilot.press("enter")
        await until(pilot, lambda: "c1" in app.chat.tools and app.chat.tools["c1"].started_at is not None)
        tool = app.chat.tools["c1"]
        started = tool.started_at
        assert started is not None
        # Shown from the start (Elapsed 0.0s until the first tick, which a busy machine may reach before
        # this line), never ahead of the clock.
        shown = card_lines(tool)[-1]
        assert shown.startswith("Elapsed ") and at_most(shown, time.monotonic() - started), shown
        await until(pilot, lambda: seconds(card_lines(tool)[-1]) >= 1.0)  # ticks while running
        assert not tool.done and card_lines(tool)[-1].startswith("Elapsed ")
        go.touch()
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        took = card_lines(tool)[-1]
        # the run's own time: at least until the test let it end, and no more than has passed since
        assert took.startswith("Took ") and took.endswith("s"), took
        assert seconds(took) >= 1.0 and at_most(took, time.monotonic() - started), took


async def test_a_running_bash_card_names_its_command_once(tmp_path: Path, agent_dir: Path) -> None:
    """While a bash call runs its card reads ``… $ sleep 2``, titled as pi titles it (it read ``… bash sleep
    2``); the body repeats the command only when the title cannot show all of it (more lines, or longer)."""
    long_command = "sleep 2; echo " + "x" * 300
    script = FauxScript(
        faux_reply(
            faux_tool_call("bash", {"command": "sleep 2"}, id="c1"),
            faux_tool_call("bash", {"command": "cd /tmp &&\nsleep 2"}, id="c2"),
            faux_tool_call("bash", {"command": long_command}, id="c3"),
        ),
        faux_reply("ok"),
    )
    app = make_app(tmp_path, agent_dir, script)

    def body(call: str) -> str:
        # what the card draws under its title, without the timing line
        lines = card_lines(app.chat.tools[call])[1:]
        return "\n".join(line for line in lines if not line.startswith(("Elapsed ", "Took ")))

    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "wait")
        await pilot.press("enter")
        await until(pilot, lambda: "c1" in app.chat.tools and app.chat.tools["c1"].started_at is not None)
        assert not app.chat.tools["c1"].done
        assert card_lines(app.chat.tools["c1"])[0] == "… $ sleep 2"
        assert body("c1") == ""
        assert body("c2") == "$ cd /tmp &&\nsleep 2"
        assert body("c3") == "$ " + long_command
        await until(pilot, lambda: script.call_count == 2 and not app._busy)


async def test_enter_while_streaming_steers_and_the_pending_line_shows_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("first answer")), faux_reply("second answer"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "also this")
        await pilot.press("enter")
        await until(pilot, lambda: "-visible" in app.pending.classes)
        assert "Steering: also this" in str(app.pending.render())
        gate.set()
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        assert last_user_text(script) == "also this"
        assert "-visible" not in app.pending.classes


async def test_alt_enter_while_streaming_queues_a_follow_up(tmp_path: Path, agent_dir: Path) -> None:
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("first")), faux_reply("second"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "later")
        await pilot.press("alt+enter")
        await until(pilot, lambda: "Follow-up: later" in str(app.pending.render()))
        gate.set()
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        assert last_user_text(script) == "later"


async def test_escape_aborts_and_returns_queued_text_to_the_editor(tmp_path: Path, agent_dir: Path) -> None:
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("never")))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "queued one")
        await pilot.press("enter")
        await until(pilot, lambda: "-visible" in app.pending.classes)
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        assert app.editor.text == "queued one"
        assert any("aborted" in b.text.lower() for b in app.chat.query(NoticeBlock))
        assert not app.session.agent.steering_queue


async def test_ctrl_c_clears_and_twice_quits(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.editor.text == ""
        assert app.is_running
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_keys_typed_right_after_ctrl_c_are_kept(tmp_path: Path, agent_dir: Path) -> None:
    """Ctrl+C and the keys after it arrive together (a fast typist, a test terminal): the clear must
    happen before those keys are inserted, not after them (it wiped "THIRD" of "THIRDQ")."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "draft")
        app.editor.post_message(events.Key("ctrl+c", "\x03"))
        for ch in "next":  # queued at once behind the Ctrl+C
            app.editor.post_message(events.Key(ch, ch))
        await until(pilot, lambda: app.editor.text == "next")
        await pilot.pause()
        assert app.editor.text == "next" and app.is_running


async def test_ctrl_d_quits_only_on_an_empty_editor(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "ab")
        await pilot.press("left", "ctrl+d")
        assert app.editor.text == "a" and app.is_running
        await pilot.press("ctrl+u", "ctrl+d")
        await until(pilot, lambda: not app.is_running)


async def test_ctrl_q_does_not_quit_as_in_pi(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.screens.info_screens import InfoScreen

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+q", "ctrl+u")
        await type_text(pilot, "/hotkeys")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InfoScreen))
        assert app.is_running and app.return_code is None


async def test_shift_enter_and_ctrl_j_insert_newlines(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply("ok"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "one")
        await pilot.press("shift+enter")
        await type_text(pilot, "two")
        await pilot.press("ctrl+j")
        await type_text(pilot, "three")
        assert app.editor.text == "one\ntwo\nthree"
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 1 and not app._busy)
        assert last_user_text(script) == "one\ntwo\nthree"


async def test_history_is_kept_per_project_across_runs(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply("a"), faux_reply("b"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for prompt in ("first prompt", "second prompt"):
            await type_text(pilot, prompt)
            await pilot.press("enter")
            await until(pilot, lambda: not app._busy and app.editor.text == "")
    again = make_app(tmp_path, agent_dir, FauxScript())
    async with again.run_test() as pilot:
        await type_text(pilot, "draft")
        await pilot.press("up")  # pi 0.79.5: the first Up on a draft goes to its start
        assert again.editor.text == "draft" and again.editor.cursor_location == (0, 0)
        await pilot.press("up")
        assert again.editor.text == "second prompt"
        await pilot.press("up")
        assert again.editor.text == "first prompt"
        await pilot.press("end", "down")
        assert again.editor.text == "second prompt"
        await pilot.press("down")
        assert again.editor.text == "draft"


async def test_a_large_paste_shows_a_marker_and_is_expanded_on_send(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply("got it"))
    app = make_app(tmp_path, agent_dir, script)
    pasted = "\n".join(f"row {i}" for i in range(30))
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "see ")
        app.editor.post_message(__import__("textual").events.Paste(pasted))
        await until(pilot, lambda: "[paste #1 +30 lines]" in app.editor.text)
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 1 and not app._busy)
        assert last_user_text(script) == "see " + pasted


async def test_bang_runs_a_command_and_double_bang_keeps_it_out_of_context(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "!echo hi-there")
        assert "-bash" in app.editor.classes
        await pilot.press("enter")
        await until(pilot, lambda: any(isinstance(m, BashExecutionMessage) for m in app.session.messages))
        await type_text(pilot, "!!echo secret")
        await pilot.press("enter")
        await until(
            pilot, lambda: len([m for m in app.session.messages if isinstance(m, BashExecutionMessage)]) == 2
        )
        first, second = [m for m in app.session.messages if isinstance(m, BashExecutionMessage)]
        assert "hi-there" in first.output and not first.exclude_from_context and first.exit_code == 0
        assert second.exclude_from_context
        blocks = list(app.chat.query(BashBlock))
        assert len(blocks) == 2 and "-success" in blocks[0].classes


async def test_a_failing_bang_command_shows_its_last_twenty_lines_and_its_exit_code_as_pi(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi's card for a command the user ran keeps the last 20 lines, says how many more there are under
    them and ends with "(exit N)"; the recorded output is the command's own (the context adds the status
    once), and the card drawn again from the session (resume) reads the same."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "!seq 1 30; exit 1")
        await pilot.press("enter")
        await until(pilot, lambda: any(isinstance(m, BashExecutionMessage) for m in app.session.messages))
        (message,) = [m for m in app.session.messages if isinstance(m, BashExecutionMessage)]
        assert message.exit_code == 1 and message.output.rstrip() == "\n".join(str(n) for n in range(1, 31))
        block = app.chat.query_one(BashBlock)
        await until(pilot, lambda: block.done)
        expected = ["✗ $ seq 1 30; exit 1", *(str(n) for n in range(11, 31))]
        expected += ["... 10 more lines (ctrl+o to expand)", "(exit 1)"]
        assert card_lines(block) == expected
        await pilot.press("ctrl+o")
        assert card_lines(block)[1:3] == ["1", "2"]
        assert card_lines(block)[-3:] == ["30", "(ctrl+o to collapse)", "(exit 1)"]
        await pilot.press("ctrl+o")
        (again,) = [b for b in app.chat.blocks_for(message, 0) if isinstance(b, BashBlock)]
        await app.screen.mount(again)
        assert card_lines(again)[:1] + card_lines(again)[-2:] == [expected[0], *expected[-2:]]


async def test_bang_while_the_agent_answers_runs_the_command_and_joins_the_conversation_after_the_turn(
    tmp_path: Path, agent_dir: Path
) -> None:
    """As pi: '!cmd' typed while an answer streams runs at once (it was queued as a steering message, so
    the model got the text '!echo …' and the command never ran); its output joins the conversation once
    the turn is over, after the answer, so the next request carries it."""
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("first")), faux_reply("second"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "!echo during-the-answer")
        await pilot.press("enter")
        # shown above the editor meanwhile, as pi shows it, not in the chat above the answer to come
        await until(pilot, lambda: any(b.done for b in app.query_one("#bottom").query(BashBlock)))
        assert not list(app.chat.query(BashBlock))
        assert not app.session.agent.steering_queue and "Steering" not in str(app.pending.render())
        assert not any(isinstance(m, BashExecutionMessage) for m in app.session.messages)  # the turn runs
        gate.set()
        await until(pilot, lambda: any(isinstance(m, BashExecutionMessage) for m in app.session.messages))
        # then in the chat, after the answer, where the conversation records it
        await until(pilot, lambda: not list(app.query_one("#bottom").query(BashBlock)))
        # the chat mounts the card in a step of its own after the one that removes it from above the editor
        await until(pilot, lambda: isinstance(app.chat.mounted_blocks()[-1], BashBlock))
        blocks = app.chat.mounted_blocks()
        assert isinstance(blocks[-1], BashBlock) and blocks[-1].done
        assert isinstance(app.chat.items[-1], BashExecutionMessage)
        roles = [m.role for m in app.session.messages]
        assert roles[-2:] == ["assistant", "bashExecution"]
        (bash,) = [m for m in app.session.messages if isinstance(m, BashExecutionMessage)]
        assert "during-the-answer" in bash.output
        await submit_and_wait(pilot, app, "next")
        assert script.call_count == 2 and last_user_text(script) == "next"


async def test_slash_completion_offers_commands_and_tab_accepts(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "/sess")
        assert app.menu.is_shown
        assert app.menu.chosen() is not None and app.menu.chosen().value == "session"
        await pilot.press("tab")
        assert app.editor.text == "/session "
        assert not app.menu.is_shown


async def test_at_completion_offers_project_files_but_not_ignored_ones(
    tmp_path: Path, agent_dir: Path
) -> None:
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "readme_copy.md").write_text("x")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "readme.md").write_text("x")
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)
        await type_text(pilot, "look at @readme")
        assert app.menu.is_shown
        values = [c.value for c in app.menu.candidates]
        assert "@docs/readme.md" in values and not any("build" in v for v in values)
        await pilot.press("enter")
        assert app.editor.text == "look at @docs/readme.md "


async def test_argument_completion_from_an_extension_and_for_model(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "deploy.py"
    ext.write_text(
        "def register(pi):\n"
        "    pi.register_command('deploy', {'handler': lambda a, c: None,\n"
        "        'get_argument_completions': lambda p: [e for e in ['staging', 'production'] if e.startswith(p)]})\n"
    )
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "/deploy pro")
        assert [c.value for c in app.menu.candidates] == ["production"]
        await pilot.press("tab")
        assert app.editor.text == "/deploy production "
        app.editor.set_text("")
        await type_text(pilot, "/model fau")
        assert [c.value for c in app.menu.candidates] == ["faux/faux-1"]


async def test_escape_kills_a_running_bang_command(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "!sleep 30")
        await pilot.press("enter")
        await until(pilot, lambda: app.user_bash.running)
        block = app.chat.query_one(BashBlock)
        # as pi: a line under the command says it runs and which key stops it, its spinner turning
        running = card_lines(block)[-1]
        assert running[0] in WorkingLine.FRAMES and running[1:] == " Running... (escape/ctrl+c to cancel)", (
            running
        )
        await until(pilot, lambda: card_lines(block)[-1][0] != running[0])
        await pilot.press("escape")
        await until(pilot, lambda: any(isinstance(m, BashExecutionMessage) for m in app.session.messages))
        (message,) = [m for m in app.session.messages if isinstance(m, BashExecutionMessage)]
        assert message.cancelled
        assert "-error" in block.classes
        assert card_lines(block) == ["✗ $ sleep 30", "(cancelled)"]


async def test_ctrl_c_kills_a_running_bang_command_and_does_not_count_toward_quitting(
    tmp_path: Path, agent_dir: Path
) -> None:
    # The running line names Ctrl+C as pi's does: it stops the command (pi 0.87.1 names it but only clears
    # the editor), and a second Ctrl+C soon after is a first press again, not a quit.
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "!sleep 30")
        await pilot.press("enter")
        await until(pilot, lambda: app.user_bash.running)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: any(isinstance(m, BashExecutionMessage) for m in app.session.messages))
        (message,) = [m for m in app.session.messages if isinstance(m, BashExecutionMessage)]
        assert message.cancelled
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running


async def test_a_second_bang_command_while_one_runs_goes_back_to_the_editor(
    tmp_path: Path, agent_dir: Path
) -> None:
    """As pi: the warning says to stop the running command first and the second one is kept in the
    editor, not lost."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "!sleep 30")
        await pilot.press("enter")
        await until(pilot, lambda: app.user_bash.running)
        await type_text(pilot, "!echo second")
        await pilot.press("enter")
        await until(pilot, lambda: any("already running" in b.text for b in app.chat.query(NoticeBlock)))
        assert app.editor.text == "!echo second"
        app.editor.set_text("")
        await pilot.press("escape")
        await until(pilot, lambda: not app.user_bash.running)


async def test_streamed_text_is_written_in_the_gaps_between_key_presses(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.blocks import KEY_QUIET_SECONDS, MAX_TYPING_DELAY, typing_delay
    from pi_tui.modes.interactive.blocks_base import TypingClock

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        TypingClock.last_key = 0.0
        assert typing_delay(100.0, 99.9) == 0.0  # nobody typing: write when due
        await pilot.press("a")
        key = TypingClock.last_key
        assert key > 0.0  # the editor's key press was recorded
        assert abs(typing_delay(key + 0.01, key) - (KEY_QUIET_SECONDS - 0.01)) < 1e-6  # wait for a gap
        # (within float rounding: key + quiet - key need not equal quiet exactly)
        assert typing_delay(key + KEY_QUIET_SECONDS, key) < 1e-9  # a gap: write now
        assert typing_delay(key + 0.01, key + 0.01 - MAX_TYPING_DELAY) < 1e-9  # held back long enough


async def test_enter_in_a_burst_of_keys_accepts_the_completion_of_the_whole_text(
    tmp_path: Path, agent_dir: Path
) -> None:
    """Keys that arrive together (a fast typist, a terminal sending "/context⏎" at once) are all handled
    before the Changed messages of their inserts: Enter must not accept what the menu offered for "/c"."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "/c")
        assert app.menu.is_shown and app.menu.chosen() is not None
        assert app.menu.chosen().value != "context"  # the menu's first choice for "/c" is another command
        for ch in "ontext":  # queued at once, as a burst reaches the editor
            app.editor.post_message(events.Key(ch, ch))
        app.editor.post_message(events.Key("enter", "\r"))
        await until(pilot, lambda: not app.editor.text)
        assert app.editor.prompt_history.entries[-1].strip() == "/context"


async def test_at_completion_offers_a_file_created_after_start_up(tmp_path: Path, agent_dir: Path) -> None:
    """Files written while the app runs (by you, or by the agent's write tool) are offered too, as pi's
    per-query listing does: a new ``@`` mention lists the project again."""
    (tmp_path / "old.md").write_text("x")
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)
        (tmp_path / "brandnew.md").write_text("x")
        await type_text(pilot, "see @")
        await until(pilot, lambda: "brandnew.md" in app.files.paths)
        await type_text(pilot, "brandn")
        assert app.menu.is_shown
        assert "@brandnew.md" in [c.value for c in app.menu.candidates]


async def test_an_answer_aborted_with_escape_says_operation_aborted(
    tmp_path: Path, agent_dir: Path, fake: FakeLLM
) -> None:
    """pi's words for an answer stopped with Escape ("Operation aborted"), not the HTTP provider's
    internal "Request was aborted", which the chat showed while the resumed chat said pi's."""
    fake.script([Reply([text("Counting " + " ".join(f"w{i}" for i in range(400)))], frame_delay=0.05)])

    def create(_trust: bool | None) -> Any:
        return create_session(parse_args(["--model", "fake-anthropic/claude-fake"]), tmp_path)

    app = PiApp(create, cwd=tmp_path, agent_dir=agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "count")
        await pilot.press("enter")
        await until(pilot, lambda: any("Counting" in b.text for b in app.chat.query(AssistantText)))
        await pilot.press("escape")
        await until(pilot, lambda: not app._busy)
        notices = [b.text for b in app.chat.query(NoticeBlock)]
        assert "Operation aborted" in notices
        assert not any("Request was aborted" in n for n in notices)


async def test_thinking_is_whole_from_the_start_and_ctrl_o_leaves_it(tmp_path: Path, agent_dir: Path) -> None:
    """pi shows thinking whole (no fold to open with a key or a click); Ctrl+O expands tool output only."""
    thought = "first line of the thought\nsecond line nobody could read without a mouse"
    script = FauxScript(faux_reply(faux_thinking(thought), "answer"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "think")
        await pilot.press("enter")
        await until(pilot, lambda: not app._busy and app.chat.query(ThinkingBlock))
        block = app.chat.query_one(ThinkingBlock)

        def text() -> str:
            return " ".join(s.text.strip() for s in block.render_lines(block.region.reset_offset))

        assert "second line nobody could read" in text()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "second line nobody could read" in text() and not block.hidden


async def test_picking_the_current_model_again_takes_what_models_json_says_now(
    tmp_path: Path, agent_dir: Path, fake: FakeLLM
) -> None:
    """As pi: /model re-reads models.json, and Enter on the model in use takes its new definition. A
    fixed ``baseUrl`` was listed but the session kept the old one, so every prompt still failed."""
    import json

    models_json = agent_dir / "models.json"
    working = models_json.read_text()
    broken = json.loads(working)
    broken["providers"]["fake-anthropic"]["baseUrl"] = "http://127.0.0.1:9"  # nothing listens there
    models_json.write_text(json.dumps(broken))
    fake.script([Reply([text("reached")])])

    def create(_trust: bool | None) -> Any:
        return create_session(parse_args(["--model", "fake-anthropic/claude-fake"]), tmp_path)

    app = PiApp(create, cwd=tmp_path, agent_dir=agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert app.session.model.base_url == "http://127.0.0.1:9"
        models_json.write_text(working)
        await type_text(pilot, "/model")
        app.menu.hide()
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "ModelScreen")
        await pilot.press("enter")  # the highlighted row: the model in use
        await until(pilot, lambda: type(app.screen).__name__ != "ModelScreen")
        assert app.session.model.base_url == json.loads(working)["providers"]["fake-anthropic"]["baseUrl"]
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await until(
            pilot, lambda: not app._busy and any("reached" in b.text for b in app.chat.query(AssistantText))
        )


async def test_the_queue_hint_names_the_dequeue_key_as_pi_writes_it(tmp_path: Path, agent_dir: Path) -> None:
    """pi writes the key that brings queued messages back capitalised ('Alt+Up'), and the user's own key
    when keybindings.json rebinds it; pressing that key brings the message back."""
    import json

    (agent_dir / "keybindings.json").write_text(json.dumps({"app.message.dequeue": ["ctrl+shift+u"]}))
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("first")), faux_reply("second"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "later")
        await pilot.press("alt+enter")
        await until(pilot, lambda: "Follow-up: later" in str(app.pending.render()))
        assert "↳ Ctrl+Shift+U to edit all queued messages" in str(app.pending.render())
        await pilot.press("ctrl+shift+u")
        await until(pilot, lambda: app.editor.text == "later")
        gate.set()
        await until(pilot, lambda: not app._busy)


async def test_the_queue_hint_says_alt_up_by_default(tmp_path: Path, agent_dir: Path) -> None:
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("first")), faux_reply("second"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "later")
        await pilot.press("enter")
        await until(pilot, lambda: "Steering: later" in str(app.pending.render()))
        assert str(app.pending.render()).endswith("↳ Alt+Up to edit all queued messages")
        gate.set()
        await until(pilot, lambda: script.call_count == 2 and not app._busy)


async def test_alt_up_says_how_many_queued_messages_it_restored_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi's status after Alt+Up: 'Restored N queued message(s) to editor', or 'No queued messages to
    restore' with nothing queued; a draft of only spaces is not kept after the restored text."""
    gate = asyncio.Event()
    script = FauxScript(gated(gate, faux_reply("first")), faux_reply("second"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("alt+up")
        await until(
            pilot, lambda: app.chat.items and str(app.chat.items[-1].text) == "No queued messages to restore"
        )
        await type_text(pilot, "start")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.is_streaming)
        await type_text(pilot, "steer")
        await pilot.press("enter")
        await type_text(pilot, "later")
        await pilot.press("alt+enter")
        await until(pilot, lambda: "Follow-up: later" in str(app.pending.render()))
        await type_text(pilot, "  ")
        await pilot.press("alt+up")
        await until(pilot, lambda: app.editor.text == "steer\n\nlater")
        assert str(app.chat.items[-1].text) == "Restored 2 queued messages to editor"
        gate.set()
        await until(pilot, lambda: not app._busy)
