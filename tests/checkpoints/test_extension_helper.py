from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .conftest import open_session, user_entry

EXTENSION = """
from pathlib import Path
from pi_tui.extensions.api import TextContent, ToolResult, track_file_changes


def register(pi):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        tracker = track_file_changes(ctx, ["notes.md", "old.md"], tool="append_note")
        notes = Path(ctx.cwd, "notes.md")
        notes.write_text(notes.read_text() + params["line"] + "\\n")
        Path(ctx.cwd, "old.md").unlink()
        return ToolResult(content=[TextContent(text="noted")], details=tracker.details({"lines": 1}))

    pi.register_tool(
        name="append_note",
        description="Append a line to notes.md",
        parameters={"type": "object", "properties": {"line": {"type": "string"}}, "required": ["line"]},
        execute=execute,
    )
"""


async def test_an_extension_tool_records_its_changes_through_the_api(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    extension = tmp_path / "note_ext.py"
    extension.write_text(EXTENSION)
    (project / "notes.md").write_text("# notes\n")
    (project / "old.md").write_text("old\n")
    fake.script([Reply([tool_call("append_note", {"line": "remember"})]), Reply([text("ok")])])
    async with open_session(project, "-e", str(extension)) as session:
        await session.prompt("note it")
        result_entry = next(
            e
            for e in session.session_manager.get_branch()
            if getattr(getattr(e, "message", None), "role", "") == "toolResult"
        )
        details = result_entry.message.details
        assert details["lines"] == 1 and details["checkpoint"]["kind"] == "append_note"
        assert (project / "notes.md").read_text() == "# notes\nremember\n"
        result = await session.rewind(user_entry(session, "note it").id, "code")
        assert sorted(result.restored) == ["notes.md", "old.md"]
    assert (project / "notes.md").read_text() == "# notes\n"
    assert (project / "old.md").read_text() == "old\n"
