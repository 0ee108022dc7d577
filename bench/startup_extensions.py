"""Issue #5's start-up budget: `pi-tui --provider faux -p hi` with 10 small extensions in the agent dir
against the same run with none (the budget is 100 ms).

Each call makes five paired runs (with, without, alternating, so drift hits both sides alike) and
reports the run with extensions plus the difference of the fastest runs of each side (the least
disturbed by other load on the machine) and of the medians.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from pi_tui.testing import FakeLLM

from .scenarios import Result, _result, make_env, run_cli

COUNT = 10
PAIRS = 5

EXTENSION = """
from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    @pi.on("input")
    def tag(event: Event) -> None:
        return None

    @pi.on("tool_call")
    async def guard(event: Event, ctx: ExtensionContext) -> dict | None:
        if event.tool_name == "bash" and "rm -rf /" in event.input.get("command", ""):
            return {{"block": True, "reason": "not here"}}
        return None

    pi.register_command("ext{n}", handler=lambda args, ctx: ctx.ui.notify("ext{n}: " + args))
    pi.register_tool(
        name="ext{n}_echo",
        description="Echo the text back.",
        parameters={{"type": "object", "properties": {{"text": {{"type": "string"}}}}}},
        execute=lambda tool_call_id, params: params.get("text", ""),
    )
"""


def startup_10_extensions() -> Result:
    with_env = make_env()
    folder = with_env.agent_dir / "extensions"
    folder.mkdir()
    for n in range(COUNT):
        (folder / f"ext{n}.py").write_text(EXTENSION.format(n=n))
    without_env = make_env()
    args = ["--provider", "faux", "-p", "hi"]
    with_runs, without_runs = [], []
    for _ in range(PAIRS):
        with_runs.append(run_cli(with_env, args))
        without_runs.append(run_cli(without_env, args))
    chosen = sorted(with_runs, key=lambda r: r[2])[len(with_runs) // 2]

    def delta(index: int, pick: Callable[[list[float]], float]) -> int:
        with_values = [float(r[index]) for r in with_runs]
        without_values = [float(r[index]) for r in without_runs]
        return round((pick(with_values) - pick(without_values)) * 1000)

    base_wall = min(r[1] for r in without_runs)
    failed = [r for r in with_runs + without_runs if r[0] != 0]
    return _result(
        "startup_10_extensions",
        f"`pi-tui --provider faux -p hi` with {COUNT} small extensions in the agent dir: "
        f"{delta(1, min):+d} ms wall, {delta(2, min):+d} ms CPU against none (budget +100 ms)",
        FakeLLM(),
        failed[0] if failed else chosen,
        baseline_wall_ms=round(base_wall * 1000),
        extra_wall_ms=delta(1, min),
        extra_cpu_ms=delta(2, min),
        extra_wall_median_ms=delta(1, statistics.median),
        budget_ms=100,
    )
