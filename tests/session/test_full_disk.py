"""A session file that cannot grow for a while (a full disk) loses no entry: the failed entries stay in the
conversation in memory, the user is told, and they reach the file, in order, once it can grow again.

The refusal is the kernel's: a child process lowers its own soft ``RLIMIT_FSIZE`` (so writes past it fail
with ``EFBIG``, as a full disk fails them with ``ENOSPC``) and raises it again, as freed space would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, resource, sys
from pathlib import Path
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.session import SessionError, SessionManager

def user(t):
    return UserMessage(content=[TextContent(text=t)], timestamp=1)

def assistant(t):
    return AssistantMessage(content=[TextContent(text=t)], api="x", provider="p", model="m", timestamp=2)

manager = SessionManager.create("/p", session_dir=Path(sys.argv[1]))
manager.append_message(user("q1"))
manager.append_message(assistant("a1"))
size = manager.path.stat().st_size
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 300, hard))  # the disk fills up
errors = []
for message in (user("q2"), assistant("a2 " * 200), user("q3")):
    try:
        manager.append_message(message)
    except SessionError as exc:
        errors.append(str(exc))
in_memory = [m.content[0].text[:2] for m in manager.build_context().messages]
waiting = manager.unsaved_entries
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # space again
manager.append_message(assistant("a3"))
left = manager.unsaved_entries
manager.close()
print(json.dumps({"errors": errors, "in_memory": in_memory, "waiting": waiting, "left": left,
                  "path": str(manager.path)}))
"""


def test_entries_whose_write_failed_stay_in_the_conversation_and_reach_the_file_later(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["in_memory"] == ["q1", "a1", "q2", "a2", "q3"]  # nothing dropped from the conversation
    assert len(out["errors"]) == 2  # q2 fitted; a2 did not, and q3 waits behind it
    assert out["errors"][0].endswith(
        "File too large (1 entry waits in memory, to be written with the next one once the file can grow)"
    )
    assert out["errors"][1].endswith("(2 entries wait in memory, to be written with the next one once the file can grow)")
    assert (out["waiting"], out["left"]) == (2, 0)

    lines = [json.loads(line) for line in Path(out["path"]).read_bytes().splitlines()]
    entries = lines[1:]
    texts = [e["message"]["content"][0]["text"][:2] for e in entries]
    assert texts == ["q1", "a1", "q2", "a2", "q3", "a3"]  # in order, each line whole
    assert [e["parentId"] for e in entries[1:]] == [e["id"] for e in entries[:-1]]  # one unbroken path


_NEW_SESSION_CHILD = """
import json, os, resource, sys
from pathlib import Path
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.session import SessionError, SessionManager

def user(t):
    return UserMessage(content=[TextContent(text=t)], timestamp=1)

def assistant(t):
    return AssistantMessage(content=[TextContent(text=t)], api="x", provider="p", model="m", timestamp=2)

manager = SessionManager.create("/p", session_dir=Path(sys.argv[1]))
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (100, hard))  # full before the session's first write
fds = len(os.listdir("/proc/self/fd"))
failures = 0
manager.append_message(user("q0"))
for i in range(1, 6):
    for message in (assistant(f"a{i - 1}"), user(f"q{i}")):
        try:
            manager.append_message(message)
        except SessionError:
            failures += 1
leaked = len(os.listdir("/proc/self/fd")) - fds
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
manager.append_message(assistant("a5"))
manager.close()
print(json.dumps({"failures": failures, "leaked": leaked, "path": str(manager.path)}))
"""


def test_a_new_session_whose_first_write_fails_keeps_everything_for_the_next_and_leaks_nothing(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NEW_SESSION_CHILD, str(tmp_path)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["failures"] == 10
    assert out["leaked"] <= 1  # the lock's descriptor; not one per failed attempt
    lines = [json.loads(line) for line in Path(out["path"]).read_bytes().splitlines()]
    assert lines[0]["type"] == "session"
    texts = [e["message"]["content"][0]["text"] for e in lines[1:]]
    assert texts == [f"{kind}{i}" for i in range(6) for kind in ("q", "a")]
