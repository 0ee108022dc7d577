"""Where the wall time of a big resume goes, for pi-tui and pi in the same run.

    python -m bench.wall_split 100k -n 3

Runs ``--session FILE -p hi`` on a generated session (`bench.big_sessions`), alternating pi-tui and pi
0.87.1 on one fake server, and splits each run's wall time at the moment the fake server has decoded
and checked the request (its scripted turn is a callable, called right then):

- ``client_cpu``, ``client_runq``: the program's time on a CPU and waiting for one (runnable, not
  running) up to that moment, summed over its threads (``/proc/PID/task/*/schedstat``). The program is
  blocked on the answer by then, so this is what it spent making and sending its request;
- ``server_cpu``: the server thread's CPU for this request (reading, decoding, the rule checks and
  token counting; one thread per connection);
- ``decided_at``: spawn → that moment; ``after``: that moment → the program's exit (the answer's
  rendering and delivery, the program appending to its session and exiting).

Linux only (``/proc``). Figures are seconds; min and median over the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text

from .big_sessions import _CACHE, BIG_WINDOW, SIZES, _write_models_big, big_session_lines
from .scenarios import make_env, run_cli
from .targets import PI_TUI, Target, find_pi

__all__ = ["split_once"]


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


def _schedstat(pid: int) -> tuple[float, float]:
    """(seconds on a CPU, seconds runnable but waiting) of every thread of ``pid``."""
    run = wait = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            on_cpu, queued, _ = (task / "schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        run += int(on_cpu) / 1e9
        wait += int(queued) / 1e9
    return run, wait


def split_once(size: str, target: Target) -> dict[str, float]:
    """One ``--session FILE -p hi`` run of ``target`` on a ``size`` session, split as the module says."""
    entries = SIZES[size]
    env = make_env()
    path = env.agent_dir / "sessions" / "big" / f"big-{size}.jsonl"
    if entries not in _CACHE:
        _CACHE[entries] = "\n".join(big_session_lines(entries, Path("/CWD"))) + "\n"
    path.parent.mkdir(parents=True)
    path.write_text(_CACHE[entries].replace('"cwd":"/CWD"', json.dumps({"cwd": str(env.repo)})[1:-1], 1))
    seen: dict[str, float] = {}
    lock = threading.Lock()

    def answer(_request: Any) -> Reply:
        with lock:
            seen["decided"] = time.perf_counter()
            seen["server_cpu"] = time.thread_time()
            run = wait = 0.0
            for pid in _children():
                cpu, queued = _schedstat(pid)
                run, wait = run + cpu, wait + queued
            seen["client_cpu"], seen["client_runq"] = run, wait
        return Reply([text("Done.")])

    fake = FakeLLM(context_window=BIG_WINDOW)
    fake.script([answer])
    with fake.serve() as server:
        model = _write_models_big(env, server)
        start = time.perf_counter()
        code, wall, cpu, rss, _out, err = run_cli(
            env, ["--session", str(path), "--model", model, "-p", "hi"], target
        )
    if code != 0 or "decided" not in seen:
        raise RuntimeError(f"{target.name} failed (exit {code}): {err[-500:]}")
    decided_at = seen["decided"] - start
    return {
        "wall": wall,
        "cpu": cpu,
        "peak_rss_mb": rss,
        "decided_at": decided_at,
        "client_cpu": seen["client_cpu"],
        "client_runq": seen["client_runq"],
        "server_cpu": seen["server_cpu"],
        "after": wall - decided_at,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.wall_split", description=__doc__.splitlines()[0])
    parser.add_argument("size", choices=sorted(SIZES), nargs="?", default="100k")
    parser.add_argument("-n", "--runs", type=int, default=3)
    args = parser.parse_args()
    targets = [PI_TUI]
    pi = find_pi()
    if pi is not None:
        targets.append(pi)
    split_once(args.size, PI_TUI)  # a warm-up: the file cache, the interpreter's bytecode
    rows: dict[str, list[dict[str, float]]] = {t.name: [] for t in targets}
    for _ in range(args.runs):
        for target in targets:
            rows[target.name].append(split_once(args.size, target))
    print(f"{args.size}: {args.runs} runs each, load average {os.getloadavg()[0]:.1f} at the end")
    for name, runs in rows.items():
        for label, pick in (("min", min), ("median", statistics.median)):
            cells = " ".join(f"{key}={pick(r[key] for r in runs):.3f}" for key in runs[0])
            print(f"{name:12s} {label:6s} {cells}")


if __name__ == "__main__":
    main()
