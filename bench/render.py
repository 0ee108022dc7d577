"""docs/performance.md from bench results: the comparison with pi, then one section per registry section."""

from __future__ import annotations

import os
import platform
from datetime import date

from .compare import Pair, per_call_cpu_ms
from .registry import SECTIONS
from .scenarios import Result
from .targets import PI_VERSION

__all__ = ["hand_written_sections", "render"]

# Headings this renderer writes (and older renderers wrote); any other ``## `` section of the doc was
# written by hand (or by another tool) and is carried over as it is.
_GENERATED = ("Start-up", "Against the newest pi", "Scenarios", "Where a one-turn answer's CPU goes", "Notes")


def hand_written_sections(doc: str) -> list[str]:
    """The lines of every ``## `` section of ``doc`` that the renderer does not write itself."""
    generated = (*_GENERATED, *(heading for heading, _ in SECTIONS.values()))
    kept: list[str] = []
    keeping = False
    for line in doc.splitlines():
        if line.startswith("## "):
            keeping = not line[3:].startswith(generated)
        if keeping:
            kept.append(line)
    if kept and kept[-1].strip():
        kept.append("")
    return kept


_HEADER = "| scenario | what | wall s | CPU s | peak RSS MB | requests | rule violations | cache read ratio | status |"


def _row(r: Result) -> str:
    ratio = "—" if r.cache_read_ratio is None else f"{r.cache_read_ratio:.3f}"
    status = "ok" if r.exit_code == 0 else f"exit {r.exit_code}"
    return (
        f"| {r.name} | {r.description} | {r.wall_s:.2f} | {r.cpu_s:.2f} | {r.peak_rss_mb:.0f} | "
        f"{r.requests} | {r.violations} | {ratio} | {status} |"
    )


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


_HOW = [
    "How a request stays cheap (issue #12): the providers talk HTTP through pi-tui's own wire client",
    "(`pi_tui.ai.wire` over `pi_tui.ai.http`: asyncio streams and `h11`, plus a small SSE decoder; `httpx2`",
    "only behind a proxy; the vendor SDKs are never imported, only the tests use them, as the oracle of the",
    "decoding). Each stored message is converted and JSON-encoded once (`ConversionCache`), each request",
    "extends the previous one's prepared and converted history (`PrefixMemo`), and the body encoder keeps",
    "the previous body's pieces and adds only the new items' JSON. The context engine extends the previous",
    "request's replay by the new session entries (`ReplayCache`), fingerprints only new blocks, and takes",
    "over the history part of the last request; the cache ledger finds the prefix hit by bisecting the",
    "running digests and reads token sums from running totals; the session tree's path walk stops at the",
    "last path's leaf; session lines are fsync'ed on a background thread (group commit). Once requests",
    "pass ~32k tokens, glibc is told to keep large freed blocks (`pi_tui.util.large_buffers`), so the",
    "megabyte bodies of a long run stop faulting in fresh pages; start-up's objects are frozen out of the",
    "cyclic garbage collector (`gc.freeze()` in the CLI). What stays O(history) per request: sending the",
    "body (the APIs are stateless: pi sends the same bytes; the kernel's copy and the copies into one",
    "buffer) and identity checks and list copies over the message list, in C.",
]


def _why(pairs: dict[str, Pair], results: dict[str, Result]) -> list[str]:
    """What stands in the way of the missed targets, from this run's own figures."""
    lines = ["What stands in the way:", ""]
    budget = results.get("startup_budget")
    one = pairs.get("one_turn")
    resume = pairs.get("resume_large")
    start_missed = any(
        pair is not None and (ratio := pair.wall_ratio) is not None and ratio > (pair.wall_target or ratio)
        for pair in (one, resume)
    )
    if start_missed and one is not None and budget is not None and budget.extra:
        extra = budget.extra
        everything = extra.get("everything a one-turn -p run imports before its request", 0)
        http = everything - extra.get("the same without the HTTP stack", everything)
        lines.append(
            f"- One turn and resume: pi-tui's run is mostly imports. Of the {one.ours.cpu_s * 1000:.0f} ms of CPU, "
            f"the interpreter takes {extra.get('interpreter', 0)} ms, asyncio {extra.get('asyncio', 0)} ms, "
            f"pi-tui's message records {extra.get('pi_tui.ai.types (the message records)', 0)} ms and the HTTP "
            f"client {extra.get('the HTTP client (pi_tui.ai.http with h11)', 0)} ms ({http} ms on top of what "
            f"pi-tui imports anyway); all a one-turn run imports before its request: {everything} ms. pi (one "
            "bundled script, V8's code cache) starts without an import step of this kind."
        )
    loop = pairs.get("tool_loop_100")
    loop_ratio = loop.wall_ratio if loop is not None else None
    if (
        loop is not None
        and loop.pi is not None
        and loop_ratio is not None
        and loop_ratio > (loop.wall_target or loop_ratio)
    ):
        lines.append(
            f"- 100 tool calls: pi-tui's wall time ({loop.ours.wall_s:.2f} s) is its CPU time "
            f"({loop.ours.cpu_s:.2f} s) plus the fake server's time to take and answer each request (in the "
            "bench process: it parses, validates and hashes each body, ~0.5 MB at the end); pi overlaps part of its work "
            f"on other threads (CPU {loop.pi.cpu_s:.2f} s in {loop.pi.wall_s:.2f} s of wall)."
        )
    return [*lines, ""] if len(lines) > 2 else []


def _comparison(pairs: dict[str, Pair], pi_note: str) -> list[str]:
    if not pairs:
        return []
    lines = [
        f"## Against the newest pi ({PI_VERSION}), print mode",
        "",
        "Same run, same fake server, same machine; pi-tui and pi alternate, each after one discarded",
        "warm-up run (bytecode and file caches warm). Both get a clean environment, a temp home whose",
        "`models.json` points at the fake server, and `PI_OFFLINE=1`. Target (issue #12): pi-tui's wall",
        "time ≤ 0.8× pi's.",
        "",
    ]
    if pi_note:
        lines += [f"> {pi_note}", ""]
    lines += [
        "| scenario | pi-tui wall s | pi wall s | ratio | target | pi-tui CPU s | pi CPU s | violations (pi-tui / pi) | cache read ratio (pi-tui / pi) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for pair in pairs.values():
        ours, theirs = pair.ours, pair.pi
        ratio = pair.wall_ratio
        ratio_text = "—" if ratio is None else f"{ratio:.2f}×"
        if pair.wall_target is None or ratio is None:
            target = "—"
        else:
            target = f"≤ {pair.wall_target}× {_verdict(ratio <= pair.wall_target)}"

        def cache(r: Result | None) -> str:
            return "—" if r is None or r.cache_read_ratio is None else f"{r.cache_read_ratio:.3f}"

        lines.append(
            f"| {pair.description} | {ours.wall_s:.2f} | {'—' if theirs is None else f'{theirs.wall_s:.2f}'} | "
            f"{ratio_text} | {target} | {ours.cpu_s:.2f} | {'—' if theirs is None else f'{theirs.cpu_s:.2f}'} | "
            f"{ours.violations} / {'—' if theirs is None else theirs.violations} | {cache(ours)} / {cache(theirs)} |"
        )
        for run in (ours, theirs):
            if run is not None and run.exit_code != 0:
                lines.append(f"|  ↳ {run.name} exited {run.exit_code} | | | | | | | | |")
    lines.append("")
    ours_100, ours_400 = per_call_cpu_ms(pairs, 100), per_call_cpu_ms(pairs, 400)
    if ours_100 is not None and ours_400 is not None and ours_100 > 0:
        growth = ours_400 / ours_100
        pi_100, pi_400 = per_call_cpu_ms(pairs, 100, "pi"), per_call_cpu_ms(pairs, 400, "pi")
        pi_text = ""
        if pi_100 is not None and pi_400 is not None and pi_100 > 0:
            pi_text = f" (pi: {pi_100:.1f} ms and {pi_400:.1f} ms, {pi_400 / pi_100:.2f}×)"
        lines += [
            "Per-call CPU (the loop's CPU minus a one-turn answer's, divided by the number of calls): "
            f"100-call loop {ours_100:.1f} ms, 400-call loop {ours_400:.1f} ms, {growth:.2f}×{pi_text}. "
            f"Target: the 400-call loop ≤ 1.2× the 100-call loop's, {_verdict(growth <= 1.2)}.",
            "",
        ]
    loop = pairs.get("tool_loop_100")
    if loop is not None and loop.ours.cache_read_ratio is not None:
        ok = loop.ours.cache_read_ratio >= 0.97
        lines += [
            f"Cache read ratio of pi-tui's 100-call loop: {loop.ours.cache_read_ratio:.3f} (target ≥ 0.97, "
            f"{_verdict(ok)}). Rule violations of pi-tui's requests across these runs: "
            f"{sum(p.ours.violations for p in pairs.values())}.",
            "",
        ]
    return lines


def _section(key: str, results: dict[str, Result], sections: dict[str, str]) -> list[str]:
    heading, what = SECTIONS[key]
    rows = [r for name, r in results.items() if sections.get(name, "print") == key]
    lines = [f"## {heading}", "", what, ""]
    if key == "tui" and rows:  # bench/tui.py: each figure beside its target and pi's, not these columns
        from .tui import section_lines

        return [*lines, *section_lines(results)]
    if not rows:
        return [*lines, "_No figures yet: register scenarios for this section in `bench/registry.py`._", ""]
    lines += [_HEADER, "|---|---|---|---|---|---|---|---|---|"]
    lines += [_row(r) for r in rows]
    lines.append("")
    if key == "print":
        lines += [
            "Cache read ratio is the fake server's Σ cache read / Σ (input + cache read + cache write) over the run,",
            "from its prompt-cache simulation (Anthropic: explicit breakpoints with the 20-block look-back; OpenAI:",
            "automatic prefixes of ≥ 1024 tokens in 128-token steps). For the 100-tool-call loop the best possible is",
            "about 0.98: every request must write its new tail once.",
            "",
        ]
        faux = results.get("one_turn_faux")
        real = results.get("one_turn")
        if faux is not None and real is not None:
            lines += [
                "Where a one-turn answer's CPU goes: pi-tui itself with the in-process `faux` provider takes "
                f"{faux.cpu_s:.2f} s; the same answer over HTTP from the fake server takes {real.cpu_s:.2f} s. The "
                "providers talk to the APIs through pi-tui's own wire client (`pi_tui.ai.wire` over `pi_tui.ai.http`: asyncio and `h11`), "
                "not the vendor SDKs.",
                "",
            ]
        budget = results.get("startup_budget")
        if budget is not None and budget.extra:
            from .startup_budget import breakdown_lines

            lines += breakdown_lines(budget)
    return lines


def render(
    results: dict[str, Result],
    sections: dict[str, str],
    pairs: dict[str, Pair],
    startup: tuple[float, float],
    runs: int,
    pi_note: str,
    existing: str = "",
) -> str:
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
        f"`pi-tui --version`: {startup[0] * 1000:.0f} ms wall, {startup[1] * 1000:.0f} ms CPU.",
        "",
    ]
    lines += _comparison(pairs, pi_note)
    if pairs:
        lines += [*_HOW, "", *_why(pairs, results)]
    for key in SECTIONS:
        lines += _section(key, results, sections)
    lines += hand_written_sections(existing)
    extra = [r for r in results.values() if r.extra]
    if extra:
        lines += ["## Notes", ""]
        lines += [f"- {r.name}: " + ", ".join(f"{k}={v}" for k, v in r.extra.items()) for r in extra]
        lines.append("")
    return "\n".join(lines)
