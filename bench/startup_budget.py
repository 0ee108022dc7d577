"""Where a one-turn answer's start-up CPU goes: the import cost of each layer, as separate processes.

Each figure is the least CPU time (user + system, ``wait4``) of five ``python -c`` runs, so machine load
adds as little as possible; a layer's own cost is its figure minus that of the bare interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys

from .scenarios import Result

RUNS = 5
LAYERS: dict[str, str] = {
    "interpreter": "pass",
    "asyncio": "import asyncio",
    "pi_tui.ai.types (the message records)": "import pi_tui.ai.types",
    "the HTTP client (pi_tui.ai.http with h11)": "import asyncio, pi_tui.ai.http",
    "everything a one-turn -p run imports before its request": (
        "import asyncio, pi_tui.cli, pi_tui.runtime.factory, pi_tui.modes.print_mode, "
        "pi_tui.ai.providers.anthropic, pi_tui.ai.wire, pi_tui.ai.http"
    ),
    "the same without the HTTP stack": (
        "import asyncio, pi_tui.cli, pi_tui.runtime.factory, pi_tui.modes.print_mode, "
        "pi_tui.ai.providers.anthropic"
    ),
    "anthropic SDK (not imported by pi-tui any more)": "import anthropic",
    "openai SDK (not imported by pi-tui any more)": "import openai",
}


def _cpu_ms(code: str) -> float:
    best = float("inf")
    for _ in range(RUNS):
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _, _, usage = os.wait4(proc.pid, 0)
        best = min(best, usage.ru_utime + usage.ru_stime)
    return best * 1000


def startup_budget() -> Result:
    costs = {name: _cpu_ms(code) for name, code in LAYERS.items()}
    base = costs["interpreter"]
    extra = {name: round(ms if name == "interpreter" else ms - base) for name, ms in costs.items()}
    total = costs["everything a one-turn -p run imports before its request"] / 1000
    return Result(
        "startup_budget",
        "import CPU of a one-turn run's layers (least of 5 runs; see the breakdown below)",
        total,
        total,
        0.0,
        0,
        0,
        None,
        0,
        extra,
    )


def breakdown_lines(result: Result) -> list[str]:
    """The breakdown as a sentence list for the doc."""
    lines = ["Start-up CPU by layer (ms, least of 5 runs, each beyond the bare interpreter):", ""]
    lines += [f"- {name}: {ms}" for name, ms in result.extra.items()]
    return [*lines, ""]
