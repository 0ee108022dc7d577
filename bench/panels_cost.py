"""Issue #4's cost scenario: 50 turns with three panels whose content changes every few turns.

Runs in-process (a real `AgentSession` against the fake LLM server) twice: once with pi-tui's placement
(volatile panels in the uncached tail, the stable one in the cached prefix) and once with every panel in
the prefix, as Context Pilot places them. The cost of each run is computed from the fake server's own
cache report (input, cache read, cache write, output) at Sonnet-class prices.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from pathlib import Path
from typing import Any

from pi_tui.args import parse_args
from pi_tui.context.panels import Panel
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call

from .scenarios import MODEL_COST, Result, make_env, write_models

TURNS = 50
CHANGE_EVERY = 3


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


def _responder() -> Any:
    """Each turn is two requests: a tool call, then an answer (the same in both runs)."""
    count = {"n": 0}

    def respond(_request: RecordedRequest) -> Reply:
        count["n"] += 1
        if count["n"] % 2:
            return Reply([text("Let me check the module."), tool_call("read", {"path": "src/module.py"})])
        return Reply([text("Done: the module is consistent with the notes. " * 6)])

    return respond


async def _run(placements: dict[str, str]) -> tuple[FakeLLM, float]:
    env = make_env()
    (env.repo / "src").mkdir()
    (env.repo / "src" / "module.py").write_text("def f(x):\n    return x * 2\n" * 120)
    os.environ["HOME"] = str(env.home)
    os.environ["PI_CODING_AGENT_DIR"] = str(env.agent_dir)
    state = {"turn": 0}

    def todo() -> str:
        done = min(state["turn"] // CHANGE_EVERY, 12)
        return "\n".join(
            f"- [{'x' if i < done else ' '}] task {i}: refactor part {i} of the parser" for i in range(12)
        )

    def pinned() -> str:
        version = state["turn"] // CHANGE_EVERY
        return "\n".join(
            f"{n:4d}  setting_{n} = {version * 100 + n}  # configuration value" for n in range(150)
        )

    def git_status() -> str:
        version = state["turn"] // CHANGE_EVERY
        return "On branch main\nChanges not staged for commit:\n" + "".join(
            f"\tmodified:   src/file_{i}.py\n" for i in range(version % 7 + 1)
        )

    fake = FakeLLM()
    fake.responder = _responder()
    with fake.serve() as server:
        model = write_models(env, server)
        startup = create_session(parse_args(["--model", model]), env.repo)
        session = startup.session
        session.panels.register(Panel("Todo", todo, placement=placements["Todo"]))  # type: ignore[arg-type]
        session.panels.register(Panel("Pinned: config.py", pinned, placement=placements["Pinned"]))  # type: ignore[arg-type]
        session.panels.register(Panel("Git status", git_status, placement=placements["Git"]))  # type: ignore[arg-type]
        for turn in range(TURNS):
            state["turn"] = turn
            await session.prompt(f"Turn {turn}: please check src/module.py against the notes.")
        await session.close()
    return fake, _cost(fake)


def panels_cost() -> Result:
    ours = {"Todo": "tail", "Pinned": "tail", "Git": "tail"}
    prefix = {"Todo": "prefix", "Pinned": "prefix", "Git": "prefix"}
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    fake_ours, cost_ours = asyncio.run(_run(ours))
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    fake_prefix, cost_prefix = asyncio.run(_run(prefix))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stats = fake_ours.cache_stats()
    return Result(
        "panels_50_turns",
        f"{TURNS} turns, 3 panels changing every {CHANGE_EVERY} turns (in-process)",
        wall,
        cpu,
        rss,
        len(fake_ours.requests),
        len(fake_ours.violations) + len(fake_prefix.violations),
        stats.hit_ratio,
        0,
        {
            "cost with pi-tui placement (volatile panels in the tail)": f"${cost_ours:.4f}",
            "cost with every panel in the prefix": f"${cost_prefix:.4f}",
            "prefix-placement cache read ratio": f"{fake_prefix.cache_stats().hit_ratio:.3f}",
        },
    )


__all__ = ["panels_cost", "Path"]
