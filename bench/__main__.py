"""Run the benchmark scenarios and rewrite docs/performance.md.

    python -m bench                 # every scenario, 3 runs each (median reported)
    python -m bench one_turn -n 5   # one scenario, 5 runs
    python -m bench --no-write      # print only

Benchmarks are measurements, not tests: nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from .scenarios import SCENARIOS, Result

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"


def _startup(n: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(n):
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "pi_tui", "--version"], stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def _median_result(runs: list[Result]) -> Result:
    runs = sorted(runs, key=lambda r: r.cpu_s)
    mid = runs[len(runs) // 2]
    mid.wall_s = statistics.median(r.wall_s for r in runs)
    mid.cpu_s = statistics.median(r.cpu_s for r in runs)
    mid.peak_rss_mb = max(r.peak_rss_mb for r in runs)
    return mid


def _row(r: Result) -> str:
    ratio = "—" if r.cache_read_ratio is None else f"{r.cache_read_ratio:.3f}"
    status = "ok" if r.exit_code == 0 else f"exit {r.exit_code}"
    return (
        f"| {r.name} | {r.description} | {r.wall_s:.2f} | {r.cpu_s:.2f} | {r.peak_rss_mb:.0f} | "
        f"{r.requests} | {r.violations} | {ratio} | {status} |"
    )


def render(results: list[Result], startup: tuple[float, float], runs: int) -> str:
    lines = [
        "# Performance",
        "",
        "Measured by `python -m bench` (do not edit by hand; rerun it). Each scenario runs `pi-tui` as a",
        "subprocess against the in-process fake LLM server (`pi_tui.testing`), so the figures are pi-tui's own",
        "cost with a provider that answers instantly. CPU time and peak RSS are the child process's (`wait4`).",
        f"Median of {runs} runs. Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {date.today().isoformat()}.",
        "",
        "## Start-up",
        "",
        f"`pi-tui --version`: {startup[0] * 1000:.0f} ms wall, {startup[1] * 1000:.0f} ms CPU "
        "(imports nothing heavy: no Textual, no provider SDKs, no pydantic).",
        "",
        "## Scenarios",
        "",
        "| scenario | what | wall s | CPU s | peak RSS MB | requests | rule violations | cache read ratio | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(r) for r in results]
    lines += [
        "",
        "Cache read ratio is the fake server's Σ cache read / Σ (input + cache read + cache write) over the run,",
        "from its prompt-cache simulation (Anthropic: explicit breakpoints with the 20-block look-back; OpenAI:",
        "automatic prefixes of ≥ 1024 tokens in 128-token steps). For the 100-tool-call loop the best possible is",
        "about 0.98: every request must write its new tail once.",
        "",
        "For comparison, pi 0.73.1 needs about 2 s of CPU for a one-turn `pi -p` answer on this kind of machine.",
        "",
    ]
    extra = [r for r in results if r.extra]
    if extra:
        lines += ["## Notes", ""]
        lines += [f"- {r.name}: " + ", ".join(f"{k}={v}" for k, v in r.extra.items()) for r in extra]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("scenarios", nargs="*", help=f"any of: {', '.join(SCENARIOS)}")
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="do not rewrite docs/performance.md")
    opts = parser.parse_args()
    names = opts.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")

    startup = _startup(max(opts.runs, 3))
    print(f"startup: {startup[0] * 1000:.0f} ms wall, {startup[1] * 1000:.0f} ms cpu", flush=True)
    results = []
    for name in names:
        runs = [SCENARIOS[name]() for _ in range(opts.runs)]
        result = _median_result(runs)
        results.append(result)
        print(_row(result), flush=True)
        if result.exit_code != 0:
            print(result.stderr, file=sys.stderr)
    if not opts.no_write:
        DOC.write_text(render(results, startup, opts.runs))
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
