"""Issue #4's cost scenario: 50 turns with the three bundled panel extensions, changing every few turns.

Runs in-process (a real `AgentSession` against the fake LLM server) twice, with the bundled ``todo``,
``pinned_files`` and ``git_status`` extensions loaded through the extension loader (``-e NAME``) in a git
repository: once with their default placement (the uncached tail) and once with every panel in the cached
prefix (settings ``todo.placement``, ``pinnedFiles.placement``, ``gitStatus.placement`` = ``"prefix"``), as
Context Pilot places them. The model's scripted turns are the same in both runs:

- every turn reads ``src/module.py`` and answers;
- every third turn it also marks the next todo done (Todo panel), rewrites the pinned ``config.py``
  (Pinned files panel, and ``git status``) and adds a note file (``git status``);
- every ninth turn (4, 13, 22, …, never one that writes) it commits (``git status`` clean again, a new
  line under "Recent commits").

The cost of each run is computed from the fake server's own cache report (input, cache read, cache write,
output) at Sonnet-class prices.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call

from .scenarios import MODEL_COST, Result, make_env, write_models

TURNS = 50
CHANGE_EVERY = 3
COMMIT_EVERY = 9
TODOS = 12
EXTENSIONS = ("todo", "pinned_files", "git_status")
PLACEMENT_SETTINGS = ("todo", "pinnedFiles", "gitStatus")


def _cost(fake: FakeLLM) -> float:
    total = 0.0
    for record in fake.requests:
        if record.api == "anthropic-count-tokens":
            continue
        usage = record.cache
        out = int((record.response.usage or {}).get("output", 0)) if record.response else 0
        total += (
            usage.input * MODEL_COST["input"]
            + usage.cache_read * MODEL_COST["cacheRead"]
            + usage.cache_write * MODEL_COST["cacheWrite"]
            + out * MODEL_COST["output"]
        ) / 1e6
    return total


def _config(version: int) -> str:
    return "\n".join(f"setting_{n} = {version * 100 + n}  # configuration value" for n in range(150)) + "\n"


def _turn_calls(turn: int) -> list[Any]:
    calls: list[Any] = [tool_call("read", {"path": "src/module.py"})]
    if turn == 0:
        items = [{"text": f"refactor part {i} of the parser"} for i in range(TODOS)]
        calls.append(tool_call("todo", {"action": "set", "items": items}))
    elif turn % CHANGE_EVERY == 0:
        version = turn // CHANGE_EVERY
        if version <= TODOS:
            calls.append(tool_call("todo", {"action": "update", "id": version, "status": "done"}))
        calls.append(tool_call("write", {"path": "config.py", "content": _config(version)}))
        calls.append(tool_call("write", {"path": f"note_{version}.txt", "content": f"note {version}\n"}))
    if turn % COMMIT_EVERY == COMMIT_EVERY // 2:  # never in a turn that writes: tools run in parallel
        calls.append(tool_call("bash", {"command": f"git add -A && git commit -qm 'checkpoint {turn}'"}))
    return calls


def _responder() -> Any:
    """Each turn is two requests: the tool calls, then an answer (the same in both runs)."""
    count = {"n": 0}

    def respond(request: RecordedRequest) -> Reply:
        count["n"] += 1
        turn = (count["n"] - 1) // 2
        if count["n"] % 2:
            return Reply([text("Let me check the module."), *_turn_calls(turn)])
        return Reply([text("Done: the module is consistent with the notes. " * 6)])

    return respond


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


async def _run(placement: str) -> tuple[FakeLLM, float]:
    env = make_env()
    (env.repo / "src").mkdir()
    (env.repo / "src" / "module.py").write_text("def f(x):\n    return x * 2\n" * 120)
    (env.repo / "config.py").write_text(_config(0))
    os.environ["HOME"] = str(env.home)
    os.environ["PI_CODING_AGENT_DIR"] = str(env.agent_dir)
    _git(env.repo, "init", "-q", "-b", "main")
    _git(env.repo, "config", "user.name", "bench")
    _git(env.repo, "config", "user.email", "bench@example.com")
    _git(env.repo, "add", "-A")
    _git(env.repo, "commit", "-qm", "initial")

    fake = FakeLLM()
    fake.responder = _responder()
    with fake.serve() as server:
        model = write_models(env, server)
        settings_path = env.agent_dir / "settings.json"
        settings = json.loads(settings_path.read_text())
        settings.update({key: {"placement": placement} for key in PLACEMENT_SETTINGS})
        settings_path.write_text(json.dumps(settings))
        argv = ["--model", model, *(arg for name in EXTENSIONS for arg in ("-e", name))]
        session = create_session(parse_args(argv), env.repo).session
        loaded = [e.name for e in session.extensions.extensions]
        if loaded != list(EXTENSIONS):
            raise RuntimeError(f"the panel extensions did not load: {loaded}")
        await session.prompt("/pin config.py")
        for turn in range(TURNS):
            await session.prompt(f"Turn {turn}: please check src/module.py against the notes.")
        await session.close()
    return fake, _cost(fake)


def panels_cost() -> Result:
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    fake_ours, cost_ours = asyncio.run(_run("tail"))
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    fake_prefix, cost_prefix = asyncio.run(_run("prefix"))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stats = fake_ours.cache_stats()
    return Result(
        "panels_50_turns",
        f"{TURNS} turns, the todo/pinned_files/git_status extensions changing every {CHANGE_EVERY} turns (in-process)",
        wall,
        cpu,
        rss,
        len(fake_ours.requests),
        len(fake_ours.violations) + len(fake_prefix.violations),
        stats.hit_ratio,
        0,
        {
            "cost with pi-tui placement (panels in the tail)": f"${cost_ours:.4f}",
            "cost with every panel in the prefix": f"${cost_prefix:.4f}",
            "prefix-placement cache read ratio": f"{fake_prefix.cache_stats().hit_ratio:.3f}",
        },
    )


__all__ = ["panels_cost"]
