"""The write and edit tools never leave a half-written file, and keep what a user expects of the file.

The failures are real: a child process runs the tool under ``RLIMIT_FSIZE``, so the kernel refuses the
write part way (``EFBIG``), as a full disk would.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool

from .helpers import run

_CHILD = """
import asyncio, json, resource, sys
from pathlib import Path

import pytest
from pi_tui.agent.tool import ToolError
from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool

cwd, tool_name, params, limit = Path(sys.argv[1]), sys.argv[2], json.loads(sys.stdin.read()), int(sys.argv[3])
tool = (create_write_tool if tool_name == "write" else create_edit_tool)(cwd)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    asyncio.run(tool.execute("c1", params, AbortSignal(), None))
except ToolError as exc:
    print("ToolError:", exc)
except OSError as exc:
    print("OSError:", exc)
else:
    print("ok")
"""


def _run_limited(cwd: Path, tool: str, params: dict[str, object], limit: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cwd), tool, str(limit)],
        input=json.dumps(params),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_write_cut_short_by_the_file_size_limit_leaves_the_old_file_whole(tmp_path: Path) -> None:
    original = b"precious user code\n" * 100
    (tmp_path / "f.py").write_bytes(original)
    out = _run_limited(tmp_path, "write", {"path": "f.py", "content": "x" * 200_000}, 100_000)
    assert out.startswith("ToolError: Could not write file: f.py."), out
    assert (tmp_path / "f.py").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py"]  # no temporary file left behind


def test_an_edit_cut_short_by_the_file_size_limit_leaves_the_old_file_whole(tmp_path: Path) -> None:
    original = b"start\n" + b"y" * 50_000 + b"\nend\n"
    (tmp_path / "g.txt").write_bytes(original)
    params = {"path": "g.txt", "edits": [{"oldText": "start", "newText": "z" * 100_000}]}
    out = _run_limited(tmp_path, "edit", params, 80_000)
    assert out == "ToolError: Could not edit file: g.txt. File too large.", out
    assert (tmp_path / "g.txt").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.txt"]


async def test_write_keeps_the_mode_bits_and_follows_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "run.sh"
    real.parent.mkdir()
    real.write_text("old\n")
    real.chmod(0o750)
    (tmp_path / "run.sh").symlink_to(real)
    await run(create_write_tool(tmp_path), {"path": "run.sh", "content": "#!/bin/sh\necho new\n"})
    assert (tmp_path / "run.sh").is_symlink()
    assert real.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o750


async def test_write_through_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    (tmp_path / "link.txt").symlink_to(tmp_path / "target.txt")
    await run(create_write_tool(tmp_path), {"path": "link.txt", "content": "made"})
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "target.txt").read_text() == "made"


async def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        await run(create_write_tool(tmp_path), {"path": "new.txt", "content": "x"})
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


async def test_edit_keeps_hard_links_together(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("one\ntwo\n")
    os.link(a, tmp_path / "b.txt")
    await run(create_edit_tool(tmp_path), {"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]})
    assert (tmp_path / "b.txt").read_text() == "one\n2\n"
    assert a.stat().st_ino == (tmp_path / "b.txt").stat().st_ino


async def test_edit_keeps_bom_crlf_missing_final_newline_and_mode(tmp_path: Path) -> None:
    f = tmp_path / "w.cs"
    f.write_bytes(b"\xef\xbb\xbfclass A\r\n{\r\n  int x;\r\n}")
    f.chmod(0o600)
    params = {"path": "w.cs", "edits": [{"oldText": "int x;\n}", "newText": "int y;\n  int z;\n}"}]}
    await run(create_edit_tool(tmp_path), params)
    assert f.read_bytes() == b"\xef\xbb\xbfclass A\r\n{\r\n  int y;\r\n  int z;\r\n}"
    assert stat.S_IMODE(f.stat().st_mode) == 0o600


async def test_a_bind_mounted_file_is_written_in_place(tmp_path: Path) -> None:
    """A file mounted over another (a container's ``-v config.json:/app/config.json``) cannot be
    renamed over: the write goes in place, as pi's does, instead of failing."""
    source = tmp_path / "host.json"
    source.write_text("{}\n")
    mounted = tmp_path / "app.json"
    mounted.write_text("")
    done = subprocess.run(["mount", "--bind", str(source), str(mounted)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here (needs root): {done.stderr.strip()}")
    try:
        await run(create_write_tool(tmp_path), {"path": "app.json", "content": '{"a": 1}\n'})
        assert mounted.read_text() == '{"a": 1}\n'
    finally:
        subprocess.run(["umount", str(mounted)], check=True)
    assert source.read_text() == '{"a": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.json", "host.json"]
