from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.compaction import CompactionCancelled
from pi_tui.extensions.api import CancelledByExtension
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, example, model_requests, module, open_session, session_entries, user_texts


def _e(*names: str) -> list[str]:
    return [arg for name in names for arg in ("-e", example(name))]


async def test_tool_call_block_turns_into_an_error_result_and_nothing_runs(
    fake: FakeLLM, project: Path
) -> None:
    (project / "notes.txt").write_text("a note")
    fake.script(
        [
            Reply(
                [
                    tool_call("write", {"path": "out.txt", "content": "x"}),
                    tool_call("read", {"path": "notes.txt"}),
                ]
            ),
            Reply([text("ok")]),
        ]
    )
    async with open_session(_e("read_only_mode"), project, model=MODEL) as session:
        await session.prompt("write a file")

    results = model_requests(fake)[1].tool_results()
    assert [(r.content, r.is_error) for r in results] == [
        ("Not allowed in read-only mode", True),
        ("a note", False),
    ]
    assert not (project / "out.txt").exists()


async def test_tool_call_input_is_a_read_only_copy_and_narrowing_works(fake: FakeLLM, project: Path) -> None:
    fake.script(
        [
            Reply(
                [
                    tool_call("bash", {"command": "echo hi"}),
                    tool_call("write", {"path": "w.txt", "content": "x"}),
                ]
            ),
            Reply([text("ok")]),
        ]
    )
    async with open_session(_e("bash_narrowing"), project, model=MODEL) as session:
        await session.prompt("go")
        ext = module(session, "bash_narrowing")

    assert ext.COMMANDS == ["echo hi"]
    assert ext.MUTATION_ERRORS == ["TypeError"]
    bash, write = model_requests(fake)[1].tool_results()
    assert bash.content.strip() == "hi" and not bash.is_error  # the tool ran the original command
    assert (write.content, write.is_error) == ("no writes to w.txt", True)


async def test_tool_execution_events_report_start_and_end(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([tool_call("bash", {"command": "echo progress"}, id="call_1")]), Reply([text("ok")])])
    async with open_session(_e("tool_progress"), project, model=MODEL) as session:
        await session.prompt("run it")
        events = module(session, "tool_progress").EVENTS

    assert events[0] == ("start", "call_1", "bash", {"command": "echo progress"})
    assert events[-1][:3] == ("end", "call_1", False) and "progress" in events[-1][3]
    assert all(e[0] == "update" and e[1] == "call_1" for e in events[1:-1])


async def test_tool_result_patches_apply_even_to_error_results(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([tool_call("read", {"path": "missing.txt"})]), Reply([text("ok")])])
    async with open_session(_e("audit_result"), project, model=MODEL) as session:
        await session.prompt("read it")
        entries = session_entries(session)

    (result,) = model_requests(fake)[1].tool_results()
    assert result.content.endswith("\n\nAudit: logged") and not result.is_error
    stored = next(e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult")
    assert stored["isError"] is False and stored["content"][-1]["text"] == "\n\nAudit: logged"


async def test_session_start_restores_state_from_entries_in_a_new_process(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("ok")])])
    async with open_session(_e("state_restore"), project, model=MODEL) as session:
        await session.prompt("/bump")
        await session.prompt("/bump")
        await session.prompt("hello")  # an answer makes the session file exist
        first = dict(module(session, "state_restore").STATE)

    async with open_session(["-c", *_e("state_restore")], project, model=MODEL) as resumed:
        await resumed.start()
        restored = dict(module(resumed, "state_restore").STATE)

    assert first["count"] == 2 and restored["count"] == 2
    assert restored["starts"] == ["startup"]
    assert len(model_requests(fake)) == 1  # commands never reach the model


async def test_session_before_switch_cancels_new_and_resume(project: Path, tmp_path: Path) -> None:
    other = SessionManager.in_memory(project)
    async with open_session(_e("no_switch"), project) as session:
        before = session.session_manager.id
        with pytest.raises(CancelledByExtension):
            await session.new_session()
        with pytest.raises(CancelledByExtension):
            await session.switch_session(other)
        reasons = module(session, "no_switch").REASONS
        after = session.session_manager.id

    assert after == before
    assert reasons == ["new", "resume"]


async def test_session_before_fork_cancels_or_skips_the_restore(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("first")]), Reply([text("second")])])
    async with open_session(_e("fork_guard"), project, model=MODEL) as session:
        await session.prompt("one")
        await session.prompt("two")
        ext = module(session, "fork_guard")
        answer_id = session.session_manager.get_branch()[-3].id  # the first answer
        original = session.session_manager.path
        with pytest.raises(CancelledByExtension):
            await session.fork(answer_id)
        assert session.session_manager.path == original

        ext.MODE["value"] = "skip"
        kept = list(session.agent.messages)
        await session.fork(answer_id)
        forked_messages = list(session.agent.messages)
        forked_path = session.session_manager.path
        reloaded = module(session, "fork_guard")

    assert forked_path != original
    assert forked_messages == kept  # skipConversationRestore: the in-memory conversation stays
    assert ext.SEEN == [answer_id, answer_id]
    # the fork loads the extension afresh, as pi's new runtime; the fresh one hears of the fork
    assert reloaded is not ext and reloaded.SEEN == [f"forked from {original}"]


async def test_session_before_compact_cancels_or_supplies_the_summary(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    fake.script([Reply([text("noted " * 50)]) for _ in range(4)])
    async with open_session(_e("custom_compaction"), project, model=MODEL) as session:
        for n in range(3):
            await session.prompt(f"part {n}: " + "lorem ipsum " * 100)
        with pytest.raises(CompactionCancelled):
            await session.compact("cancel")
        result = await session.compact()
        await session.prompt("and now?")
        compacted = module(session, "custom_compaction").COMPACTED

    assert result.summary == "My custom summary" and result.from_hook
    assert compacted == [("context_transform", True)]
    last = model_requests(fake)[-1]
    assert "My custom summary" in user_texts(last)[0]
    assert len(model_requests(fake)) == 4  # the extension's summary needed no summarisation request


async def test_session_before_tree_supplies_the_summary_and_label_or_cancels(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("first")]), Reply([text("second")])])
    async with open_session(_e("tree_summary"), project, model=MODEL) as session:
        await session.prompt("one")
        await session.prompt("two")
        ext = module(session, "tree_summary")
        first_answer = session.session_manager.get_branch()[-3].id
        old_leaf = session.session_manager.get_leaf_id()

        ext.MODE["value"] = "cancel"
        with pytest.raises(CancelledByExtension):
            await session.navigate(first_answer, summary="what I did")
        assert session.session_manager.get_leaf_id() == old_leaf

        ext.MODE["value"] = "summary"
        await session.navigate(first_answer, summary="what I did")
        (event,) = ext.TREE_EVENTS
        leaf = session.session_manager.get_entry(event["new_leaf_id"])
        label = session.session_manager.get_label(leaf.id)

    assert leaf.type == "branch_summary" and leaf.summary == "Custom branch summary"
    assert leaf.parent_id == first_answer
    assert label == "my-label"
    assert event["old_leaf_id"] == old_leaf
    assert event["from_extension"] is True and event["summary_entry"].id == leaf.id


async def test_session_shutdown_runs_when_the_session_closes(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("ok")])])
    async with open_session(_e("shutdown_persist"), project, model=MODEL) as session:
        await session.prompt("hi")
        assert not (project / "shutdown-state.txt").exists()

    assert (project / "shutdown-state.txt").read_text().startswith("entries=")


async def test_model_select_reports_the_new_and_previous_model(fake: FakeLLM, project: Path) -> None:
    async with open_session(_e("model_watch"), project, model=MODEL) as session:
        other = session.registry.find("fake-openai", "gpt-fake")
        session.set_model(other)
        await session.extensions.drain()
        changes = module(session, "model_watch").CHANGES

    assert changes == [("gpt-fake", "claude-fake", "set")]


async def test_user_bash_can_replace_the_execution(project: Path) -> None:
    async with open_session(_e("user_bash_remote"), project) as session:
        runner = session.extensions
        remote = await runner.emit_user_bash("remote ls", False, str(project))
        local = await runner.emit_user_bash("ls", True, str(project))

    assert remote == {
        "result": {
            "output": "ran 'ls' on the build host",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    }
    assert local is None


async def test_resources_discover_adds_the_extensions_skills_and_templates(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("shipping")])])
    async with open_session(_e("resource_provider"), project, model=MODEL) as session:
        await session.prompt("/shipit fast")
        runner = session.extensions
        skills = [s.name for s in session.resources.skills]
        ext = module(session, "resource_provider")

    (request,) = model_requests(fake)
    assert user_texts(request) == ["Ship it: fast now."]
    assert "greeter" in skills and "greeter" in request.system
    assert ext.REASONS == ["startup"]
    assert runner.theme_paths == [str(Path(example("resource_provider")) / "themes" / "dark.json")]
