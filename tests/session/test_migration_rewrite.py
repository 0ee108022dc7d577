"""The rewrite of a migrated pi v1 file: original bytes kept, no wait for the disk, nothing lost to a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pi_tui.session import SessionManager

from .helpers import HeldDisk, assistant, read_lines, user

HEADER = b'{"type":"session","id":"d703a1a9-1b7b-4fb1-b512-c9738b1fe617","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/p"}\n'
# pi's own bytes: an escaped non-ASCII character and a float with an exponent, which json.dumps would
# write differently ("é", 100.0).
USER = b'{"type":"message","timestamp":"2025-11-20T23:33:51.000Z","message":{"role":"user","content":[{"type":"text","text":"caf\\u00e9 1e2"}],"timestamp":1e2}}\n'
ANSWER = b'{"type":"message","timestamp":"2025-11-20T23:33:52.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":1763681572000}}\n'
HOOK = b'{"type":"message","timestamp":"2025-11-20T23:33:53.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":1763681573000}}\n'
COMPACTION = b'{"type":"compaction","timestamp":"2025-11-20T23:33:54.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}\n'
V1 = HEADER + USER + ANSWER + HOOK + COMPACTION


def _v1_file(tmp_path: Path) -> Path:
    path = tmp_path / "2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl"
    path.write_bytes(V1)
    return path


def test_migrated_lines_keep_pis_bytes_and_only_gain_their_ids(tmp_path: Path) -> None:
    path = _v1_file(tmp_path)
    with SessionManager.open(path) as manager:
        ids = [e.id for e in manager.get_entries()]
        manager.append_session_info("named")
    lines = path.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[0])["version"] == 3
    # the user and assistant lines: the original bytes with id and parentId spliced in after the type
    for line, original, entry_id, parent in (
        (lines[1], USER, ids[0], None),
        (lines[2], ANSWER, ids[1], ids[0]),
    ):
        prefix = b'{"type":"message",'
        members = f'"id":"{entry_id}","parentId":{json.dumps(parent)},'.encode()
        assert line == prefix + members + original[len(prefix) :]
    # the lines whose content the migration changed are written again, with the change
    hook, compaction = (json.loads(x) for x in lines[3:5])
    assert hook["message"]["role"] == "custom" and hook["id"] == ids[2] and hook["parentId"] == ids[1]
    assert compaction["firstKeptEntryId"] == ids[1] and "firstKeptEntryIndex" not in compaction
    assert [d["type"] for d in read_lines(path)][-1] == "session_info"
    assert path.with_name(path.name + ".v1.bak").read_bytes() == V1
    reopened = SessionManager.open(path, read_only=True)
    assert not reopened.load_report.has_problems and reopened.load_report.migrated_from is None
    assert [e.id for e in reopened.get_entries()][:4] == ids


def test_the_rewrite_does_not_wait_for_the_disk_but_close_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _v1_file(tmp_path)
    manager = SessionManager.open(path)
    disk = HeldDisk(monkeypatch)  # a disk that takes as long as the test says
    release, synced = disk.release, disk.synced
    started = time.monotonic()
    manager.append_message(user("one more"))
    manager.append_message(assistant("done"))
    assert time.monotonic() - started < 5  # the rewrite and both appends did not wait for the fsync
    assert not synced
    # the name already leads to the whole migrated file with both new entries; the original is kept
    lines = read_lines(path)
    assert lines[0]["version"] == 3 and len(lines) == 7
    assert [d["message"]["role"] for d in lines[-2:]] == ["user", "assistant"]
    assert path.with_name(path.name + ".v1.bak").read_bytes() == V1
    closer = threading.Thread(target=manager.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # close waits until the new file is on disk
    release.set()
    closer.join(10)
    assert not closer.is_alive() and synced


CHILD = """
import os, sys, threading
from pi_tui.session import SessionManager
from pi_tui.ai.types import TextContent, UserMessage

never = threading.Event()
os.fsync = lambda fd: never.wait()  # the disk never confirms anything: only the page cache has the data
manager = SessionManager.open(sys.argv[1])
manager.append_message(UserMessage(content=[TextContent(text="written before the kill")], timestamp=1))
open(sys.argv[2], "w").close()
never.wait()
"""


def test_a_process_killed_before_the_rewrite_reaches_the_disk_loses_nothing(tmp_path: Path) -> None:
    path = _v1_file(tmp_path)
    ready = tmp_path / "ready"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(ready)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists(), "the child did not get its entry written"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL, err.decode()

    lines = read_lines(path)
    assert lines[0]["version"] == 3 and len(lines) == 6  # header, four migrated entries, the new one
    assert lines[-1]["message"]["content"][0]["text"] == "written before the kill"
    assert path.with_name(path.name + ".v1.bak").read_bytes() == V1
    assert not list(tmp_path.glob(".*.tmp"))
    reopened = SessionManager.open(path)  # the lock died with the process
    assert not reopened.load_report.has_problems
    reopened.close()


_KILLED_BEFORE_RENAME = """
import os, sys
from pathlib import Path
from pi_tui.session import SessionManager
from pi_tui.ai.types import TextContent, UserMessage

def held_replace(src, dst):
    print("before-rename", flush=True)
    sys.stdin.read()

os.replace = held_replace
manager = SessionManager.open(Path(sys.argv[1]))
manager.append_message(UserMessage(content=[TextContent(text="never written")], timestamp=1))
"""


def test_a_rewrite_killed_before_its_rename_leaves_the_original_and_the_next_rewrite_clears_its_temp(
    tmp_path: Path,
) -> None:
    from pi_tui.util.atomic_file import STALE_TEMP_SECONDS

    path = _v1_file(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_BEFORE_RENAME, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"before-rename\n"
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == V1  # the name still leads to the original
    (leftover,) = tmp_path.glob(f".{path.name}.*.tmp")
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(leftover, (old, old))

    with SessionManager.open(path) as manager:
        manager.append_message(user("after the kill"))

    assert not leftover.exists()
    assert not list(tmp_path.glob(".*.tmp"))
    assert read_lines(path)[-1]["message"]["content"][0]["text"] == "after the kill"
    assert path.with_name(path.name + ".v1.bak").read_bytes() == V1


_FULL_DISK_REWRITE = """
import json, resource, sys
from pathlib import Path
from pi_tui.session import SessionError, SessionManager
from pi_tui.ai.types import TextContent, UserMessage

manager = SessionManager.open(Path(sys.argv[1]))
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (200, hard))  # the rewritten file does not fit
failures = 0
for i in range(5):
    try:
        manager.append_message(UserMessage(content=[TextContent(text=f"q{i}")], timestamp=1))
    except SessionError:
        failures += 1
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
manager.append_message(UserMessage(content=[TextContent(text="q5")], timestamp=1))
manager.close()
print(failures)
"""


def test_a_rewrite_retried_after_a_full_disk_keeps_one_backup_and_every_entry(tmp_path: Path) -> None:
    path = _v1_file(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK_REWRITE, str(path)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, path.name + ".v1.bak"]
    assert path.with_name(path.name + ".v1.bak").read_bytes() == V1
    texts = [e["message"]["content"][0]["text"] for e in read_lines(path)[5:]]
    assert texts == [f"q{i}" for i in range(6)]
