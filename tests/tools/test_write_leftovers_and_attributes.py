"""The write tool's atomic replace: a killed write's temporary file is cleaned up (only ours, only stale
ones), and the replaced file keeps its extended attributes, ACL, owner and hard links, as pi's in-place
write keeps them.

The kill is real: a child process runs the write tool and is stopped with ``SIGKILL`` while its
temporary file exists (it announces that point on a pipe and waits there).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool
from pi_tui.util.atomic_file import STALE_TEMP_SECONDS, remove_stale_temps

from .helpers import run

# Runs the write tool; its first fsync (the temporary file's, before the rename) says so and waits.
_CHILD = """
import asyncio, json, os, sys
from pathlib import Path
from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.write import create_write_tool

def held_fsync(fd):
    print("in-fsync", flush=True)
    sys.stdin.read()

os.fsync = held_fsync
cwd, params = Path(sys.argv[1]), json.loads(sys.argv[2])
asyncio.run(create_write_tool(cwd).execute("c1", params, AbortSignal(), None))
"""


def _leftovers(directory: Path, name: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.startswith(f".{name}.") and p.name.endswith(".tmp"))


def _age(path: Path) -> None:
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(path, (old, old), follow_symlinks=False)


async def test_a_write_killed_before_its_rename_leaves_a_temp_file_the_next_write_removes(tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_text("original\n")
    # What must survive any cleanup: names that are not exactly our pattern, another file's temp, a link.
    decoys = {
        ".f.py.notmine.tmp": "user's",
        ".f.py.0123abcd.tmp.keep": "user's",
        ".f.py.0123ABCD.tmp": "user's",
        ".g.py.0123abcd.tmp": "another file's",
    }
    for name, content in decoys.items():
        (tmp_path / name).write_text(content)
        _age(tmp_path / name)
    (tmp_path / ".f.py.deadbeef.tmp").symlink_to(tmp_path / "elsewhere")
    _age(tmp_path / ".f.py.deadbeef.tmp")

    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    params = json.dumps({"path": "f.py", "content": "from the killed process\n"})
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path), params],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "in-fsync\n"
        (leftover,) = [p for p in _leftovers(tmp_path, "f.py") if not p.is_symlink() and p.name not in decoys]
        assert leftover.read_text() == "from the killed process\n"
        _age(leftover)
        # The writer is alive and holds its temporary file: a write meanwhile leaves that file alone.
        await run(create_write_tool(tmp_path), {"path": "f.py", "content": "while it waits\n"})
        assert leftover.exists()
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert leftover.exists()  # what a SIGKILL leaves
    assert target.read_text() == "while it waits\n"

    await run(create_write_tool(tmp_path), {"path": "f.py", "content": "next\n"})

    assert not leftover.exists()
    assert target.read_text() == "next\n"
    for name, content in decoys.items():
        assert (tmp_path / name).read_text() == content
    assert (tmp_path / ".f.py.deadbeef.tmp").is_symlink()


def test_a_young_unlocked_leftover_is_kept_until_it_is_stale(tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_text("x")
    leftover = tmp_path / ".f.py.00ff00ff.tmp"
    leftover.write_text("half")
    assert remove_stale_temps(target) == []  # a writer that does not lock may be about to rename it
    assert remove_stale_temps(target, now=time.time() + STALE_TEMP_SECONDS + 1) == [leftover]
    assert not leftover.exists()


def test_a_leftover_with_a_second_link_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "f.py"
    target.write_text("x")
    leftover = tmp_path / ".f.py.00ff00ff.tmp"
    leftover.write_text("the user linked it elsewhere")
    os.link(leftover, tmp_path / "saved.txt")
    _age(leftover)
    assert remove_stale_temps(target) == []
    assert leftover.exists()


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as Linux stores it in ``system.posix_acl_access``: (tag, permissions, id) entries."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


_UNDEFINED = 0xFFFFFFFF
# owner rw, user 4242 rw, group r, mask rw, others r
ACL = _acl((0x01, 6, _UNDEFINED), (0x02, 6, 4242), (0x04, 4, _UNDEFINED), (0x10, 6, _UNDEFINED), (0x20, 4, _UNDEFINED))


async def test_write_and_edit_keep_extended_attributes_and_the_acl(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("one\ntwo\n")
    os.setxattr(target, "user.origin", b"https://example.invalid/notes")
    os.setxattr(target, "system.posix_acl_access", ACL)
    mode = stat.S_IMODE(target.stat().st_mode)

    await run(create_write_tool(tmp_path), {"path": "notes.md", "content": "one\ntwo\nthree\n"})
    await run(create_edit_tool(tmp_path), {"path": "notes.md", "edits": [{"oldText": "two", "newText": "2"}]})

    assert target.read_text() == "one\n2\nthree\n"
    assert os.getxattr(target, "user.origin") == b"https://example.invalid/notes"
    assert os.getxattr(target, "system.posix_acl_access") == ACL
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


async def test_write_keeps_a_hard_linked_file_one_file(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("old")
    os.link(a, tmp_path / "b.txt")
    await run(create_write_tool(tmp_path), {"path": "a.txt", "content": "new"})
    assert (tmp_path / "b.txt").read_text() == "new"
    assert a.stat().st_ino == (tmp_path / "b.txt").stat().st_ino and a.stat().st_nlink == 2


async def test_write_keeps_another_users_file_theirs(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    target = tmp_path / "shared.cfg"
    target.write_text("old")
    os.chown(target, 4242, 4343)
    target.chmod(0o664)
    await run(create_write_tool(tmp_path), {"path": "shared.cfg", "content": "new"})
    after = target.stat()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (4242, 4343, 0o664)
    assert target.read_text() == "new"
