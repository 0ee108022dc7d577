"""Closing or killing the terminal ends the app within 2 s, whatever it was doing, and keeps the session.

The hard case is a terminal that stopped reading while the app was writing (a stalled SSH link, a pane
nobody drains): Textual's output queue fills and the app's thread blocks on it. These tests stop reading
the pty while an answer streams, wait until the app's main thread is stuck that way, and only then close
the terminal or send the signal.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .test_real_terminal import _env as terminal_env

pytestmark = pytest.mark.slow

ARGV = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
LIMIT = 2.0
"""Seconds from closing the terminal (or the signal) to the process being gone."""

LONG_ANSWER = Reply([text("Counting " + " ".join(f"word{i}" for i in range(4000)))], frame_delay=0.005)


def _unread(term: PtyScreen) -> int:
    return int(struct.unpack("i", fcntl.ioctl(term.fd, termios.FIONREAD, b"\0\0\0\0"))[0])


def _main_thread_waits_on_a_lock(pid: int, cpu_before: int) -> tuple[bool, int]:
    """Whether the process's main thread sleeps on a futex (Textual's full queue), and its CPU ticks.

    Where the kernel hides wait channels ("0"), a main thread that used no CPU since the last look counts.
    """
    task = Path(f"/proc/{pid}/task/{pid}")
    fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
    cpu = int(fields[11]) + int(fields[12])  # utime + stime
    wchan = (task / "wchan").read_text().strip()
    waiting = "futex" in wchan if wchan not in ("", "0") else cpu == cpu_before
    return waiting, cpu


def _stop_reading_until_the_app_blocks(term: PtyScreen) -> None:
    """Read nothing more; return once the terminal's buffer has stayed full and the app's main thread has
    waited on a lock (Textual's full output queue) for half a second."""
    deadline = time.monotonic() + 30
    steady, last, cpu = 0, -1, -1
    while steady < 10:
        assert time.monotonic() < deadline, "the app's output never backed up"
        unread = _unread(term)
        waiting, cpu = _main_thread_waits_on_a_lock(term.pid, cpu)
        steady = steady + 1 if unread == last and unread > 0 and waiting else 0
        last = unread
        time.sleep(0.05)


def _gone_within(proc: subprocess.Popen[bytes], started: float) -> float:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the app was still running 10 s after its terminal was closed")
    return time.monotonic() - started


def _session_entries(agent_dir: Path) -> list[dict[str, object]]:
    (path,) = list((agent_dir / "sessions").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def _messages(entries: list[dict[str, object]]) -> list[str]:
    return [json.dumps(e["message"]) for e in entries if e.get("type") == "message"]


def _start(project: Path, home: Path, server: object, argv: list[str] | None = None) -> PtyScreen:
    env = terminal_env(home, home / ".pi" / "agent", server)
    term = PtyScreen(argv or ARGV, cwd=project, env=env, columns=100, lines=30)
    term.wait_for("claude-fake", timeout=30)
    return term


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_closing_a_terminal_that_stopped_reading_mid_answer_exits_and_saves(
    tmp_path: Path, isolated_home: Path
) -> None:
    fake = FakeLLM()
    fake.script([LONG_ANSWER])
    with fake.serve() as server:
        term = _start(_project(tmp_path), isolated_home, server)
        try:
            term.send("count for me\r")
            term.wait_for("Counting", timeout=30)
            _stop_reading_until_the_app_blocks(term)
            closed = time.monotonic()
            os.close(term.fd)  # the window closes: the pty's controlling side is gone
            took = _gone_within(term.proc, closed)
        finally:
            term.close()
    assert took < LIMIT, f"exit took {took:.2f} s"
    messages = _messages(_session_entries(isolated_home / ".pi" / "agent"))
    assert any("count for me" in m for m in messages)
    assert any("Counting" in m and "aborted" in m for m in messages)  # the partial answer was saved


def test_sigterm_while_the_terminal_stopped_reading_exits_and_saves(
    tmp_path: Path, isolated_home: Path
) -> None:
    fake = FakeLLM()
    fake.script([LONG_ANSWER])
    with fake.serve() as server:
        term = _start(_project(tmp_path), isolated_home, server)
        try:
            term.send("count for me\r")
            term.wait_for("Counting", timeout=30)
            _stop_reading_until_the_app_blocks(term)
            sent = time.monotonic()
            os.kill(term.pid, signal.SIGTERM)
            took = _gone_within(term.proc, sent)
        finally:
            term.close()
    assert took < LIMIT, f"exit took {took:.2f} s"
    assert term.proc.returncode == 143
    messages = _messages(_session_entries(isolated_home / ".pi" / "agent"))
    assert any("Counting" in m for m in messages)


def test_a_hang_up_without_sighup_is_seen_on_the_terminal_itself(tmp_path: Path, isolated_home: Path) -> None:
    # SIGHUP blocked (it stays pending; handlers never run): only the terminal's hang-up, EOF on input
    # and EIO on output, can tell the app that the window closed.
    launcher = (
        "import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP}); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )
    argv = [sys.executable, "-c", launcher, *ARGV[1:]]
    fake = FakeLLM()
    fake.script([Reply([text("IDLEANSWER")])])
    with fake.serve() as server:
        term = _start(_project(tmp_path), isolated_home, server, argv)
        try:
            term.send("hello\r")
            term.wait_for("IDLEANSWER", timeout=30)
            term.drain()
            closed = time.monotonic()
            os.close(term.fd)
            took = _gone_within(term.proc, closed)
        finally:
            term.close()
    assert took < LIMIT, f"exit took {took:.2f} s"
    assert term.proc.returncode == 129
    assert any("IDLEANSWER" in m for m in _messages(_session_entries(isolated_home / ".pi" / "agent")))


def test_kill_hup_with_the_terminal_open_exits_129_and_restores_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("IDLEANSWER")])])
    with fake.serve() as server:
        term = _start(_project(tmp_path), isolated_home, server)
        try:
            term.send("hello\r")
            term.wait_for("IDLEANSWER", timeout=30)
            sent = time.monotonic()
            os.kill(term.pid, signal.SIGHUP)
            code = term.wait_exit(timeout=10)
            took = time.monotonic() - sent
            after = termios.tcgetattr(term.fd)
        finally:
            term.close()
    out = term.transcript_text()
    assert code == 129 and took < LIMIT
    assert out.rfind("\x1b[?1049l") > out.rfind("\x1b[?1049h")  # back on the main screen
    assert after[3] & termios.ICANON and after[3] & termios.ECHO
    assert "To resume this session" in out


@pytest.mark.parametrize("how", ["sigterm", "close"])
def test_sigterm_or_closing_during_a_tool_call_stops_the_tool_and_saves_the_call(
    tmp_path: Path, isolated_home: Path, how: str
) -> None:
    project = _project(tmp_path)
    marker = project / "started"
    fake = FakeLLM()
    fake.script(
        [Reply([tool_call("bash", {"command": f"touch {marker}; sleep 30"})]), Reply([text("never")])]
    )
    with fake.serve() as server:
        term = _start(project, isolated_home, server)
        try:
            term.send("run it\r")
            term.wait_for(lambda _screen: marker.exists(), timeout=30)
            sent = time.monotonic()
            if how == "sigterm":
                os.kill(term.pid, signal.SIGTERM)
            else:
                os.close(term.fd)
            took = _gone_within(term.proc, sent)
        finally:
            term.close()
    assert took < LIMIT, f"exit took {took:.2f} s"
    assert term.proc.returncode == (143 if how == "sigterm" else 129)
    entries = _session_entries(isolated_home / ".pi" / "agent")
    messages = _messages(entries)
    assert any("sleep 30" in m for m in messages)  # the call is in the session …
    assert any('"role": "toolResult"' in m for m in messages)  # … and so is its (stopped) result
    sleeping = subprocess.run(["pgrep", "-f", f"touch {marker}; sleep 30"], capture_output=True, text=True)
    assert sleeping.stdout.strip() == ""  # and its process group was stopped
