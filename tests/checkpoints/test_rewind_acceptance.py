from __future__ import annotations

import json
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .conftest import open_session, user_entry

ORIGINAL = b"first line\r\nsecond \xff\xfe line\r\nthird line\r\n"


async def test_edit_then_rewind_leaves_the_file_byte_identical(fake: FakeLLM, project: Path) -> None:
    target = project / "a.txt"
    target.write_bytes(ORIGINAL)
    fake.script(
        [
            Reply([tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "second", "newText": "2nd"}]})]),
            Reply([text("edited")]),
        ]
    )
    async with open_session(project) as session:
        await session.prompt("change it")
        assert target.read_bytes() != ORIGINAL
        prompt = user_entry(session, "change it")
        result = await session.rewind(prompt.id, "both")
        assert result.applied and result.restored == ["a.txt"]
        assert result.editor_text == "change it"
        assert session.session_manager.get_leaf_entry().parent_id == prompt.parent_id
    assert target.read_bytes() == ORIGINAL


async def test_write_of_a_new_file_is_removed_by_the_rewind(fake: FakeLLM, project: Path) -> None:
    fake.script(
        [Reply([tool_call("write", {"path": "sub/new.txt", "content": "hello"})]), Reply([text("ok")])]
    )
    async with open_session(project) as session:
        await session.prompt("make it")
        assert (project / "sub" / "new.txt").read_text() == "hello"
        result = await session.rewind(user_entry(session, "make it").id, "code")
        assert result.restored == ["sub/new.txt"]
    assert not (project / "sub" / "new.txt").exists()


async def test_bash_changes_sed_rm_and_a_new_file_are_restored(fake: FakeLLM, project: Path) -> None:
    (project / "f.txt").write_text("alpha\nbeta\n")
    (project / "gone.txt").write_text("keep me\n")
    (project / "untouched.txt").write_text("same\n")
    command = "sed -i 's/alpha/ALPHA/' f.txt && rm gone.txt && echo fresh > made.txt"
    fake.script([Reply([tool_call("bash", {"command": command})]), Reply([text("done")])])
    async with open_session(project) as session:
        await session.prompt("run it")
        assert (project / "f.txt").read_text() == "ALPHA\nbeta\n"
        assert not (project / "gone.txt").exists()
        result = await session.rewind(user_entry(session, "run it").id, "code")
        assert sorted(result.restored) == ["f.txt", "gone.txt", "made.txt"]
    assert (project / "f.txt").read_text() == "alpha\nbeta\n"
    assert (project / "gone.txt").read_text() == "keep me\n"
    assert not (project / "made.txt").exists()
    assert (project / "untouched.txt").read_text() == "same\n"


async def test_a_file_the_user_changed_is_a_conflict_and_is_not_overwritten(
    fake: FakeLLM, project: Path
) -> None:
    target = project / "a.txt"
    target.write_text("one\n")
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "two\n"})]), Reply([text("ok")])])
    async with open_session(project) as session:
        await session.prompt("write")
        target.write_text("mine\n")  # the user edits after the agent
        leaf = session.session_manager.get_leaf_id()
        entries = len(session.session_manager.get_entries())

        stopped = await session.rewind(user_entry(session, "write").id, "both")
        assert not stopped.applied
        assert [c.path for c in stopped.conflicts] == ["a.txt"]
        assert "-mine" in stopped.conflicts[0].diff and "+one" in stopped.conflicts[0].diff
        assert target.read_text() == "mine\n"
        assert (
            session.session_manager.get_leaf_id() == leaf
            and len(session.session_manager.get_entries()) == entries
        )

        kept = await session.rewind(user_entry(session, "write").id, "code", resolutions={"a.txt": "keep"})
        assert kept.applied and kept.kept == ["a.txt"] and target.read_text() == "mine\n"

        forced = await session.rewind(user_entry(session, "write").id, "code", force=True)
        assert forced.restored == ["a.txt"] and target.read_text() == "one\n"
        # the user's version was kept in the store: undoing the restore brings it back
        undone = await session.undo()
        assert undone is not None and undone[0] == "restore"
    assert target.read_text() == "mine\n"


async def test_undoing_a_rewind_restores_the_later_state(fake: FakeLLM, project: Path) -> None:
    target = project / "a.txt"
    target.write_text("v0\n")
    fake.script(
        [
            Reply([tool_call("write", {"path": "a.txt", "content": "v1\n"})]),
            Reply([text("one")]),
            Reply([tool_call("write", {"path": "a.txt", "content": "v2\n"})]),
            Reply([text("two")]),
        ]
    )
    async with open_session(project) as session:
        await session.prompt("first")
        await session.prompt("second")
        later_leaf = session.session_manager.get_leaf_id()
        await session.rewind(user_entry(session, "second").id, "both")
        assert target.read_text() == "v1\n"
        # jumping back (conversation and code) restores the later state
        back = await session.rewind(later_leaf, "both")
        assert back.applied and target.read_text() == "v2\n"
        record = session.session_manager.get_leaf_entry()  # the restore is recorded after the entry
        assert record.parent_id == later_leaf and back.record_id == record.id


async def test_undo_reverts_the_last_prompt_and_a_second_undo_redoes_it(fake: FakeLLM, project: Path) -> None:
    target = project / "a.txt"
    target.write_text("v0\n")
    fake.script(
        [
            Reply([tool_call("write", {"path": "a.txt", "content": "v1\n"})]),
            Reply([text("one")]),
            Reply([tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "v1", "newText": "v2"}]})]),
            Reply([text("two")]),
        ]
    )
    async with open_session(project) as session:
        await session.prompt("first")
        await session.prompt("second")
        first = await session.undo()
        assert first is not None and first[0] == "prompt" and target.read_text() == "v1\n"
        second = await session.undo()
        assert second is not None and second[0] == "restore" and target.read_text() == "v2\n"


async def test_a_session_with_checkpoints_reopens_and_rewinds_after_a_restart(
    fake: FakeLLM, project: Path
) -> None:
    target = project / "a.txt"
    target.write_text("before\n")
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "after\n"})]), Reply([text("ok")])])
    async with open_session(project) as session:
        await session.prompt("go")
        path = session.session_manager.path
    assert path is not None
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    results = [e for e in lines if e.get("message", {}).get("role") == "toolResult"]
    checkpoint = results[0]["message"]["details"]["checkpoint"]
    assert checkpoint["kind"] == "write" and checkpoint["files"][0]["path"] == "a.txt"

    async with open_session(project, "--session", str(path)) as reopened:
        assert [m.role for m in reopened.messages] == ["user", "assistant", "toolResult", "assistant"]
        result = await reopened.rewind(user_entry(reopened, "go").id, "code")
        assert result.restored == ["a.txt"]
    assert target.read_text() == "before\n"


async def test_conversation_only_leaves_the_files(fake: FakeLLM, project: Path) -> None:
    target = project / "a.txt"
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "x"})]), Reply([text("ok")])])
    async with open_session(project) as session:
        await session.prompt("go")
        result = await session.rewind(user_entry(session, "go").id, "conversation")
        assert result.restored == [] and result.editor_text == "go"
    assert target.read_text() == "x"


async def test_undo_brings_back_the_users_own_edit_made_before_the_prompt(
    fake: FakeLLM, project: Path
) -> None:
    target = project / "a.txt"
    fake.script(
        [
            Reply([tool_call("write", {"path": "a.txt", "content": "agent v1\n"})]),
            Reply([text("one")]),
            Reply([tool_call("write", {"path": "a.txt", "content": "agent v2\n"})]),
            Reply([text("two")]),
        ]
    )
    async with open_session(project) as session:
        await session.prompt("first")
        target.write_text("my edit\n")  # between the prompts
        await session.prompt("second")
        outcome = await session.undo()
        assert outcome is not None and outcome[1].applied
    assert target.read_text() == "my edit\n"


async def test_a_file_that_cannot_be_written_is_reported_and_the_others_are_restored(
    fake: FakeLLM, project: Path
) -> None:
    (project / "a.txt").write_text("a0\n")
    (project / "b.txt").write_text("b0\n")
    fake.script(
        [
            Reply(
                [
                    tool_call("write", {"path": "a.txt", "content": "a1\n"}),
                    tool_call("write", {"path": "b.txt", "content": "b1\n"}),
                ]
            ),
            Reply([text("ok")]),
        ]
    )
    async with open_session(project) as session:
        await session.prompt("go")
        (project / "a.txt").unlink()
        (project / "a.txt").mkdir()  # now a directory: the restore cannot write it
        result = await session.rewind(user_entry(session, "go").id, "code", force=True)
        assert result.restored == ["b.txt"] and [p for p, _ in result.failed] == ["a.txt"]
        record = session.session_manager.get_leaf_entry()
        assert [f["path"] for f in record.data["files"]] == ["b.txt"]
    assert (project / "b.txt").read_text() == "b0\n" and (project / "a.txt").is_dir()


async def test_a_restore_writes_through_a_symlink(fake: FakeLLM, project: Path) -> None:
    real = project / "real.txt"
    real.write_text("r0\n")
    (project / "link.txt").symlink_to("real.txt")
    fake.script([Reply([tool_call("write", {"path": "link.txt", "content": "r1\n"})]), Reply([text("ok")])])
    async with open_session(project) as session:
        await session.prompt("go")
        assert real.read_text() == "r1\n"
        await session.rewind(user_entry(session, "go").id, "code")
    assert (project / "link.txt").is_symlink() and real.read_text() == "r0\n"
