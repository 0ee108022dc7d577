from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool

from .helpers import run, run_error, run_text


async def test_creates_parent_directories_and_reports_like_pi_087(tmp_path: Path) -> None:
    text = await run_text(create_write_tool(tmp_path), {"path": "a/b/c.txt", "content": "hello"})
    assert text == "Successfully wrote to a/b/c.txt"
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "hello"


async def test_overwrites_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old content that is longer")
    await run(create_write_tool(tmp_path), {"path": "f.txt", "content": "new"})
    assert (tmp_path / "f.txt").read_text() == "new"


async def test_non_ascii_content_is_written_as_utf8(tmp_path: Path) -> None:
    text = await run_text(create_write_tool(tmp_path), {"path": "e.txt", "content": "é😀"})
    assert text == "Successfully wrote to e.txt"
    assert (tmp_path / "e.txt").read_bytes() == "é😀".encode()


async def test_content_is_written_verbatim(tmp_path: Path) -> None:
    content = "line1\r\nline2\n\ttabbed\n"
    await run(create_write_tool(tmp_path), {"path": "v.txt", "content": content})
    assert (tmp_path / "v.txt").read_bytes() == content.encode()


async def test_at_prefixed_and_absolute_paths_work(tmp_path: Path) -> None:
    tool = create_write_tool(tmp_path / "elsewhere")
    await run(tool, {"path": f"@{tmp_path / 'abs.txt'}", "content": "x"})
    assert (tmp_path / "abs.txt").read_text() == "x"


async def test_a_write_and_an_edit_on_one_file_are_serialised(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("start\n")
    writer, editor = create_write_tool(tmp_path), create_edit_tool(tmp_path)
    await asyncio.gather(
        run(writer, {"path": "f.txt", "content": "alpha\nbeta\n"}),
        run(editor, {"path": "f.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}),
    )
    # The write was queued first, so the edit sees its content.
    assert target.read_text() == "alpha\nBETA\n"


async def test_an_aborted_signal_writes_nothing(tmp_path: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    error = await run_error(create_write_tool(tmp_path), {"path": "f.txt", "content": "x"}, signal=signal)
    assert str(error) == "Operation aborted"
    assert not (tmp_path / "f.txt").exists()


async def test_writing_over_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    error = await run_error(create_write_tool(tmp_path), {"path": "d", "content": "x"})
    assert str(error).startswith("Could not write file: d.")
