"""Real MCP servers nobody here wrote, for the ``mcp`` extension's tests: installed once, then reused.

- npm ``@modelcontextprotocol/server-filesystem`` (run with the system ``node``, 20 or newer), installed
  by ``npm install`` into ``${XDG_CACHE_HOME:-~/.cache}/pi-tui/mcp-server-filesystem-<version>`` (outside
  the repository) under a lock file, so two pytest processes install it once (about 10 s).
- PyPI ``mcp-server-git`` comes with the ``dev`` extra; its console script sits next to the interpreter.

Under ``CI=true`` a missing server fails the test with one line saying why; elsewhere the test is skipped
with the command that provides it. ``python -m tests.mcp_servers`` installs from a shell.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem"
FILESYSTEM_VERSION = "2026.8.31"
_REAL_HOME = Path(os.environ.get("HOME") or Path.home())
_REAL_XDG_CACHE = os.environ.get("XDG_CACHE_HOME")
_COMPLETE = ".pi-tui-complete"


class ServerUnavailable(RuntimeError):
    """A real MCP server could not be provided; the message says why in one line."""


def _cache_dir() -> Path:
    base = Path(_REAL_XDG_CACHE) if _REAL_XDG_CACHE else _REAL_HOME / ".cache"
    return base / "pi-tui" / f"mcp-server-filesystem-{FILESYSTEM_VERSION}"


def filesystem_server() -> list[str]:
    """The command line starting the filesystem server (without its directory arguments)."""
    node = shutil.which("node")
    if node is None:
        raise ServerUnavailable("the filesystem MCP server needs node (20 or newer) on PATH")
    final = _cache_dir()
    script = final / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    if not (final / _COMPLETE).is_file():
        final.parent.mkdir(parents=True, exist_ok=True)
        with open(final.parent / f"{final.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (final / _COMPLETE).is_file():
                _npm_install(final)
    if not script.is_file():
        raise ServerUnavailable(f"{script} is missing after npm install")
    return [node, str(script)]


def _npm_install(final: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise ServerUnavailable(f"installing {FILESYSTEM_PACKAGE} needs npm on PATH")
    staging = final.parent / f"{final.name}.installing"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    argv = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
            "--fetch-retries=1", f"{FILESYSTEM_PACKAGE}@{FILESYSTEM_VERSION}"]  # fmt: skip
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=staging)
    except subprocess.TimeoutExpired:
        raise ServerUnavailable(f"npm install {FILESYSTEM_PACKAGE} took over 300 s") from None
    if run.returncode != 0:
        last = [line for line in run.stderr.splitlines() if line.strip()][-2:]
        raise ServerUnavailable(f"npm install {FILESYSTEM_PACKAGE} failed: {' | '.join(last)}")
    (staging / _COMPLETE).write_text(f"{FILESYSTEM_PACKAGE}@{FILESYSTEM_VERSION}\n")
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)


def git_server() -> list[str]:
    """The command line starting ``mcp-server-git`` (the dev extra installs it)."""
    script = Path(sys.executable).with_name("mcp-server-git")
    if not script.is_file():
        raise ServerUnavailable("mcp-server-git is not installed: pip install -e '.[dev]'")
    return [str(script)]


def require(provide: object) -> list[str]:
    """``provide()``, or a skip (a failure under CI=true) saying what is missing."""
    try:
        return provide()  # type: ignore[operator, no-any-return]
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


if __name__ == "__main__":
    print(" ".join(filesystem_server()))
    print(" ".join(git_server()))
