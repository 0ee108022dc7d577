"""Issue #6's scenario: one long tool loop that fills a 30k window several times over.

`pi-tui -p` reads 100 files of about 1,000 tokens each (about 3.5 windows' worth); the fake answers the
summary requests with a structured checkpoint. Reported: the cache read ratio of the summary requests
alone (they reuse the session's own cached prefix, so the target is ≥ 0.9), how many compactions ran, and
the run's overall ratio.
"""

from __future__ import annotations

import json
from typing import Any

from pi_tui.compaction import is_checkpoint_request
from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call

from .scenarios import Result, make_env, run_cli, write_models

WINDOW = 30_000
READS = 100
SUMMARY = (
    "## Goal\nRead every file in data/.\n\n## Constraints & Preferences\n- One file per call\n\n"
    "## Progress\n### Done\n- [x] Read the earlier files\n\n### In Progress\n- [ ] Reading the rest\n\n"
    "### Blocked\n- (none)\n\n## Key Decisions\n- **Sequential reads**: as asked\n\n"
    "## Next Steps\n1. Read the next file\n\n## Critical Context\n- (none)"
)


def _is_summary(request: RecordedRequest) -> bool:
    last = request.last_user_text()
    return is_checkpoint_request(last) or last.startswith("<conversation>")


def _responder() -> Any:
    state = {"n": 0}

    def respond(request: RecordedRequest) -> Reply:
        if _is_summary(request):
            return Reply([text(SUMMARY)])
        n = state["n"]
        state["n"] += 1
        if n < READS:
            return Reply([tool_call("read", {"path": f"data/f{n:03d}.txt"})])
        return Reply([text(f"Read {READS} files.")])

    return respond


def _ratio(records: list[RecordedRequest]) -> tuple[float | None, int]:
    read = total = 0
    for record in records:
        usage = record.response.usage if record.response else None
        if not usage:
            continue
        read += usage.get("cache_read", 0)
        total += usage.get("input", 0) + usage.get("cache_read", 0) + usage.get("cache_write", 0)
    return (read / total if total else None), total


def compaction_long() -> Result:
    env = make_env()
    data = env.repo / "data"
    data.mkdir()
    line = "abcdefghij" * 7 + "\n"
    for n in range(READS):
        (data / f"f{n:03d}.txt").write_text("".join(f"{n:04d}:{i:03d} {line}" for i in range(52)))
    fake = FakeLLM(context_window=WINDOW, responder=_responder())
    with fake.serve() as server:
        model = write_models(env, server, context_window=WINDOW)
        settings = {
            "retry": {"baseDelayMs": 10},
            "compaction": {"reserveTokens": 8_000, "keepRecentTokens": 6_000},
        }
        (env.agent_dir / "settings.json").write_text(json.dumps(settings))
        run = run_cli(env, ["--model", model, "-p", f"Read the {READS} files in data/ one by one."])
    records = [r for r in fake.requests if r.api != "anthropic-count-tokens"]
    summaries = [r for r in records if _is_summary(r)]
    summary_ratio, _ = _ratio(summaries)
    overall, _ = _ratio(records)
    code, wall, cpu, rss, out, err = run
    return Result(
        "compaction_long",
        f"{READS} reads of ~1k tokens in a {WINDOW // 1000}k window: cache read ratio of the summary requests",
        wall,
        cpu,
        rss,
        len(records),
        len(fake.violations),
        summary_ratio,
        code,
        {
            "compactions": len(summaries),
            "summary_cache_read_ratio": None if summary_ratio is None else round(summary_ratio, 3),
            "run_cache_read_ratio": None if overall is None else round(overall, 3),
            "answer": out.strip()[:40],
        },
        err[-2000:],
    )
