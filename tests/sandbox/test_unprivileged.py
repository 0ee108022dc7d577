"""The sandbox as a normal user (bubblewrap through unprivileged user namespaces), and where user
namespaces cannot be created at all (fail closed with one line)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.sandbox.bwrap import bwrap_argv, find_bwrap
from pi_tui.sandbox.policy import SandboxSettings, build_policy

NOBODY = 65534


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder a normal user can reach (pytest's own temp root is private to root)."""
    base = Path(tempfile.mkdtemp(prefix="pi-sbx-user-", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _as_normal_user() -> list[str]:
    """Run as ``nobody`` when the tests run as root; as is otherwise (already a normal user)."""
    return (
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if os.geteuid() == 0 else []
    )


def test_a_normal_user_gets_the_same_sandbox(shared_dir: Path) -> None:
    project, outside, temp = shared_dir / "project", shared_dir / "outside", shared_dir / "tmp"
    for folder in (project, outside, temp):
        folder.mkdir()
        (folder / "keep.txt").write_text("precious\n")
        if os.geteuid() == 0:
            os.chown(folder, NOBODY, NOBODY)
            os.chown(folder / "keep.txt", NOBODY, NOBODY)
    bwrap = find_bwrap()
    assert bwrap is not None
    policy = build_policy(SandboxSettings(), project, mode="workspace-write", agent_dir=shared_dir / "agent")
    script = (
        "id -u; echo made > made.txt && cat made.txt; "
        f"rm -f {outside}/keep.txt; grep CapEff /proc/self/status; unshare -r true && echo UNSHARED; "
        "ls /proc | grep -c '^[0-9]'"
    )
    argv, env = bwrap_argv(
        bwrap, policy, ["/bin/sh", "-c", script], cwd=project, temp_dir=temp, env={"PATH": os.environ["PATH"]}
    )
    done = subprocess.run([*_as_normal_user(), *argv], env=env, capture_output=True, text=True, timeout=30)
    lines = done.stdout.split()
    assert lines[0] == str(NOBODY if os.geteuid() == 0 else os.geteuid()), done.stderr
    assert "made" in lines
    assert (outside / "keep.txt").read_text() == "precious\n"
    assert "Read-only file system" in done.stderr
    assert "0000000000000000" in done.stdout and "UNSHARED" not in done.stdout
    assert int(lines[-1]) < 10


def test_no_user_namespaces_fails_closed_with_one_line(shared_dir: Path) -> None:
    # An outer bubblewrap with --disable-userns: inside it, no new user namespace can be created, as on a
    # kernel with unprivileged user namespaces turned off.
    project = shared_dir / "project"
    project.mkdir()
    code = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from pi_tui.sandbox import CommandSandbox, SandboxUnavailableError\n"
        "from pi_tui.sandbox.policy import SandboxSettings\n"
        f"box = CommandSandbox(lambda: SandboxSettings(mode='workspace-write'), Path({str(project)!r}),"
        f" agent_dir=Path({str(shared_dir)!r}))\n"
        "try:\n"
        "    box.prepare(['true'], Path.cwd(), {})\n"
        "    print(json.dumps({'ran': True}))\n"
        "except SandboxUnavailableError as exc:\n"
        "    print(json.dumps({'error': str(exc), 'status': box.status()}))\n"
    )
    outer = [
        "bwrap",
        "--unshare-user",
        "--disable-userns",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        str(shared_dir),
        str(shared_dir),
        "--chdir",
        str(project),
        "--",
        sys.executable,
        "-c",
        code,
    ]
    done = subprocess.run(outer, capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" in answer, done.stderr
    assert answer["error"].startswith(
        "Sandbox workspace-write cannot start: bubblewrap cannot create a sandbox here"
    )
    assert "user namespaces are off" in answer["error"] and "\n" not in answer["error"]
    assert answer["status"] == "not sandboxed"
