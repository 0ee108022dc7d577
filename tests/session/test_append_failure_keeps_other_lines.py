"""An append the kernel refuses part way cuts off only its own bytes, never a line another program
(pi, which takes no lock) appended in the meantime.

The refusal is real (``RLIMIT_FSIZE`` in a child process); the other program's append is made at the one
moment it matters, just before pi-tui's write, by the child's own ``os.write``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, os, resource, sys
from pathlib import Path
from pi_tui.session.store import SessionFile

path, foreign = Path(sys.argv[1]), sys.argv[2].encode() + b"\\n"
header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}'
session = SessionFile(path)
session.create([header])
real_write = os.write
armed = [True]

def racing_write(fd, data):
    if armed[0]:
        armed[0] = False
        with open(path, "ab") as other:  # another program appends a whole line just now
            other.write(foreign)
    return real_write(fd, data)

_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + len(foreign) + 40, hard))
os.write = racing_write
try:
    session.append(json.dumps({"type": "custom", "id": "a1a1a1a1", "data": "x" * 500}), durable=False)
except OSError as exc:
    print("refused:", exc.strerror)
os.write = real_write
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
session.append(json.dumps({"type": "custom", "id": "b2b2b2b2"}), durable=False)
session.close()
"""


def test_a_failed_append_cuts_its_own_bytes_and_keeps_a_line_appended_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    foreign = json.dumps({"type": "custom", "id": "f0f0f0f0", "customType": "from-pi"})
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), foreign], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "refused: File too large\n"
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]  # every line whole
    assert [line["id"] for line in lines] == ["s", "f0f0f0f0", "b2b2b2b2"]
