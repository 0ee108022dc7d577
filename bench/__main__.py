"""Run the benchmark scenarios and rewrite docs/performance.md.

    python -m bench                   # every scenario and every comparison with pi, 3 runs each (median)
    python -m bench one_turn -n 5     # one scenario (or comparison, by name), 5 runs
    python -m bench --no-pi           # leave the pi columns out
    python -m bench --no-write        # print only
    python -m bench --render-only     # rewrite the doc from bench/out/results.json

Results are merged into bench/out/results.json by name, so running one scenario keeps the figures of
the others (and of other sections) in the doc. Benchmarks are measurements, not tests: nothing here
fails on a slow machine. The bench installs nothing; see `bench.targets` for where pi is looked up.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .compare import COMPARISONS, Pair, run_comparison
from .registry import load_all, scenarios
from .render import render
from .scenarios import Result, median_result
from .targets import find_pi, pi_missing_note

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
SAVED = ROOT / "bench" / "out" / "results.json"


def _startup(n: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(n):
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "pi_tui", "--version"], stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def _load_saved() -> dict[str, Any]:
    if not SAVED.is_file():
        return {}
    try:
        data: dict[str, Any] = json.loads(SAVED.read_text())
    except ValueError:
        return {}
    return data


def _pair_from_json(data: dict[str, Any]) -> Pair:
    pi = data.get("pi")
    return Pair(
        data["name"],
        data["description"],
        Result(**data["ours"]),
        Result(**pi) if pi else None,
        data.get("wall_target"),
    )


def _row(r: Result) -> str:
    ratio = "—" if r.cache_read_ratio is None else f"{r.cache_read_ratio:.3f}"
    status = "ok" if r.exit_code == 0 else f"exit {r.exit_code}"
    return f"{r.name}: wall {r.wall_s:.2f} s, cpu {r.cpu_s:.2f} s, violations {r.violations}, cache {ratio}, {status}"


def main() -> int:
    load_all()
    registered = scenarios()
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "names", nargs="*", help=f"scenarios: {', '.join(registered)}; comparisons: {', '.join(COMPARISONS)}"
    )
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="do not rewrite docs/performance.md")
    parser.add_argument("--no-pi", action="store_true", help="do not run pi beside pi-tui")
    parser.add_argument(
        "--render-only", action="store_true", help="rewrite the doc from bench/out/results.json"
    )
    opts = parser.parse_args()

    if opts.render_only:
        with _locked():
            state = _State.load()
        DOC.write_text(state.render())
        print(f"wrote {DOC}")
        return 0

    names = list(dict.fromkeys(opts.names or [*registered, *COMPARISONS]))
    unknown = [n for n in names if n not in registered and n not in COMPARISONS]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    # A name that is both a scenario and a comparison (one_turn, ...) runs once, as the comparison; its
    # pi-tui side is also the scenario's row.
    chosen_comparisons = [n for n in names if n in COMPARISONS]
    chosen_scenarios = [n for n in names if n in registered and n not in COMPARISONS]

    new = _State(startup=_startup(max(opts.runs, 3)), runs=opts.runs)
    print(f"startup: {new.startup[0] * 1000:.0f} ms wall, {new.startup[1] * 1000:.0f} ms cpu", flush=True)
    pi = None if opts.no_pi else find_pi()
    if chosen_comparisons:
        new.pi_note = (
            "" if pi is not None else ("pi columns skipped (--no-pi)." if opts.no_pi else pi_missing_note())
        )
        if new.pi_note:
            print(new.pi_note, file=sys.stderr)
    for name in chosen_comparisons:
        pair = run_comparison(COMPARISONS[name], opts.runs, pi)
        new.pairs[name] = pair
        if name in registered:
            new.results[name] = pair.ours
            new.sections[name] = registered[name].section
        theirs = "" if pair.pi is None else f" | pi: wall {pair.pi.wall_s:.2f} s, cpu {pair.pi.cpu_s:.2f} s"
        print(f"vs pi  {_row(pair.ours)}{theirs}", flush=True)
        for run in (pair.ours, pair.pi):
            if run is not None and run.exit_code != 0:
                print(run.stderr, file=sys.stderr)
    for name in chosen_scenarios:
        scenario = registered[name]
        result = median_result([scenario.run() for _ in range(opts.runs)])
        new.results[name] = result
        new.sections[name] = scenario.section
        print(_row(result), flush=True)
        if result.exit_code != 0:
            print(result.stderr, file=sys.stderr)

    # Another bench run (another section) may have saved meanwhile: merge into what is saved now.
    with _locked():
        state = _State.load()
        state.merge(new, comparisons_run=bool(chosen_comparisons))
        state.save()
        if not opts.no_write:
            DOC.write_text(state.render())
            print(f"wrote {DOC}")
    return 0


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Serialise read-merge-write of the saved results between concurrent bench runs."""
    SAVED.parent.mkdir(exist_ok=True)
    with open(SAVED.parent / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclasses.dataclass
class _State:
    """Everything the doc is rendered from, as saved in bench/out/results.json."""

    startup: tuple[float, float] = (0.0, 0.0)
    runs: int = 0
    pi_note: str = ""
    results: dict[str, Result] = dataclasses.field(default_factory=dict)
    sections: dict[str, str] = dataclasses.field(default_factory=dict)
    pairs: dict[str, Pair] = dataclasses.field(default_factory=dict)

    @classmethod
    def load(cls) -> _State:
        saved = _load_saved()
        first, second = saved.get("startup", (0.0, 0.0))
        return cls(
            startup=(float(first), float(second)),
            runs=int(saved.get("runs", 0)),
            pi_note=str(saved.get("pi_note", "")),
            results={r["name"]: Result(**r) for r in saved.get("results", [])},
            sections=dict(saved.get("sections", {})),
            pairs={p["name"]: _pair_from_json(p) for p in saved.get("comparisons", [])},
        )

    def merge(self, new: _State, comparisons_run: bool) -> None:
        self.startup, self.runs = new.startup, new.runs
        if comparisons_run:
            self.pi_note = new.pi_note
        self.results.update(new.results)
        self.sections.update(new.sections)
        self.pairs.update(new.pairs)

    def save(self) -> None:
        data = {
            "startup": self.startup,
            "runs": self.runs,
            "pi_note": self.pi_note,
            "results": [dataclasses.asdict(r) for r in self.results.values()],
            "sections": self.sections,
            "comparisons": [
                {
                    "name": p.name,
                    "description": p.description,
                    "wall_target": p.wall_target,
                    "ours": dataclasses.asdict(p.ours),
                    "pi": dataclasses.asdict(p.pi) if p.pi is not None else None,
                }
                for p in self.pairs.values()
            ],
        }
        SAVED.write_text(json.dumps(data, indent=2))

    def render(self) -> str:
        existing = DOC.read_text() if DOC.is_file() else ""
        return render(
            self.results, self.sections, self.pairs, self.startup, self.runs, self.pi_note, existing
        )


if __name__ == "__main__":
    sys.exit(main())
