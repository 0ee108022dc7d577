"""pi-tui killed with SIGKILL in the middle of a turn: every line already written survives, and the
next ``-c`` resumes with it and appends after it.

Real processes and files: the fake LLM server holds the answer (or the summary) back, the process is
killed while it waits, and the session file is then read and resumed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

MODEL = ["--model", "fake-anthropic/claude-fake"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    try:
        while not ready():
            assert proc.poll() is None, "the process ended before it was killed"
            assert time.monotonic() < deadline, "the moment to kill never came"
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def _session_file(agent_dir: Path) -> Path:
    (found,) = list((agent_dir / "sessions").rglob("*.jsonl"))
    return found


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _texts(request_body: dict[str, object]) -> list[str]:
    out: list[str] = []
    for message in request_body["messages"]:  # type: ignore[union-attr]
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out.extend(b.get("text", b.get("name", b.get("type"))) for b in blocks)
    return out


def test_killed_while_streaming_and_during_a_tool_call_resumes_with_everything_written(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("first answer")]),
            Reply([text("never finished " * 20)], frame_delay=60),  # killed while this streams
            Reply([tool_call("bash", {"command": "sleep 60"})]),  # killed while the tool runs
            Reply([text("back again")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        assert run_cli([*MODEL, "-p", "one"], tmp_path).returncode == 0
        session = _session_file(agent_dir)

        before = session.read_bytes()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pi_tui", *MODEL, "-c", "-p", "two"],
            cwd=tmp_path,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _kill_when(proc, lambda: len(fake.requests) >= 2 and b'"two"' in session.read_bytes())
        after_stream = session.read_bytes()
        assert after_stream.startswith(before) and after_stream.endswith(b"\n")
        assert [line.get("type") for line in _lines(session)][-1] == "message"  # the prompt "two"

        proc = subprocess.Popen(
            [sys.executable, "-m", "pi_tui", *MODEL, "-c", "-p", "three"],
            cwd=tmp_path,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _kill_when(proc, lambda: b'"sleep 60"' in session.read_bytes())
        after_tool = session.read_bytes()
        assert after_tool.startswith(after_stream) and after_tool.endswith(b"\n")

        resumed = run_cli([*MODEL, "-c", "-p", "four"], tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert "back again" in resumed.stdout
    assert session.read_bytes().startswith(after_tool)
    sent = _texts(fake.last_request.body)  # type: ignore[arg-type]
    for said in ("one", "first answer", "two", "three", "bash", "four"):
        assert said in sent, (said, sent)
    assert fake.violations == []
    assert not list(session.parent.glob("*.bak"))  # nothing was torn, nothing needed repair


def test_killed_during_compaction_keeps_the_session_as_it_was(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script(
        [
            Reply([text("first answer " * 50)]),
            Reply([text("second answer " * 50)]),
            # The summary of the history and of the split turn: asked for together, both held back.
            Reply([text("a summary that never arrives " * 10)], frame_delay=60),
            Reply([text("a summary that never arrives " * 10)], frame_delay=60),
            Reply([text("still here")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        settings = {"compaction": {"keepRecentTokens": 10}}  # so that two short turns can be compacted
        (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        assert run_cli([*MODEL, "-p", "one"], tmp_path).returncode == 0
        assert run_cli([*MODEL, "-c", "-p", "two"], tmp_path).returncode == 0
        session = _session_file(agent_dir)
        before = session.read_bytes()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pi_tui", *MODEL, "-c", "--mode", "rpc"],
            cwd=tmp_path,
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None
        proc.stdin.write(b'{"id": "c1", "type": "compact"}\n')
        proc.stdin.flush()
        _kill_when(proc, lambda: len(fake.requests) >= 4)
        assert session.read_bytes() == before  # the compaction was not half-recorded

        resumed = run_cli([*MODEL, "-c", "-p", "three"], tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert "still here" in resumed.stdout
    assert session.read_bytes().startswith(before)
    assert "compaction" not in [line.get("type") for line in _lines(session)]
    assert fake.violations == []
