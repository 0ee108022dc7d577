"""A session file that cannot grow, a torn last line, and a second process on the same session: the
user is told, the conversation goes on, and nothing already written is damaged.

Real processes: the file size limit (``RLIMIT_FSIZE``) makes the kernel refuse the append part way,
as a full disk would.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import Run, run_cli, write_models_json

pytestmark = pytest.mark.slow

MODEL = ["--model", "fake-anthropic/claude-fake"]


def _session_file(agent_dir: Path) -> Path:
    (found,) = list((agent_dir / "sessions").rglob("*.jsonl"))
    return found


def _run_limited(args: list[str], cwd: Path, limit: int) -> Run:
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "pi_tui", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_file_size,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def test_a_session_file_that_cannot_grow_is_reported_and_left_whole(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("first answer")]), Reply([text("long answer " * 300)]), Reply([text("third")])])
    # A long project path makes a long session path: the reason at the end of the message must still show.
    project = tmp_path / ("a-project-with-a-long-name-" * 5)
    project.mkdir()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        assert run_cli([*MODEL, "-p", "one"], project).returncode == 0
        session = _session_file(agent_dir)
        before = session.read_bytes()
        # Room for the prompt's line, not for the answer's.
        limited = _run_limited([*MODEL, "-c", "-p", "two"], project, len(before) + 1000)
        assert "long answer" in limited.stdout  # the answer is still shown
        assert "Session not saved: Could not write to session file" in limited.stderr
        assert f"{session}: [Errno 27] File too large" in limited.stderr
        after = session.read_bytes()
        assert after.startswith(before) and after.endswith(b"\n")
        assert all(json.loads(line) for line in after.splitlines())  # only whole lines

        resumed = run_cli([*MODEL, "-c", "-p", "three"], project)
        assert resumed.returncode == 0, resumed.stderr
    assert session.read_bytes().startswith(after)
    assert fake.violations == []


def test_a_torn_last_line_is_kept_byte_for_byte_and_the_next_entries_follow_on_a_new_line(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("first answer")]), Reply([text("second answer")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        assert run_cli([*MODEL, "-p", "one"], tmp_path).returncode == 0
        session = _session_file(agent_dir)
        whole = session.read_bytes()
        torn = b'{"type":"message","id":"0badc0de","parentId":"x","message":{"role":"user","content":"h\xc3'
        with session.open("ab") as handle:  # what a kill in the middle of a write leaves
            handle.write(torn)
        resumed = run_cli([*MODEL, "-c", "-p", "two"], tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert "second answer" in resumed.stdout
    now = session.read_bytes()
    assert now.startswith(whole + torn + b"\n")  # kept in place and ended, as pi keeps it
    assert not list(session.parent.glob("*.bak"))
    added = [json.loads(line) for line in now[len(whole) + len(torn) + 1 :].splitlines()]
    assert [e["message"]["role"] for e in added if e["type"] == "message"] == ["user", "assistant"]
    assert fake.violations == []


def test_a_second_process_continuing_the_same_session_is_refused_and_writes_nothing(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("first answer")]), Reply([text("held")], first_byte_delay=60)])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        assert run_cli([*MODEL, "-p", "one"], tmp_path).returncode == 0
        session = _session_file(agent_dir)
        env = dict(os.environ)
        env.pop("PYTEST_CURRENT_TEST", None)
        first = subprocess.Popen(
            [sys.executable, "-m", "pi_tui", *MODEL, "-c", "-p", "two"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while len(fake.requests) < 2:  # the first process is in its turn, its prompt written
                assert first.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
            during = session.read_bytes()
            second = run_cli([*MODEL, "-c", "-p", "three"], tmp_path)
        finally:
            first.kill()
            first.communicate(timeout=10)
    assert second.returncode != 0
    assert "already open in another pi-tui process" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert session.read_bytes() == during
    assert len(fake.requests) == 2
