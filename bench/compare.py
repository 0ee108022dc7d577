"""pi-tui beside the newest pi, measured in the same run on the same fake server (issue #12).

Each comparison runs one scenario with pi-tui and with pi, alternating (so drift on a shared machine
hits both alike), after one discarded warm-up run of each (bytecode and file caches warm, as on a
user's second run). Both get a clean environment, a temp home whose ``models.json`` points at the fake
server, and ``PI_OFFLINE=1``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .big_sessions import SIZES, resume_big
from .scenarios import Result, median_result, one_turn, resume_large, tool_loop
from .targets import PI_TUI, Target

__all__ = ["COMPARISONS", "Comparison", "Pair", "per_call_cpu_ms", "run_comparison"]


@dataclass(frozen=True)
class Comparison:
    name: str
    description: str
    run: Callable[[Target], Result]
    wall_target: float | None = 0.8  # pi-tui's wall must be at most this times pi's (None: no target)


@dataclass
class Pair:
    name: str
    description: str
    ours: Result
    pi: Result | None
    wall_target: float | None

    @property
    def wall_ratio(self) -> float | None:
        if self.pi is None or self.pi.wall_s <= 0:
            return None
        return self.ours.wall_s / self.pi.wall_s


COMPARISONS: dict[str, Comparison] = {
    c.name: c
    for c in (
        Comparison("one_turn", "one-turn answer (`-p`, Anthropic API)", lambda t: one_turn(target=t)),
        Comparison(
            "resume_large",
            "resume the 1,019-line fixture session (`--session`) and answer",
            lambda t: resume_large(target=t),
        ),
        Comparison(
            "tool_loop_100",
            "one prompt, 100 sequential tool calls (~4 KB each)",
            lambda t: tool_loop(100, target=t),
        ),
        Comparison(
            "tool_loop_400",
            "one prompt, 400 sequential tool calls (~4 KB each)",
            lambda t: tool_loop(400, target=t),
            wall_target=None,
        ),
        *(
            Comparison(
                f"resume_big_{size}",
                f"resume a generated {count:,}-entry v3 session (`--session FILE -p hi`) and answer",
                lambda t, size=size: resume_big(size, target=t),
            )
            for size, count in SIZES.items()
        ),
    )
}


def run_comparison(comparison: Comparison, runs: int, pi: Target | None) -> Pair:
    targets = [PI_TUI] if pi is None else [PI_TUI, pi]
    for target in targets:  # warm-up, discarded
        comparison.run(target)
    results: dict[str, list[Result]] = {t.name: [] for t in targets}
    for _ in range(runs):
        for target in targets:
            results[target.name].append(comparison.run(target))
    ours = median_result(results[PI_TUI.name])
    theirs = median_result(results[pi.name]) if pi is not None else None
    return Pair(comparison.name, comparison.description, ours, theirs, comparison.wall_target)


def per_call_cpu_ms(pairs: dict[str, Pair], count: int, which: str = "ours") -> float | None:
    """CPU per tool call of the ``count``-call loop beyond a one-turn answer (start-up excluded), ms."""
    loop, base = pairs.get(f"tool_loop_{count}"), pairs.get("one_turn")
    if loop is None or base is None:
        return None
    loop_run, base_run = (loop.ours, base.ours) if which == "ours" else (loop.pi, base.pi)
    if loop_run is None or base_run is None:
        return None
    return (loop_run.cpu_s - base_run.cpu_s) / count * 1000
