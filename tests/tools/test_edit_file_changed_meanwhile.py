"""An edit never overwrites a change another program made to the file while the edit was being written.

The edit is matched against the file as read; its new content is written to a temporary file, flushed,
and renamed over the file only if the file still has the content that was read. Here an editor saves the
file during that flush: the fake fsync (the seam the write goes through) saves it, as another process
would at that moment, then lets the flush go on.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_tui.agent.tool import ToolError
from pi_tui.tools.edit import create_edit_tool
from pi_tui.util.atomic_file import FileChangedError, replace_file_bytes

from .helpers import run


def _save_during_fsync(monkeypatch: pytest.MonkeyPatch, saves: list[Callable[[], None]]) -> None:
    real = os.fsync

    def fsync(fd: int) -> None:
        if saves:
            saves.pop(0)()  # the editor saves while our new content is being flushed
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


async def test_an_edit_applies_to_the_content_an_editor_saved_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "f.py"
    f.write_text("a = 1\nb = 2\n")
    _save_during_fsync(monkeypatch, [lambda: f.write_text("a = 1\nb = 2\nc = 3  # the user's line\n")])
    await run(
        create_edit_tool(tmp_path), {"path": "f.py", "edits": [{"oldText": "a = 1", "newText": "a = 10"}]}
    )
    assert f.read_text() == "a = 10\nb = 2\nc = 3  # the user's line\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py"]


async def test_an_edit_whose_text_an_editor_removed_meanwhile_fails_and_keeps_the_users_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "f.py"
    f.write_text("a = 1\n")
    _save_during_fsync(monkeypatch, [lambda: f.write_text("x = 'rewritten by the user'\n")])
    with pytest.raises(ToolError, match="Could not find"):
        await run(
            create_edit_tool(tmp_path), {"path": "f.py", "edits": [{"oldText": "a = 1", "newText": "a = 2"}]}
        )
    assert f.read_text() == "x = 'rewritten by the user'\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py"]


async def test_a_file_that_keeps_changing_is_a_clear_error_and_keeps_the_last_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "f.py"
    f.write_text("a = 1\n")
    saves = [lambda n=n: f.write_text(f"a = 1\n# save {n}\n") for n in range(3)]
    _save_during_fsync(monkeypatch, saves)
    with pytest.raises(ToolError, match=r"Could not edit file: f.py. Another program changed it meanwhile"):
        await run(
            create_edit_tool(tmp_path), {"path": "f.py", "edits": [{"oldText": "a = 1", "newText": "a = 2"}]}
        )
    assert f.read_text() == "a = 1\n# save 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py"]


def test_a_write_in_place_checks_the_content_too(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("now\n")
    os.link(f, tmp_path / "g.txt")  # written in place
    with pytest.raises(FileChangedError) as caught:
        replace_file_bytes(f, b"new\n", expected=b"before\n")
    assert caught.value.errno == errno.ESTALE
    assert f.read_text() == "now\n"
    replace_file_bytes(f, b"new\n", expected=b"now\n")
    assert (tmp_path / "g.txt").read_text() == "new\n"
