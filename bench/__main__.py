"""Run the benchmark scenarios and rewrite docs/performance.md.

    python -m bench                 # every scenario, 3 runs each (median reported)
    python -m bench one_turn -n 5   # one scenario, 5 runs
    python -m bench --no-write      # print only

Benchmarks are measurements, not tests: nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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


def _one_turn_breakdown(by_name: dict[str, Result]) -> list[str]:
    """Where a one-turn answer's CPU goes: pi-tui itself (faux) versus the provider SDK's import."""
    faux = by_name.get("one_turn_faux")
    if faux is None:
        return []
    lines = ["## Where a one-turn answer's CPU goes", ""]
    lines.append(
        f"- pi-tui itself (start-up, session, context pipeline, one streamed answer with the in-process `faux` "
        f"provider): **{faux.cpu_s:.2f} s** CPU."
    )
    for name, sdk, models in (("one_turn", "anthropic", "1,400"), ("one_turn_openai", "openai", "700")):
        run = by_name.get(name)
        if run is not None:
            lines.append(
                f"- with the real `{sdk}` SDK against the fake server: {run.cpu_s:.2f} s, of which about "
                f"{max(run.cpu_s - faux.cpu_s, 0):.2f} s is the SDK (importing it builds ~{models} pydantic models)."
            )
    lines += [
        "",
        "The SDK import is paid once per process (it starts in a background thread while pi-tui loads, but both",
        "are CPU-bound, so it barely shortens the wall time). It is why a one-turn answer cannot go well under",
        "1 s of CPU while the official SDKs are used. Per request after that, pi-tui adds about 10–20 ms of CPU",
        "(see the 100-call loops).",
        "",
    ]
    return lines


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
        "For comparison, pi 0.73.1 needs about 2 s of CPU for a one-turn `pi -p` answer on this kind of machine",
        "and about 2.4 s to resume `large-session.jsonl` and answer.",
        "",
    ]
    lines += _one_turn_breakdown({r.name: r for r in results})
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
    parser.add_argument("--render-only", action="store_true", help="rewrite the doc from bench/out/results.json")
    opts = parser.parse_args()
    if opts.render_only:
        saved = json.loads((ROOT / "bench" / "out" / "results.json").read_text())
        results = [Result(**r) for r in saved["results"]]
        DOC.write_text(render(results, tuple(saved["startup"]), saved["runs"]))  # type: ignore[arg-type]
        print(f"wrote {DOC}")
        return 0
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
    raw = ROOT / "bench" / "out"
    raw.mkdir(exist_ok=True)
    (raw / "results.json").write_text(
        json.dumps({"startup": startup, "runs": opts.runs, "results": [dataclasses.asdict(r) for r in results]}, indent=2)
    )
    if not opts.no_write:
        DOC.write_text(render(results, startup, opts.runs))
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
