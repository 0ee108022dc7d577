"""Ctrl+Z and ``fg`` in a real terminal: the app stops, and when continued it takes the terminal back and
draws its whole screen at once.

A job-control shell's ``fg`` gives the terminal back to the stopped job and sends its process group
SIGCONT; here the app leads its own session on the pty, so the test plays the shell by sending SIGCONT
itself. Before a SIGCONT the test clears the emulator's screen, as a terminal's alternate screen comes
back empty: only a full repaint puts the chat, the editor and the footer back.

The kernel hands a process-directed signal to any of the process's threads. When that is not the main
thread, which is asleep in the event loop's wait, Python runs the handler (Textual's, which resumes
application mode) only once the main thread wakes for another reason: a stopped app stayed silent until a
key was pressed (about one resume in seven under load). `_signal_another_thread` sends the signal to a
thread other than the main one: for SIGCONT the main thread may still get back to Python first (without
the fix about half of those runs failed), for SIGTSTP sent to an idle app it never does (every run failed).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text

from .test_real_terminal import _env as terminal_env

pytestmark = pytest.mark.slow

ARGV = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]


def _state(pid: int, tid: int | None = None) -> str:
    """The scheduler state letter of a process (or one of its threads): ``T`` when stopped."""
    path = Path(f"/proc/{pid}/task/{tid}/stat") if tid is not None else Path(f"/proc/{pid}/stat")
    return path.read_text().rsplit(")", 1)[1].split()[0]


def _suspend(term: PtyScreen) -> None:
    """Press Ctrl+Z and return once the app has stopped and written everything it writes on the way."""
    term.send("\x1a")
    _wait_stopped(term, timeout=20)


def _continue_as_fg(term: PtyScreen) -> None:
    """What the shell's ``fg`` does once it has given the terminal back: SIGCONT to the job's group."""
    os.killpg(os.getpgid(term.pid), signal.SIGCONT)


def _signal_another_thread(term: PtyScreen, signum: int) -> None:
    """Send ``signum`` to one of the app's threads other than the main one (``tgkill``): its handler runs
    on that thread, as when the kernel chooses that thread for a signal sent to the process.

    Only a thread that is not on its way out: a signal sent to one thread dies with it, and the app's
    suspend ends its writer and input threads (``join`` returns before the thread itself has gone).
    Such a thread, chosen once under load, took the SIGCONT with it and the app never came back (a blank
    screen). An ending thread blocks every signal once its function has returned (glibc, before it frees
    its stack), and a group stop still stops it there, so a stopped thread may be one on its way out:
    the signal goes to a thread that does not block it, as the kernel's choice for a process-directed
    signal would. A stopped app has only stopped threads (`_wait_stopped`), whose masks stay as read
    until the signal is taken; a running one is idle here."""
    pid = str(term.pid)
    others = sorted(int(task.name) for task in Path(f"/proc/{pid}/task").iterdir() if task.name != pid)
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    for tid in others:
        try:
            if _state(term.pid, tid) in ("X", "Z"):  # exited, not yet reaped
                continue
            if _blocks(term.pid, tid, signum):  # on its way out: it would never take the signal
                continue
        except OSError:  # gone meanwhile
            continue
        if tgkill(term.pid, tid, signum) == 0:
            return
        if ctypes.get_errno() != errno.ESRCH:  # ESRCH: that thread ended meanwhile, try the next
            raise OSError(ctypes.get_errno(), "tgkill failed")
    raise AssertionError("the app has no thread besides the main one")


def _blocks(pid: int, tid: int, signum: int) -> bool:
    """Whether the thread blocks ``signum`` (its ``SigBlk`` mask in ``/proc``)."""
    for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
        if line.startswith("SigBlk:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    raise AssertionError(f"no signal mask in the status of thread {tid}")


def _threads_stopped(pid: int) -> bool:
    """Every thread of the process is stopped (a thread on its way out may be among them: see
    `_signal_another_thread`)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if _state(pid, int(task.name)) != "T":
                return False
        except OSError:  # it ended meanwhile
            continue
    return True


def _wait_stopped(term: PtyScreen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while _state(term.pid) != "T" or not _threads_stopped(term.pid):
        assert time.monotonic() < deadline, f"the app did not stop; the screen shows:\n{term.text()}"
        term.pump(0.02)
    term.drain()
    term.screen.reset()  # what a terminal shows when the app takes its alternate screen back: nothing


def _whole_screen(screen: str) -> bool:
    """The header, the editor with its draft and the footer are all drawn."""
    return "pi-tui v" in screen and "draft" in screen and "claude-fake" in screen


def _start_with_a_draft(term: PtyScreen) -> None:
    term.wait_for("claude-fake", timeout=30)
    term.send("draft")
    term.wait_for("draft")
    term.drain(quiet=1.0, limit=10)  # idle: nothing left to draw that would repaint by chance


def test_ctrl_z_then_fg_draws_the_whole_screen_again(tmp_path: Path, isolated_home: Path) -> None:
    """Before, the chat, editor and footer stayed blank after ``fg`` until a key was pressed."""
    project = tmp_path / "project"
    project.mkdir()
    with FakeLLM().serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            _start_with_a_draft(term)
            for _ in range(2):  # a second suspend works as the first
                _suspend(term)
                _continue_as_fg(term)
                term.wait_for(_whole_screen, timeout=20)
            term.send(" more")
            term.wait_for("draft more")  # keys reach the editor again
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def test_fg_resumes_when_sigcont_lands_on_another_thread(tmp_path: Path, isolated_home: Path) -> None:
    """The signal's handler must run at once even when the kernel hands SIGCONT to a thread other than
    the main one (before, the app stayed stopped-looking, writing nothing, until a key was pressed)."""
    project = tmp_path / "project"
    project.mkdir()
    with FakeLLM().serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            _start_with_a_draft(term)
            _suspend(term)
            _signal_another_thread(term, signal.SIGCONT)
            term.wait_for(_whole_screen, timeout=30)
            term.send(" more")
            term.wait_for("draft more")
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0


def test_ctrl_z_during_a_streaming_answer_then_fg_the_answer_goes_on_and_is_saved(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeLLM()
    words = " ".join(f"w{i}" for i in range(60))
    fake.script([Reply([text(f"Counting {words} ENDOFANSWER")], frame_delay=0.05)])
    with fake.serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("count\r")
            term.wait_for("Counting", timeout=30)
            _suspend(term)
            assert "ENDOFANSWER" not in term.transcript_text()  # suspended while the answer streamed
            _continue_as_fg(term)
            term.wait_for(lambda s: "pi-tui v" in s and "claude-fake" in s, timeout=20)
            term.wait_for("ENDOFANSWER", timeout=30)
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
    sessions = list((isolated_home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1
    entries = [json.loads(line) for line in sessions[0].read_text().splitlines()]
    assert any("ENDOFANSWER" in json.dumps(entry) for entry in entries)


def test_an_idle_app_stops_and_continues_when_the_signals_land_on_another_thread(
    tmp_path: Path, isolated_home: Path
) -> None:
    """``kill -TSTP`` then ``fg``, each signal handled on a thread other than the main one while the app
    is idle: the main thread sleeps in the event loop's wait, and only the wakeup descriptor brings it to
    run the handlers (before, the app neither stopped nor, once continued, came back)."""
    project = tmp_path / "project"
    project.mkdir()
    with FakeLLM().serve() as server:
        env = terminal_env(isolated_home, isolated_home / ".pi" / "agent", server)
        with PtyScreen(ARGV, cwd=project, env=env, columns=100, lines=30) as term:
            _start_with_a_draft(term)
            _signal_another_thread(term, signal.SIGTSTP)
            _wait_stopped(term, timeout=30)
            _signal_another_thread(term, signal.SIGCONT)
            term.wait_for(_whole_screen, timeout=30)
            term.send(" more")
            term.wait_for("draft more")
            term.send("\x03\x03")
            assert term.wait_exit(timeout=20) == 0
