"""Checkpoint overhead per tool call on a 1,000-file repository, and the store's size after 100 calls.

Runs in process (no CLI, no model): the same ``edit``, ``write`` and ``bash`` tools the agent runs,
once with checkpoints off and once on, on a fresh 1,000-file git repository; the difference per call
is the overhead. ``bash`` is measured as the before/after project snapshot the runtime wraps around
each command (the command itself is the same either way). Targets: ≤ 5 ms per ``edit``/``write``,
≤ 30 ms per ``bash``.

    .venv/bin/python -m bench checkpoints_1000_files -n 1 --no-write
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_tui.ai.stream import AbortSignal
from pi_tui.checkpoints import Checkpointer, CheckpointLimits
from pi_tui.tools.edit import create_edit_tool
from pi_tui.tools.write import create_write_tool

from .scenarios import Result

__all__ = ["checkpoints_bench", "register_all"]

FILES = 1000
CALLS = 100


def _make_repo(root: Path) -> Path:
    repo = root / "repo"
    for n in range(FILES):
        folder = repo / f"pkg{n // 25:02d}" / ("sub" if n % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def f_{n}_{i}(x):\n    return x * {i} + {n}\n\n" for i in range(60))  # ~2.5 KB
        (folder / f"mod{n}.py").write_text(body)
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=False)
    return repo


class _Timed:
    """Wraps `Checkpointer.record_file` and keeps the wall and CPU time of each call (the recording is
    the whole of what checkpoints add to an edit or a write, besides write's read of the old file)."""

    def __init__(self, checkpointer: Checkpointer) -> None:
        self.checkpointer = checkpointer
        self.wall: dict[str, list[float]] = {"edit": [], "write": []}
        self.cpu: dict[str, list[float]] = {"edit": [], "write": []}

    def __call__(self, path: Path, before: bytes | None, after: bytes | None, kind: str) -> dict[str, Any]:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return self.checkpointer.record_file(path, before, after, kind)
        finally:
            self.cpu[kind].append((time.thread_time() - cpu) * 1000)
            self.wall[kind].append((time.perf_counter() - wall) * 1000)


async def _tool_calls(repo: Path, on_change: Any, tag: str) -> tuple[float, float]:
    """``CALLS`` edits and ``CALLS`` writes; returns the mean wall ms per edit and per write."""
    edit, write = create_edit_tool(repo, on_change=on_change), create_write_tool(repo, on_change=on_change)
    signal = AbortSignal()
    start = time.perf_counter()
    for n in range(CALLS):
        path = f"pkg{n // 25:02d}/mod{n}.py" if n % 2 == 0 else f"pkg{n // 25:02d}/sub/mod{n}.py"
        edit_args = {
            "path": path,
            "edits": [{"oldText": f"def f_{n}_{tag}(x):", "newText": f"def f_{n}_{tag}_new(x):"}],
        }
        await edit.execute("c", edit_args, signal, None)
    edit_ms = (time.perf_counter() - start) * 1000 / CALLS
    start = time.perf_counter()
    for n in range(CALLS):
        await write.execute(
            "c", {"path": f"new/{tag}/w{n}.py", "content": f"# {tag} {n}\n" * 80}, signal, None
        )
    write_ms = (time.perf_counter() - start) * 1000 / CALLS
    return edit_ms, write_ms


def _bash_calls(repo: Path, checkpointer: Checkpointer) -> tuple[float, float, float, int]:
    """The snapshot pair around ``CALLS`` commands that each change one file (as ``sed -i`` would).

    Returns the first (cold) pair in ms, the median wall and CPU ms of the others, and how many changes
    were seen.
    """
    seen = 0
    times: list[float] = []
    cpu: list[float] = []
    for n in range(CALLS):
        start, start_cpu = time.perf_counter(), time.process_time()
        before = checkpointer.command_snapshot()
        elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        m = (n * 7) % FILES
        target = repo / f"pkg{m // 25:02d}" / ("sub" if m % 2 else "") / f"mod{m}.py"
        target.write_text(target.read_text().replace("return x", "return  x", 1))  # the command's work
        start, start_cpu = time.perf_counter(), time.process_time()
        data = checkpointer.command_changes(before, "bash")
        times.append((elapsed + time.perf_counter() - start) * 1000)
        cpu.append((elapsed_cpu + time.process_time() - start_cpu) * 1000)
        seen += len(data["files"])
    return times[0], statistics.median(times[1:]), statistics.median(cpu[1:]), seen


def checkpoints_bench() -> Result:
    wall, cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = _make_repo(root)
        store = root / "store"
        plain_edit, plain_write = asyncio.run(_tool_calls(repo, None, "1"))
        checkpointer = Checkpointer(repo, store, CheckpointLimits())
        timed = _Timed(checkpointer)
        cp_edit, cp_write = asyncio.run(_tool_calls(repo, timed, "2"))
        first_bash, bash_ms, bash_cpu, seen = _bash_calls(repo, checkpointer)
        store_bytes = checkpointer.store.size_bytes()
        blobs = sum(1 for _ in checkpointer.store.iter_blobs())
        repo_bytes = sum(p.stat().st_size for p in repo.rglob("*.py"))
    extra: dict[str, Any] = {
        "edit_record_ms": round(statistics.median(timed.wall["edit"]), 2),
        "edit_record_cpu_ms": round(statistics.median(timed.cpu["edit"]), 2),
        "write_record_ms": round(statistics.median(timed.wall["write"]), 2),
        "write_record_cpu_ms": round(statistics.median(timed.cpu["write"]), 2),
        "edit_call_ms_off_on": f"{plain_edit:.2f}/{cp_edit:.2f}",
        "write_call_ms_off_on": f"{plain_write:.2f}/{cp_write:.2f}",
        "bash_snapshot_ms": round(bash_ms, 1),
        "bash_snapshot_cpu_ms": round(bash_cpu, 1),
        "first_bash_snapshot_ms": round(first_bash, 1),
        "bash_changes_seen": seen,
        "store_mb_after_the_loop": round(store_bytes / 1e6, 2),
        "blobs": blobs,
        "repo_mb": round(repo_bytes / 1e6, 2),
    }
    return Result(
        name="checkpoints_1000_files",
        description=f"checkpoint overhead: {CALLS} edits, {CALLS} writes, {CALLS} bash snapshots, {FILES} files",
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

    register("checkpoints_1000_files", checkpoints_bench, section="checkpoints")
