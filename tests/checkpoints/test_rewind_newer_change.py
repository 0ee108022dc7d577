"""A file changed on disk while a rewind is under way (after it was planned, before it is written) is
left as the user made it and reported, never overwritten without asking."""

from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .conftest import open_session, user_entry

# Runs between the rewind's plan and its file writes (rewinding "both" moves the conversation first).
EDITOR = """
from pathlib import Path

def register(pi):
    @pi.on("session_before_tree")
    def users_editor_saves(event, ctx):
        Path({path!r}).write_text("saved in the editor meanwhile\\n")
"""


async def test_a_file_saved_while_the_rewind_runs_is_not_overwritten(fake: FakeLLM, project: Path) -> None:
    target = project / "a.txt"
    target.write_text("one\n")
    extension = project.parent / "editor.py"
    extension.write_text(EDITOR.format(path=str(target)))
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "two\n"})]), Reply([text("ok")])])
    async with open_session(project, "-e", str(extension)) as session:
        await session.prompt("write")
        assert target.read_text() == "two\n"
        result = await session.rewind(user_entry(session, "write").id, "both")
        assert result.restored == []
        assert [path for path, _ in result.failed] == ["a.txt"]
        assert "changed on disk" in result.failed[0][1]
    assert target.read_text() == "saved in the editor meanwhile\n"
