"""``/compact`` on a generated 20,000-entry session, beside the cost of the request it sends.

Each figure comes from a child process (its own HOME and agent dir) that resumes the session written by
`bench.big_sessions.write_big_session` (~12 MB, pi's v3 format) with a real `AgentSession` whose model is
the in-process fake server (`pi_tui.testing.FakeLLM`, on a loopback port, in a thread of the same
process: its decoding of the 6 MB request is in the CPU figures, as the target counts it). CPU is
`time.process_time()` (all threads); nothing but the measured step runs in between.

- ``compact``: ``session.compact()`` right after the resume (what ``/compact``, the print-mode
  ``/compact`` and RPC ``compact`` call), the prompt cache of the wire form cold;
- ``counted``: the same after the session counted its messages' tokens (what the TUI's work ahead does
  once a session is shown, and ``/context``): the compaction reuses those counts;
- ``threshold``: the automatic compaction a request after the resume starts when the context is over
  the threshold (`CompactionController.preflight`), on a model whose window is small enough;
- ``request``: the compaction's own request alone, in a fresh process: the session's request built
  (replay, panels, `to_llm_request`), the instruction appended, converted, encoded, sent and answered.
  Its body is compared with the one ``compact`` sent (``same_body``).

``ratio`` is ``compact`` / ``request``: what the compaction does beyond the request it sends.
``estimates`` is how many message token estimates the compaction made (`pi_tui.ai.tokens.
message_estimates`), beside ``messages``, the number of messages on the path.

    python -m bench compact_big_20k -n 3 --no-write
    python -m bench.compact_big compact DIR     # the raw figures of one child, as JSON
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .scenarios import Result

__all__ = ["register_all"]

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = 20_000
SUMMARY = "## Goal\nKeep working on the modules.\n\n## Progress\n### Done\n- [x] Read the files"
# A window that holds the whole branch (~770k tokens by chars/4), so the prefix form is chosen.
WINDOW = 2_000_000
# The generated session's last usage says ~21k tokens: this window puts it over the threshold.
THRESHOLD_WINDOW = 30_000


def _models(agent_dir: Path, base_url: str, window: int) -> str:
    config = {
        "providers": {
            "bench": {
                "baseUrl": base_url,
                "api": "anthropic-messages",
                "apiKey": "bench-key",
                "models": [
                    {"id": "bench-model", "contextWindow": window, "maxTokens": 8192, "reasoning": True}
                ],
            }
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(config))
    return "bench/bench-model"


async def _measure(mode: str, root: Path) -> dict[str, Any]:
    import gc

    from pi_tui.ai.tokens import message_estimates
    from pi_tui.args import parse_args
    from pi_tui.runtime.factory import create_session
    from pi_tui.testing import FakeLLM, Reply, text

    from .big_sessions import write_big_session

    repo = root / "repo"
    repo.mkdir(parents=True, exist_ok=True)
    session_file = write_big_session(repo / "big-session.jsonl", ENTRIES, repo)
    window = THRESHOLD_WINDOW if mode == "threshold" else WINDOW
    fake = FakeLLM(context_window=window)
    fake.script([Reply([text(SUMMARY)])])
    figures: dict[str, Any] = {"mode": mode}
    with fake.serve() as server:
        model = _models(Path(os.environ["PI_CODING_AGENT_DIR"]), server.anthropic_base_url, window)
        session = create_session(parse_args(["--session", str(session_file), "--model", model]), repo).session
        figures["messages"] = sum(1 for e in session.session_manager.get_branch() if e.type == "message")
        if mode == "counted":
            session.count_context_tokens()
        gc.collect()
        gc.freeze()  # as the app does once a session is shown: collections skip the loaded session
        estimates = message_estimates()
        if mode == "request":
            from pi_tui.ai.stream import LlmRequest
            from pi_tui.ai.types import TextContent, UserMessage
            from pi_tui.compaction.summarize import complete_text

            instruction = (root / "instruction.txt").read_text()
            cpu, wall = time.process_time(), time.perf_counter()
            backend = await session.compaction_backend()
            base = backend.base_request
            assert base is not None and base.cache_boundary is not None
            request = LlmRequest(
                system_prompt=base.system_prompt,
                messages=[
                    *base.messages[: base.cache_boundary],
                    UserMessage(content=[TextContent(text=instruction)]),
                ],
                tools=list(base.tools),
                cache_boundary=base.cache_boundary,
            )
            await complete_text(backend, request, max_tokens=int(0.8 * 16_384), signal=None)
        elif mode == "threshold":
            cpu, wall = time.process_time(), time.perf_counter()
            compacted = await session.compaction.preflight(0)
            assert compacted, "the session was not over the threshold"
        else:
            cpu, wall = time.process_time(), time.perf_counter()
            await session.compact()
        figures["cpu_ms"] = round((time.process_time() - cpu) * 1000, 1)
        figures["wall_ms"] = round((time.perf_counter() - wall) * 1000, 1)
        figures["estimates"] = message_estimates() - estimates
        await session.close()
    sent = [r for r in fake.requests if r.api == "anthropic"]
    figures["requests"] = len(sent)
    figures["request_mb"] = round(len(json.dumps(sent[-1].body)) / 1e6, 2) if sent else 0
    if sent:
        (root / f"body-{mode}.json").write_text(json.dumps(sent[-1].body))
        (root / "instruction.txt").write_text(sent[-1].last_user_text())
    return figures


def _child(mode: str, root: Path) -> dict[str, Any]:
    home = root / f"home-{mode}"
    env = dict(os.environ, HOME=str(home), PI_CODING_AGENT_DIR=str(home / ".pi" / "agent"))
    run = subprocess.run(
        [sys.executable, "-m", "bench.compact_big", mode, str(root)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {run.returncode}"}
    figures: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return figures


def compact_big(runs: int = 3) -> Result:
    """Alternate ``compact`` and ``request`` children ``runs`` times (then one ``threshold`` and one
    ``counted``); medians."""
    root = Path(tempfile.mkdtemp(prefix="pi-tui-compact-bench-"))
    compact: list[dict[str, Any]] = []
    request: list[dict[str, Any]] = []
    for _ in range(runs):
        compact.append(_child("compact", root))  # writes the instruction the request child sends
        request.append(_child("request", root))
    threshold = _child("threshold", root)
    counted = _child("counted", root)
    errors = [f.get("error") for f in (*compact, *request, threshold, counted) if f.get("error")]
    figures: dict[str, Any] = {"errors": errors} if errors else {}
    if not errors:
        compact_cpu = statistics.median(f["cpu_ms"] for f in compact)
        request_cpu = statistics.median(f["cpu_ms"] for f in request)
        same = (root / "body-compact.json").read_text() == (root / "body-request.json").read_text()
        figures.update(
            compact_cpu_ms=compact_cpu,
            compact_cpu_ms_min=min(f["cpu_ms"] for f in compact),
            request_cpu_ms=request_cpu,
            request_cpu_ms_min=min(f["cpu_ms"] for f in request),
            ratio=round(compact_cpu / request_cpu, 2),
            threshold_cpu_ms=threshold["cpu_ms"],
            counted_cpu_ms=counted["cpu_ms"],
            counted_estimates=counted["estimates"],
            estimates=compact[0]["estimates"],
            threshold_estimates=threshold["estimates"],
            messages=compact[0]["messages"],
            request_mb=compact[0]["request_mb"],
            same_body=same,
            load=round(os.getloadavg()[0], 2),
        )
    cpu = figures.get("compact_cpu_ms", 0.0) / 1000
    return Result(
        name="compact_big_20k",
        description=f"/compact on a generated {ENTRIES:,}-entry session vs its own request (target ratio ≤ 1.5)",
        wall_s=statistics.median(f.get("wall_ms", 0.0) for f in compact) / 1000,
        cpu_s=cpu,
        peak_rss_mb=0.0,
        requests=1,
        violations=0,
        cache_read_ratio=None,
        exit_code=1 if errors else 0,
        extra=figures,
        stderr="; ".join(str(e) for e in errors),
    )


def register_all() -> None:
    from .registry import register

    register("compact_big_20k", lambda: compact_big(runs=3), section="screens")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_measure(sys.argv[1], Path(sys.argv[2])))))
