from __future__ import annotations

from pathlib import Path

from pi_tui.ai.stream import AbortSignal
from pi_tui.checkpoints import Checkpointer
from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool


async def test_edit_and_write_record_before_and_after_in_details(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_bytes(b"x = 1\r\n")
    cp = Checkpointer(project, tmp_path / "store")
    edit = create_edit_tool(project, on_change=cp.record_file)
    write = create_write_tool(project, on_change=cp.record_file)
    args = {"path": "a.txt", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}
    result = await edit.execute("c1", args, AbortSignal(), None)
    files = result.details["checkpoint"]["files"]
    assert files[0]["path"] == "a.txt"
    assert (
        cp.store.get(files[0]["before"]) == b"x = 1\r\n" and cp.store.get(files[0]["after"]) == b"x = 2\r\n"
    )
    assert "diff" in result.details  # pi's own details stay as they were

    result = await write.execute("c2", {"path": "d/new.txt", "content": "hi"}, AbortSignal(), None)
    (change,) = result.details["checkpoint"]["files"]
    assert change == {"path": "d/new.txt", "before": None, "after": change["after"]}


async def test_a_failing_checkpoint_never_fails_the_change(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the store should be")
    cp = Checkpointer(project, blocked)
    write = create_write_tool(project, on_change=cp.record_file)
    result = await write.execute("c", {"path": "a.txt", "content": "hello"}, AbortSignal(), None)
    assert (project / "a.txt").read_text() == "hello" and result.details is None
    edit = create_edit_tool(project, on_change=cp.record_file)
    args = {"path": "a.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}
    result = await edit.execute("c", args, AbortSignal(), None)
    assert (project / "a.txt").read_text() == "bye" and "checkpoint" not in result.details
