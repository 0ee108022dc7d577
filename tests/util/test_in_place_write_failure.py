"""A write that has to go in place (the file has a second hard link, belongs to someone else, is mounted
over another) and is cut short by a full disk leaves the old content, as a write by rename does.

The failure is real: a child process writes under ``RLIMIT_FSIZE``, so the kernel refuses the write part
way (``EFBIG``), as a full disk refuses it (``ENOSPC``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
from pi_tui.agent.tool import ToolError
from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool

cwd, tool_name, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
params = json.loads(sys.stdin.read())
tool = (create_write_tool if tool_name == "write" else create_edit_tool)(cwd)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    asyncio.run(tool.execute("c1", params, AbortSignal(), None))
except ToolError as exc:
    print("ToolError:", exc)
else:
    print("ok")
"""


def _run_limited(cwd: Path, tool: str, params: str, limit: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cwd), tool, str(limit)],
        input=params,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_hard_linked_file_whose_write_fails_part_way_keeps_its_old_content(tmp_path: Path) -> None:
    original = b"precious user code\n" * 1000
    (tmp_path / "f.py").write_bytes(original)
    os.link(tmp_path / "f.py", tmp_path / "link.py")  # a rename would split the links: written in place
    out = _run_limited(tmp_path, "write", '{"path": "f.py", "content": "' + "x" * 200_000 + '"}', 100_000)
    assert out == "ToolError: Could not write file: f.py. File too large", out
    assert (tmp_path / "f.py").read_bytes() == original
    assert (tmp_path / "link.py").stat().st_ino == (tmp_path / "f.py").stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py", "link.py"]


def test_a_hard_linked_file_whose_edit_fails_part_way_keeps_its_old_content(tmp_path: Path) -> None:
    original = b"start\n" + b"y" * 50_000 + b"\nend\n"
    (tmp_path / "g.txt").write_bytes(original)
    os.link(tmp_path / "g.txt", tmp_path / "h.txt")
    params = '{"path": "g.txt", "edits": [{"oldText": "start", "newText": "' + "z" * 100_000 + '"}]}'
    out = _run_limited(tmp_path, "edit", params, 80_000)
    assert out == "ToolError: Could not edit file: g.txt. File too large.", out
    assert (tmp_path / "h.txt").read_bytes() == original
