"""A command pi-tui starts never outlives pi-tui, even when pi-tui is killed the moment the command starts.

The kill is real: a child Python process runs a command through `pi_tui.tools.process.run_streaming` and
SIGKILLs itself at the worst moment, right after the command's process exists and before its group is
registered with the watchdog (the step that makes the watchdog kill the group when pi-tui dies). A
command that ran in that moment kept running, reparented to init: under load, a SIGKILL sent as soon as a
bash call had started (tests/safety/test_signals.py) left the command's ``sleep`` behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pi_tui.tools.process import run_streaming, shell_env

pytestmark = pytest.mark.slow

# Dies (SIGKILL, nothing to clean up) where registering the group would happen, after noting its id.
DIES_BEFORE_REGISTERING = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path
    from pi_tui.tools import process

    def die(pgid: int) -> None:
        Path("group.id").write_text(str(pgid))
        os.kill(os.getpid(), signal.SIGKILL)

    process.register_group = die
    asyncio.run(
        process.run_streaming(
            ["/bin/sh", "-c", "touch ran; exec sleep 300"],
            cwd=Path.cwd(), env=process.shell_env(), on_data=lambda _: None,
        )
    )
    """
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def test_a_command_started_just_before_pi_tui_is_killed_never_runs(tmp_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", DIES_BEFORE_REGISTERING], cwd=tmp_path, capture_output=True, timeout=30
    )
    assert child.returncode == -9, child.stderr.decode()
    group = int((tmp_path / "group.id").read_text())
    try:
        # Bounds only: the command's process ends at once when nobody will register it.
        deadline = time.monotonic() + 30
        while _alive(group) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(group), "the command runs on with nobody left to stop it"
        assert not (tmp_path / "ran").exists()
    finally:
        if _alive(group):
            os.killpg(group, 9)


async def test_a_program_that_cannot_start_raises_as_before(tmp_path: Path) -> None:
    # the command starts behind a shell that waits for the registration: a missing or non-executable
    # program must still fail to start (OSError, which the bash tool reports) rather than run a shell
    # that says so and exits 127
    (tmp_path / "plain.txt").write_text("not a program")
    for argv, error in (
        (["/no/such/shell", "-c", "true"], FileNotFoundError),
        (["no-such-program-anywhere"], FileNotFoundError),
        ([str(tmp_path / "plain.txt")], PermissionError),
    ):
        with pytest.raises(error):
            await run_streaming(argv, cwd=tmp_path, env=shell_env(), on_data=lambda _: None)


async def test_the_command_reads_an_empty_stdin_and_keeps_its_pid_as_the_group_id(tmp_path: Path) -> None:
    seen: list[bytes] = []
    outcome = await run_streaming(
        ["/bin/sh", "-c", 'cat; read -r _ _ _ _ pgid _ < /proc/$$/stat; echo "pid=$$ pgid=$pgid"'],
        cwd=tmp_path,
        env=shell_env(),
        on_data=seen.append,
    )
    assert outcome.exit_code == 0
    pid, pgid = (part.split("=")[1] for part in b"".join(seen).decode().split())
    assert pid == pgid  # the command leads its own group: one kill reaches all it started
