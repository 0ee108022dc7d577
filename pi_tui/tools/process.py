"""Running a shell command as its own process group without blocking the event loop.

The command gets its own session (so it has no controlling terminal and one kill reaches everything it
started), stdin is closed and stdout/stderr share one pipe. While it runs, its group is registered with
`pi_tui.tools.watchdog`, which kills it should pi-tui die (SIGKILL included). Exit is detected from the process itself,
not from the pipe: a background job that keeps the pipe open must not hang the tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import signal as signals
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.ai.stream import AbortSignal

from ._common import abort_future
from .watchdog import ensure_started, register_group, unregister_group

__all__ = [
    "RunOutcome",
    "ShellNotFoundError",
    "resolve_shell",
    "shell_env",
    "kill_process_tree",
    "run_streaming",
    "DRAIN_GRACE_SECONDS",
]

logger = logging.getLogger(__name__)

DRAIN_GRACE_SECONDS = 0.25
"""How long to keep reading after the shell exited, for output still in the pipe."""


class ShellNotFoundError(Exception):
    """The configured ``shellPath`` does not exist."""


@dataclass(slots=True)
class RunOutcome:
    """How a command ended.

    Attributes:
        exit_code: The exit status; a death by signal N is reported as 128+N, as a shell would.
        aborted: The abort signal fired (the process tree was killed).
        timed_out: The timeout expired (the process tree was killed).
    """

    exit_code: int | None
    aborted: bool = False
    timed_out: bool = False


def resolve_shell(shell_path: str | None = None) -> str:
    """The shell to run commands with: ``shell_path``, else ``/bin/bash``, else ``bash`` on PATH, else ``sh``.

    Raises:
        ShellNotFoundError: ``shell_path`` was given but does not exist.
    """
    if shell_path:
        if os.path.exists(shell_path):
            return shell_path
        raise ShellNotFoundError(f"Custom shell path not found: {shell_path}")
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or shutil.which("sh") or "sh"


def _agent_dir() -> Path:
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(os.path.expanduser(configured))
    return Path.home() / ".pi" / "agent"


def shell_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for commands: ours, with ``~/.pi/agent/bin`` (managed tools) first on PATH."""
    env = dict(os.environ if base is None else base)
    bin_dir = str(_agent_dir() / "bin")
    path = env.get("PATH", "")
    if bin_dir not in path.split(os.pathsep):
        env["PATH"] = f"{bin_dir}{os.pathsep}{path}" if path else bin_dir
    return env


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``, from /proc (empty where /proc is unavailable)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses; the fields after the last ")" are safe.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def kill_process_tree(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` and every descendant, even ones that left the group."""
    stragglers = _descendants(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signals.SIGKILL)
    for child in [pid, *stragglers]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signals.SIGKILL)


class _PipeReader(asyncio.Protocol):
    def __init__(self, on_data: Callable[[bytes], None], closed: asyncio.Future[None]) -> None:
        self._on_data = on_data
        self._closed = closed

    def data_received(self, data: bytes) -> None:
        try:
            self._on_data(data)
        except Exception:  # a consumer bug must not kill the pipe
            logger.exception("output consumer failed")

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


class _ExitWatcher:
    """Resolves ``future`` with the exit status, without holding a thread-pool worker.

    Uses a pidfd on Linux (readable once the process exits); elsewhere a dedicated daemon thread waits.
    """

    def __init__(self, proc: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._proc = proc
        self._loop = loop
        self._pidfd = -1
        self.future: asyncio.Future[int] = loop.create_future()
        if sys.platform == "linux":  # os.pidfd_open exists on Linux only
            with contextlib.suppress(OSError):
                self._pidfd = os.pidfd_open(proc.pid)
        if self._pidfd >= 0:
            loop.add_reader(self._pidfd, self._on_pidfd)
        else:
            threading.Thread(target=self._wait_in_thread, name=f"pi-wait-{proc.pid}", daemon=True).start()

    def _resolve(self, code: int) -> None:
        if not self.future.done():
            self.future.set_result(code)

    def _on_pidfd(self) -> None:
        self._close_pidfd()
        self._resolve(self._proc.wait())

    def _wait_in_thread(self) -> None:
        code = self._proc.wait()
        with contextlib.suppress(RuntimeError):  # loop closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._resolve, code)

    def _close_pidfd(self) -> None:
        if self._pidfd >= 0:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1

    def abandon(self) -> None:
        """Stop watching; a daemon thread reaps the process whenever it finally exits."""
        self._close_pidfd()
        if self._proc.poll() is None:
            threading.Thread(target=self._proc.wait, name=f"pi-reap-{self._proc.pid}", daemon=True).start()


# Runs first in the command's new process group and waits for pi-tui's word (a line on stdin) before
# the command replaces it: pi-tui registers the group with the watchdog in between. Without the wait the
# command could run before the registration, and a pi-tui killed in that moment left it running. Should
# pi-tui die before the word, stdin ends empty and the command never starts.
_GATE = 'IFS= read -r _ || exit 125; exec "$@" </dev/null'
_GATE_SHELL = "/bin/sh"


def _check_runnable(program: str, cwd: Path, env: dict[str, str]) -> None:
    """Raise the ``OSError`` starting ``program`` directly would raise: the gate's shell starts it."""
    if os.sep in program:
        candidates = [cwd / program]
    else:
        candidates = [Path(folder) / program for folder in os.get_exec_path(env)]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return
    if os.sep in program and (cwd / program).exists():
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _spawn(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` as a new session whose group the watchdog knows before the command runs."""
    ensure_started()  # not between the spawn and the registration: registering is then one quick write
    gated = os.path.exists(_GATE_SHELL)  # else no POSIX shell to wait in (the watchdog needs one too)
    word_in, word_out = os.pipe() if gated else (subprocess.DEVNULL, -1)
    try:
        if gated:
            _check_runnable(argv[0], cwd, env)
        proc = subprocess.Popen(
            [_GATE_SHELL, "-c", _GATE, "sh", *argv] if gated else argv,
            cwd=cwd,
            env=env,
            stdin=word_in,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # The group's id is the shell's pid, which stays the command's (exec). If pi-tui dies from
        # here on (even by SIGKILL), the watchdog kills the group; the command starts only once it can.
        register_group(proc.pid)
        if gated:
            with contextlib.suppress(OSError):  # killed already (an abort): nobody waits for the word
                os.write(word_out, b"\n")
        return proc
    finally:
        if gated:
            os.close(word_in)
            os.close(word_out)


async def run_streaming(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    on_data: Callable[[bytes], None],
    signal: AbortSignal | None = None,
    timeout: float | None = None,
) -> RunOutcome:
    """Run ``argv`` in ``cwd`` as a new session, feeding merged stdout/stderr to ``on_data``.

    Timeout and abort kill the whole process tree. If the awaiting task is cancelled the tree is
    killed too. Raises ``OSError`` when the program cannot be started.
    """
    loop = asyncio.get_running_loop()
    proc = await asyncio.to_thread(_spawn, argv, cwd, env)
    assert proc.stdout is not None
    closed: asyncio.Future[None] = loop.create_future()
    transport, _ = await loop.connect_read_pipe(lambda: _PipeReader(on_data, closed), proc.stdout)
    watcher = _ExitWatcher(proc, loop)
    exited = watcher.future
    outcome = RunOutcome(exit_code=None)
    try:
        with abort_future(signal) as stop:
            racing: set[asyncio.Future[Any]] = {exited, stop}
            await asyncio.wait(racing, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if not exited.done():
            outcome.aborted = signal is not None and signal.aborted
            outcome.timed_out = not outcome.aborted
            kill_process_tree(proc.pid)
            await exited
        elif signal is not None and signal.aborted:
            outcome.aborted = True
        code = exited.result()
        outcome.exit_code = 128 - code if code < 0 else code
        # Output the shell wrote before exiting may still sit in the pipe; a background job holding
        # the pipe open must not keep us here, hence the bounded wait.
        await asyncio.wait({closed}, timeout=DRAIN_GRACE_SECONDS)
        return outcome
    finally:
        if not exited.done():  # cancelled (or failed) while the command was still running
            kill_process_tree(proc.pid)
            # A SIGKILLed process exits at once; reap it so no zombie or warning is left behind.
            await asyncio.wait({exited}, timeout=1.0)
            if not exited.done():
                watcher.abandon()
        transport.close()
        unregister_group(proc.pid)
