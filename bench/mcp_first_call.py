"""The first call of a lazy stdio MCP server against that server's own start-up.

For each server available here (the SDK-built demo test server and a bare JSON-RPC one always; the reference filesystem
server when ``tests.mcp_servers`` has installed it; ``mcp-server-git`` when the dev extra is
installed; the bench installs nothing), round robin, ``MCP_FIRST_CALL_RUNS`` times (default 5):

- **own start-up**: a minimal raw JSON-RPC client spawns the bare server the way pi-tui does (its own
  session, the same few inherited environment variables, the project as its working directory) and times
  it until it has answered ``initialize``, then ``tools/list``, then the call: the work of the server
  alone that any first call waits for, the figure the gap is taken against (the ``initialize`` answer
  alone is reported beside it, as the bench did before). The roots exchange is not in it (this client
  offers no roots), though a first call from pi-tui waits for it: it is part of the 50 ms budget;
- **first call**: ``pi-tui -e mcp --mode json`` with the server configured lazy, the fake model calling
  one of its tools in its first answer; the time from the ``tool_execution_start`` line to
  ``tool_execution_end`` (SDK import left over, spawn, handshake, listing, roots, the call). Twice: with
  the fake answering at once (the SDK import, started when the request went out, has had 10-25 ms), and with its
  first byte after ``SLOW_MODEL_S`` (as a real model's first token: the import has finished by then);
- **SDK import**: the CPU a fresh interpreter spends importing what the extension preloads.

Wall times, so the minimum over the runs is the figure (the shared machine only adds); medians beside.

    python -m bench mcp_first_call --no-write
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.bundled_extensions.mcp.stdio import INHERITED_ENV

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .registry import register
from .scenarios import Result, make_env, write_models
from .targets import PI_TUI

ROOT = Path(__file__).resolve().parent.parent
SLOW_MODEL_S = 0.8
DEMO = ROOT / "tests" / "shipped_extensions" / "mcp_servers" / "demo.py"
PLAIN = ROOT / "tests" / "shipped_extensions" / "mcp_servers" / "plain.py"  # starts in a few ms
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


@dataclass(frozen=True)
class Subject:
    name: str
    argv: list[str]
    tool: str
    args: dict[str, Any]


def _subjects() -> list[Subject]:
    found = [Subject("demo (Python SDK server)", [sys.executable, str(DEMO)], "add", {"a": 1, "b": 2}),
             Subject("plain (bare JSON-RPC, no SDK)", [sys.executable, str(PLAIN)], "text", {})]  # fmt: skip
    try:
        from tests.mcp_servers import _COMPLETE, _cache_dir

        folder = _cache_dir()
        script = folder / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
        if (folder / _COMPLETE).is_file() and script.is_file():
            found.append(Subject("filesystem (reference, Node)", ["node", str(script), str(ROOT)],
                                 "list_allowed_directories", {}))  # fmt: skip
    except ImportError:
        pass
    git = Path(sys.executable).with_name("mcp-server-git")
    if git.is_file():
        found.append(Subject("mcp-server-git (PyPI)", [str(git), "--repository", str(ROOT)], "git_status",
                             {"repo_path": str(ROOT)}))  # fmt: skip
    return found


def own_startup(subject: Subject) -> tuple[float, float, float]:
    """Seconds from spawning the bare server until it answered ``initialize``, ``tools/list`` and the call.

    Spawned as pi-tui's stdio transport spawns a server: its own session, only the environment variables
    a server inherits (``INHERITED_ENV``), the project (here the repository) as its working directory.
    """
    env = {k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None}
    start = time.perf_counter()
    proc = subprocess.Popen(subject.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=ROOT, env=env, start_new_session=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    call = {"name": subject.tool, "arguments": subject.args}
    try:
        _send(proc.stdin, INITIALIZE)
        _until_answer(proc.stdout, 1)
        initialized = time.perf_counter() - start
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})  # fmt: skip
        _until_answer(proc.stdout, 2)
        listed = time.perf_counter() - start
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        _until_answer(proc.stdout, 3)
        return initialized, listed, time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()


def _send(stdin: Any, *messages: dict[str, Any]) -> None:
    for message in messages:
        stdin.write((json.dumps(message) + "\n").encode())
    stdin.flush()


def _until_answer(stdout: Any, request_id: int) -> None:
    while True:
        line = stdout.readline()
        if not line:
            raise RuntimeError("the server exited before answering")
        if json.loads(line).get("id") == request_id:
            return


def first_call(
    subject: Subject, first_byte_delay: float = 0.0, extension: str = "mcp"
) -> tuple[float, float, float, int]:
    """pi-tui's first call through the proxy: (call seconds, process wall, process CPU, exit code).

    ``extension``: ``mcp`` (the bundled one) or the path of another copy, to compare versions.
    """
    env = make_env()
    server = {"command": subject.argv[0], "args": subject.argv[1:]}
    (env.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    fake = FakeLLM()
    call = tool_call("mcp", {"tool": f"s/{subject.tool}", "args": subject.args})
    fake.script([Reply([call], first_byte_delay=first_byte_delay), Reply([text("done")])])
    marks: dict[str, float] = {}
    with fake.serve() as served:
        model = write_models(env, served)
        start = time.perf_counter()
        proc = subprocess.Popen(PI_TUI.command(["--model", model, "-e", extension, "--mode", "json", "go"]),
                                cwd=env.repo, env=env.environ(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            kind = json.loads(line).get("type")
            if kind in ("tool_execution_start", "tool_execution_end"):
                marks.setdefault(kind, time.perf_counter())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if len(marks) < 2:
        return float("nan"), wall, usage.ru_utime + usage.ru_stime, code or 1
    return (
        marks["tool_execution_end"] - marks["tool_execution_start"],
        wall,
        usage.ru_utime + usage.ru_stime,
        code,
    )


def sdk_import_cpu() -> float:
    """CPU seconds a fresh interpreter spends importing what the extension preloads for stdio."""
    code = (
        "import time, importlib\n"
        "from pi_tui.bundled_extensions.mcp.sdk import import_client, modules_for\n"
        "start = time.process_time()\n"
        "import_client(modules_for(['stdio']))\n"
        "print(time.process_time() - start)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return float(run.stdout.strip())


def _ms(values: list[float]) -> str:
    return f"min {min(values) * 1000:.0f} ms, median {statistics.median(values) * 1000:.0f} ms"


def mcp_first_call() -> Result:
    runs = int(os.environ.get("MCP_FIRST_CALL_RUNS", "5"))
    subjects = _subjects()
    own: dict[str, list[float]] = {s.name: [] for s in subjects}  # until the call is answered
    initialized: dict[str, list[float]] = {s.name: [] for s in subjects}
    listed: dict[str, list[float]] = {s.name: [] for s in subjects}
    calls: dict[str, list[float]] = {s.name: [] for s in subjects}
    slow: dict[str, list[float]] = {s.name: [] for s in subjects}
    processes: list[tuple[float, float, int]] = []
    imports: list[float] = []
    for _ in range(runs):
        imports.append(sdk_import_cpu())
        for subject in subjects:
            answered = own_startup(subject)
            initialized[subject.name].append(answered[0])
            listed[subject.name].append(answered[1])
            own[subject.name].append(answered[2])
            seconds, wall, cpu, code = first_call(subject)
            calls[subject.name].append(seconds)
            processes.append((wall, cpu, code))
            seconds, _, _, code = first_call(subject, SLOW_MODEL_S)
            slow[subject.name].append(seconds)
            processes.append((wall, cpu, code))
    extra: dict[str, Any] = {"runs": runs, "load_average": os.getloadavg()[0],
                             "sdk_import_cpu_ms": round(min(imports) * 1000)}  # fmt: skip
    lines = []
    for subject in subjects:
        gap = min(calls[subject.name]) - min(own[subject.name])
        # The same gap, run by run (each first call against the own start-up taken just before it): on a
        # loaded machine both swing with the load of the moment, so pairs drift less than the two minima.
        paired = [c - o for c, o in zip(calls[subject.name], own[subject.name], strict=True)]
        extra[subject.name] = {
            "own_startup_ms": round(min(own[subject.name]) * 1000),
            "own_startup_initialized_ms": round(min(initialized[subject.name]) * 1000),
            "own_startup_listed_ms": round(min(listed[subject.name]) * 1000),
            "first_call_ms": round(min(calls[subject.name]) * 1000),
            "first_call_median_ms": round(statistics.median(calls[subject.name]) * 1000),
            "gap_ms": round(gap * 1000),
            "gap_paired_min_ms": round(min(paired) * 1000),
            "gap_paired_median_ms": round(statistics.median(paired) * 1000),
            "first_call_slow_model_ms": round(min(slow[subject.name]) * 1000),
            "first_call_slow_model_median_ms": round(statistics.median(slow[subject.name]) * 1000),
            "gap_slow_model_ms": round((min(slow[subject.name]) - min(own[subject.name])) * 1000),
        }
        lines.append(f"{subject.name}: own start-up {_ms(own[subject.name])} (initialize answered: "
                     f"{_ms(initialized[subject.name])}); first call {_ms(calls[subject.name])} "
                     f"(run by run, {_ms(paired)} more than the own start-up), "
                     f"after a model taking {SLOW_MODEL_S:g} s {_ms(slow[subject.name])}")  # fmt: skip
    wall, cpu, code = sorted(processes, key=lambda p: p[1])[len(processes) // 2]
    failed = [p for p in processes if p[2] != 0]
    description = (
        "first call of a lazy stdio MCP server in `pi-tui -e mcp --mode json` vs the server's own start-up "
        f"(min of {runs}): " + "; ".join(lines)
    )
    return Result("mcp_first_call", description, wall, cpu, 0.0, 2, 0, None,
                  failed[0][2] if failed else code, extra)  # fmt: skip


def register_all() -> None:
    register("mcp_first_call", mcp_first_call, section="print")
