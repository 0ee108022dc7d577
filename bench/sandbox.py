"""What the sandbox adds to starting a command: the ``bash`` tool running ``true``, sandbox off vs on.

Runs in process (no CLI, no model): the same tool the agent runs, on a small git project, ``CALLS``
calls each way, interleaved (off, on, off, on …) so that load from other processes hits both alike.
Also measured: the first sandboxed call (it probes bubblewrap once), and a call with
``sandbox.allowNetwork`` set (the in-sandbox proxy bridge starts with every command). Target: the
sandbox adds ≤ 15 ms per command.

    .venv/bin/python -m bench sandbox_command_start -n 1 --no-write
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_tui.sandbox import CommandSandbox
from pi_tui.sandbox.policy import SandboxSettings
from pi_tui.tools.bash import create_bash_tool

from .scenarios import Result

__all__ = ["sandbox_bench", "register_all"]

CALLS = 60


async def _calls(project: Path, agent_dir: Path) -> dict[str, Any]:
    off = create_bash_tool(project)
    sandbox = CommandSandbox(SandboxSettings, project, agent_dir=agent_dir)
    on = create_bash_tool(project, sandbox=sandbox)
    networked = CommandSandbox(
        lambda: SandboxSettings(allow_network=("pypi.org",)), project, agent_dir=agent_dir
    )
    proxied = create_bash_tool(project, sandbox=networked)
    params = {"command": "true"}
    start = time.perf_counter()
    await on.execute("c", params, None, None)
    first = (time.perf_counter() - start) * 1000
    times: dict[str, list[float]] = {"off": [], "on": [], "network": []}
    for n in range(CALLS):
        for key, tool in (("off", off), ("on", on)) if n % 2 == 0 else (("on", on), ("off", off)):
            start = time.perf_counter()
            await tool.execute("c", params, None, None)
            times[key].append((time.perf_counter() - start) * 1000)
        if n % 4 == 0:
            start = time.perf_counter()
            await proxied.execute("c", params, None, None)
            times["network"].append((time.perf_counter() - start) * 1000)
    sandbox.close()
    networked.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    return {
        "off_ms": round(med["off"], 2),
        "on_ms": round(med["on"], 2),
        "added_ms": round(med["on"] - med["off"], 2),
        "added_ms_at_min": round(low["on"] - low["off"], 2),
        "first_sandboxed_call_ms": round(first, 1),
        "allow_network_call_ms": round(med["network"], 1),
        "load_average": os.getloadavg()[0],
    }


def sandbox_bench() -> Result:
    wall, cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=False)
        extra = asyncio.run(_calls(project, Path(tmp) / "agent"))
    return Result(
        name="sandbox_command_start",
        description=f"bash tool running `true`, {CALLS} calls with the sandbox off and on (interleaved)",
        wall_s=time.perf_counter() - wall,
        cpu_s=time.process_time() - cpu,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        requests=0,
        violations=0,
        cache_read_ratio=None,
        exit_code=0,
        extra=extra,
    )


def register_all() -> None:
    from .registry import register

    register("sandbox_command_start", sandbox_bench, section="sandbox")
