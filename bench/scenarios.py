"""Benchmark scenarios: each runs `pi-tui` as a subprocess against the in-process fake LLM server.

A scenario prepares a temp home and repo, scripts the fake, runs the CLI and returns a `Result` with the
process's wall time, CPU time and peak RSS (from ``wait4``), plus what the fake saw: requests, rule
violations and the cache read ratio.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pi_tui.session.paths import encode_cwd
from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call

from .targets import PI_TUI, Target

MODEL_COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


@dataclass
class Result:
    name: str
    description: str
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    requests: int
    violations: int
    cache_read_ratio: float | None
    exit_code: int
    extra: dict[str, Any] = field(default_factory=dict)
    stderr: str = ""


def median_result(runs: list[Result]) -> Result:
    """The run with the median CPU time, carrying the median wall and CPU and the highest peak RSS."""
    runs = sorted(runs, key=lambda r: r.cpu_s)
    mid = dataclasses.replace(runs[len(runs) // 2])
    mid.wall_s = statistics.median(r.wall_s for r in runs)
    mid.cpu_s = statistics.median(r.cpu_s for r in runs)
    mid.peak_rss_mb = max(r.peak_rss_mb for r in runs)
    return mid


@dataclass
class Env:
    root: Path
    home: Path
    agent_dir: Path
    repo: Path

    def environ(self, target: Target = PI_TUI) -> dict[str, str]:
        """A clean environment (no keys, no proxies) with this temp home."""
        return target.environ(self.home, self.agent_dir)


def make_env() -> Env:
    root = Path(tempfile.mkdtemp(prefix="pi-tui-bench-"))
    env = Env(root, root / "home", root / "home" / ".pi" / "agent", root / "repo")
    env.agent_dir.mkdir(parents=True)
    env.repo.mkdir()
    return env


def write_models(
    env: Env, server: Any, api: str = "anthropic-messages", context_window: int = 200_000
) -> str:
    base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    config = {
        "providers": {
            "bench": {
                "baseUrl": base,
                "api": api,
                "apiKey": "bench-key",
                "models": [
                    {
                        "id": "bench-model",
                        "contextWindow": context_window,
                        "maxTokens": 8192,
                        "cost": MODEL_COST,
                    }
                ],
            }
        }
    }
    (env.agent_dir / "models.json").write_text(json.dumps(config))
    (env.agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    return "bench/bench-model"


def run_cli(env: Env, args: list[str], target: Target = PI_TUI) -> tuple[int, float, float, float, str, str]:
    """Run pi-tui (or ``target``); returns (exit code, wall s, cpu s, peak rss MB, stdout, stderr)."""
    out_path = env.root / "stdout.txt"
    err_path = env.root / "stderr.txt"
    inherited = _high_water_kib("self")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            target.command(args),
            cwd=env.repo,
            env=env.environ(target),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        sampled = _HighWater(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        sampled.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    rss_mb = _peak_kib(usage.ru_maxrss, inherited, sampled.peak) / 1024
    return proc.returncode, wall, cpu, rss_mb, out_path.read_text(), err_path.read_text()


def _peak_kib(maxrss: int, inherited: int | None, sampled: int) -> int:
    """The child's own peak RSS.

    ``wait4``'s ``ru_maxrss`` counts the memory the child shared with this (bench) process between fork
    and exec: after a long scenario the fake server holds hundreds of megabytes, and a one-turn run
    "peaked" at 600 MB. Above this process's high-water mark the figure is the child's own; at or
    below it, the child's ``VmHWM`` sampled while it ran (after its exec) is used instead.
    """
    if inherited is None or maxrss > inherited:
        return maxrss
    return sampled or maxrss


def _high_water_kib(pid: int | str) -> int | None:
    """``VmHWM`` of a process in KiB (None where /proc does not say)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class _HighWater:
    """Samples a running child's ``VmHWM`` (a high-water mark: the last sample is the best) every 5 ms."""

    def __init__(self, pid: int) -> None:
        self.peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(pid,), daemon=True)
        self._thread.start()

    def _run(self, pid: int) -> None:
        while not self._done.is_set():
            value = _high_water_kib(pid)
            if value is None:
                return
            self.peak = max(self.peak, value)
            self._done.wait(0.005)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def _result(
    name: str, description: str, fake: FakeLLM, run: tuple[int, float, float, float, str, str], **extra: Any
) -> Result:
    code, wall, cpu, rss, _out, err = run
    stats = fake.cache_stats()
    ratio = getattr(stats, "hit_ratio", None)
    return Result(
        name,
        description,
        wall,
        cpu,
        rss,
        len([r for r in fake.requests if r.api != "anthropic-count-tokens"]),
        len(fake.violations),
        ratio,
        code,
        extra,
        err[-2000:],
    )


def one_turn(api: str = "anthropic-messages", target: Target = PI_TUI) -> Result:
    env = make_env()
    fake = FakeLLM()
    fake.script([Reply([text("Hello! The answer is 42.")])])
    with fake.serve() as server:
        model = write_models(env, server, api=api)
        run = run_cli(env, ["--model", model, "-p", "What is the answer?"], target)
    if api == "anthropic-messages":
        return _result("one_turn", "`pi-tui -p` with a one-turn answer (Anthropic API)", fake, run)
    return _result("one_turn_openai", "`pi-tui -p` with a one-turn answer (OpenAI chat API)", fake, run)


def one_turn_faux() -> Result:
    """pi-tui's own cost: the same one-turn run with the in-process faux provider (no SDK import)."""
    env = make_env()
    fake = FakeLLM()
    run = run_cli(env, ["--provider", "faux", "-p", "What is the answer?"])
    return _result("one_turn_faux", "one-turn answer from the in-process faux provider (no SDK)", fake, run)


def fix_bug() -> Result:
    env = make_env()
    (env.repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("read", {"path": "calc.py"})]),
            Reply(
                [tool_call("edit", {"path": "calc.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]})]
            ),
            Reply([tool_call("bash", {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"})]),
            Reply([text("Fixed.")]),
        ]
    )
    with fake.serve() as server:
        model = write_models(env, server)
        run = run_cli(env, ["--model", model, "-p", "Fix add()"])
    fixed = "a + b" in (env.repo / "calc.py").read_text()
    return _result("fix_bug", "read → edit → bash → answer (Anthropic API)", fake, run, fixed=fixed)


def _tool_loop_responder(count: int, files: int) -> Callable[[RecordedRequest], Reply]:
    state = {"n": 0}

    def respond(_request: RecordedRequest) -> Reply:
        n = state["n"]
        state["n"] += 1
        if n < count:
            return Reply([tool_call("read", {"path": f"data/f{n % files:02d}_{n}.txt"})])
        return Reply([text(f"Read {count} files.")])

    return respond


def tool_loop(count: int = 100, api: str = "anthropic-messages", target: Target = PI_TUI) -> Result:
    env = make_env()
    data = env.repo / "data"
    data.mkdir()
    files = 10
    line = "abcdefghij" * 7 + "\n"  # 71 bytes
    for n in range(count):
        body = "".join(f"{n:04d}:{i:03d} {line}" for i in range(52))  # ~4 KB, distinct per file
        (data / f"f{n % files:02d}_{n}.txt").write_text(body)
    # ~1,300 tokens per call: a window that holds the whole loop, so no compaction interferes.
    window = max(200_000, count * 2_000)
    fake = FakeLLM(context_window=window)
    fake.responder = _tool_loop_responder(count, files)
    with fake.serve() as server:
        model = write_models(env, server, api=api, context_window=window)
        run = run_cli(env, ["--model", model, "-p", f"Read the {count} files in data/ one by one."], target)
    label = "Anthropic" if api == "anthropic-messages" else "OpenAI chat"
    return _result(
        f"tool_loop_{count}" + ("" if api == "anthropic-messages" else "_openai"),
        f"{count} sequential tool calls with ~4 KB outputs ({label})",
        fake,
        run,
    )


PI_SESSIONS = Path("/work/shared/fixtures/pi-sessions")


def resume_large(target: Target = PI_TUI) -> Result:
    """Resume pi's 1 MB, 1,000-line v1 session (migrated and rewritten on the first append), answer once.

    The header's working directory is set to the run's repo: pi 0.87 refuses a session whose stored
    directory does not exist, and both programs get the same file.
    """
    env = make_env()
    sessions = env.agent_dir / "sessions" / "resumed"
    sessions.mkdir(parents=True)
    session = sessions / "large-session.jsonl"
    lines = (PI_SESSIONS / "large-session.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = str(env.repo)
    lines[0] = json.dumps(header) + "\n"
    session.write_text("".join(lines))
    fake = FakeLLM()
    fake.script([Reply([text("Done.")])])
    with fake.serve() as server:
        # Anthropic: the file's foreign thinking blocks are replayed as text, so the fake accepts them.
        model = write_models(env, server)
        run = run_cli(env, ["--session", str(session), "--model", model, "-p", "one more"], target)
    sent = len(fake.requests[0].messages) if fake.requests else 0
    return _result(
        "resume_large",
        "`--session large-session.jsonl -p` (pi v1 file, 1 MB): load, migrate, answer (Anthropic API)",
        fake,
        run,
        messages_sent=sent,
    )


def _small_session(index: int, cwd: Path) -> tuple[str, str]:
    """(file name, content) of a small pi-style session: header, model change, one question and answer."""
    stamp = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=index)
    iso = stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    ms = int(stamp.timestamp() * 1000)
    session_id = str(uuid.UUID(int=index + 1, version=4))
    ids = [f"{index * 3 + k:08x}" for k in range(3)]
    usage = {"input": 10, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}
    question = {"role": "user", "content": [{"type": "text", "text": f"Question {index}: " + "why? " * 40}]}
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Because. " * 100}],
        "api": "anthropic-messages",
        "provider": "bench",
        "model": "bench-model",
        "usage": usage,
        "stopReason": "stop",
    }
    lines = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": iso, "cwd": str(cwd)},
        {
            "type": "model_change",
            "id": ids[0],
            "parentId": None,
            "timestamp": iso,
            "provider": "bench",
            "modelId": "bench-model",
        },
        {
            "type": "message",
            "id": ids[1],
            "parentId": ids[0],
            "timestamp": iso,
            "message": {**question, "timestamp": ms},
        },
        {
            "type": "message",
            "id": ids[2],
            "parentId": ids[1],
            "timestamp": iso,
            "message": {**answer, "timestamp": ms + 1000},
        },
    ]
    name = re.sub(r"[:.]", "-", iso) + f"_{session_id}.jsonl"
    return name, "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def list_sessions_1000(count: int = 1000) -> Result:
    """`pi-tui -r` (the print-mode listing) over 1,000 small sessions of one directory."""
    env = make_env()
    cwd = env.repo.resolve()
    directory = env.agent_dir / "sessions" / encode_cwd(cwd)
    directory.mkdir(parents=True)
    for i in range(count):
        name, body = _small_session(i, cwd)
        (directory / name).write_text(body)
    fake = FakeLLM()
    run = run_cli(env, ["-r"])
    listed = sum(1 for line in run[4].splitlines() if line.endswith(".jsonl"))
    return _result(
        "list_1000", f"`pi-tui -r`: list {count} sessions of one directory", fake, run, listed=listed
    )


def _panels_cost() -> Result:
    from .panels_cost import panels_cost

    return panels_cost()


def _compaction_long() -> Result:
    from .compaction_long import compaction_long

    return compaction_long()


def _startup_10_extensions() -> Result:
    from .startup_extensions import startup_10_extensions

    return startup_10_extensions()


def _startup_budget() -> Result:
    from .startup_budget import startup_budget

    return startup_budget()


def register_all() -> None:
    """Put the print-mode scenarios into the registry (`bench.registry`)."""
    from .registry import register

    register("one_turn_faux", one_turn_faux)
    register("one_turn", one_turn)
    register("one_turn_openai", lambda: one_turn("openai-completions"))
    register("fix_bug", fix_bug)
    register("tool_loop_100", tool_loop)
    register("tool_loop_100_openai", lambda: tool_loop(100, "openai-completions"))
    register("resume_large", resume_large)
    register("list_1000", list_sessions_1000)
    register("panels_50_turns", _panels_cost)
    register("compaction_long", _compaction_long)
    register("startup_10_extensions", _startup_10_extensions)
    register("startup_budget", _startup_budget)
