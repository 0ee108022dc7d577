"""A pi v1 session resumed, answered, and the process killed: the file is the complete migrated session."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text
from tests.shared_fixtures import PI_SESSIONS

from .helpers import rehome_session, write_models_json

pytestmark = pytest.mark.slow

FIXTURE = PI_SESSIONS / "large-session.jsonl"

HANG = """
import threading

def register(pi):
    @pi.on("agent_end")
    def hang(event, ctx):
        threading.Event().wait(60)  # killed here, once the answer is in the file
"""


@pytest.mark.skipif(not FIXTURE.exists(), reason="the real pi session fixtures are not available")
def test_a_process_killed_right_after_the_answer_leaves_the_whole_migrated_session(
    tmp_path: Path, agent_dir: Path
) -> None:
    session = tmp_path / "large-session.jsonl"
    shutil.copyfile(FIXTURE, session)
    rehome_session(session, tmp_path.resolve())  # the session runs in the directory it records
    copied = session.read_bytes()
    extension = tmp_path / "hang.py"
    extension.write_text(HANG)
    with SessionManager.open(FIXTURE, read_only=True) as original:
        before = len(original.build_context().messages)
        entries = len(original.get_entries())
    fake = FakeLLM()
    fake.script([Reply([text("Answered before the kill.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pi_tui",
                "--session",
                str(session),
                "--model",
                "fake-anthropic/claude-fake",
            ]
            + ["-e", str(extension), "-p", "one more"],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while b"Answered before the kill." not in session.read_bytes() and time.monotonic() < deadline:
                assert proc.poll() is None, "the process ended before it was killed"
                time.sleep(0.02)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            _, err = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL, err.decode()

    assert session.with_name(session.name + ".v1.bak").read_bytes() == copied
    lines = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    assert all("id" in d and "parentId" in d for d in lines[1:])
    reopened = SessionManager.open(session, read_only=True)
    assert not reopened.load_report.has_problems and reopened.load_report.migrated_from is None
    assert len(reopened.get_entries()) >= entries + 2  # every old entry, the prompt and the answer
    messages = reopened.build_context().messages
    assert len(messages) == before + 2
    assert [m.role for m in messages[-2:]] == ["user", "assistant"]
    assert fake.violations == []
