"""Transcript search on a generated 20k-entry session, headless: what each key of the search costs.

A child process opens `bench.big_sessions`'s 20,000-entry session in the real `PiApp` (faux provider:
nothing is sent) at 120×40 and waits until the app is idle and its screens are prepared. Then it opens
the search (Ctrl+Shift+F) and types, one key at a time: ``turn 5:`` (its last key selects a match near
the top of the session, far above the mounted window), backspaces back to nothing, ``module`` (a
common word: hundreds of matches), ten Enters (next match) and five Shift+Enters (previous).

Per key: the wall time from the key event to the frame after the selected match was brought into view,
the process's CPU over the same span, and the CPU of the search's own work (`TranscriptSearch.set_query`
/ `step`: folding what changed, counting and finding in the text) apart from the window moving and the
frame. Reported: p50 / p95 / max of each, and the load average.

    python -m bench tui_search_20k -n 1 --no-write
    python -m bench.tui_search REPO          # the raw figures, as JSON
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .scenarios import Result
from .tui_scroll import ENTRIES, _percentiles, run_child

__all__ = ["register_all", "tui_search"]

QUERY_FAR = "turn 5:"
QUERY_COMMON = "module"
NEXT = 10
PREVIOUS = 5


async def _measure(repo: Path) -> dict[str, Any]:
    import gc

    from textual import events

    from pi_tui.args import parse_args
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.modes.interactive.search_corpus import fold
    from pi_tui.modes.interactive.transcript_search import TranscriptSearch
    from pi_tui.runtime.factory import create_session

    from .big_sessions import write_big_session

    session_file = write_big_session(repo / "big-session.jsonl", ENTRIES, repo)
    own: list[float] = []
    set_query, step = TranscriptSearch.set_query, TranscriptSearch.step

    def timed_set(search: TranscriptSearch, text: str) -> None:
        start = time.process_time()
        set_query(search, text)
        own.append(time.process_time() - start)

    def timed_step(search: TranscriptSearch, direction: int) -> None:
        start = time.process_time()
        step(search, direction)
        own.append(time.process_time() - start)

    TranscriptSearch.set_query = timed_set  # type: ignore[method-assign]
    TranscriptSearch.step = timed_step  # type: ignore[method-assign]

    def create(trust: bool | None) -> Any:
        return create_session(parse_args(["--provider", "faux", "--session", str(session_file)]), repo)

    gc.disable()  # as `pi-tui` does: no collection until the first frame, then start-up is frozen
    app = PiApp(create, cwd=repo, agent_dir=Path(os.environ["PI_CODING_AGENT_DIR"]))
    app.resume_gc_after_first_frame = True
    figures: dict[str, Any] = {"entries": ENTRIES}
    async with app.run_test(size=(120, 40)) as pilot:
        loop = asyncio.get_running_loop()
        while app.screens_prepared is None or not app.screens_prepared.is_set():
            await asyncio.sleep(0.05)
        await pilot.pause(0.5)

        async def press(key: str, character: str | None = None) -> tuple[float, float]:
            """Send ``key``; wall and CPU seconds until the frame after its match is in view."""
            search = app.transcript_search
            assert search is not None and search.bar is not None
            before, typed = search.selections, search.bar.input.value
            wall, cpu = time.perf_counter(), time.process_time()
            app.post_message(events.Key(key, character))
            while True:  # until the key has selected a match and placed it (a bound: 10 s)
                value = search.bar.input.value if search.bar is not None else typed
                if search.selections > before and search.located:
                    break
                if value != typed and fold(value) == search.query:
                    break  # a space the query ignores (runs of spaces fold to one): nothing to select
                if time.perf_counter() - wall > 10:
                    raise TimeoutError(f"{key}: the search never placed its match")
                await asyncio.sleep(0.0005)
            drawn: asyncio.Future[None] = loop.create_future()
            app.call_after_refresh(lambda: drawn.done() or drawn.set_result(None))
            await drawn
            return time.perf_counter() - wall, time.process_time() - cpu

        walls: list[float] = []
        cpus: list[float] = []
        far: dict[str, float] = {}

        async def key(name: str, character: str | None = None) -> None:
            wall, cpu = await press(name, character)
            walls.append(wall)
            cpus.append(cpu)

        wall = time.perf_counter()
        app.post_message(events.Key("ctrl+shift+f", None))
        while app.transcript_search is None or not app.transcript_search.has_focus:
            await asyncio.sleep(0.0005)
        opened = (time.perf_counter() - wall, 0.0)
        search = app.transcript_search
        names = {" ": "space", ":": "colon"}
        for character in QUERY_FAR:
            await key(names.get(character, character), character)
        far = {"wall_ms": round(walls[-1] * 1000, 1), "cpu_ms": round(cpus[-1] * 1000, 1)}
        figures["far_match"] = {
            **far,
            "matches": search.total,
            "first_mounted": app.chat.first_mounted,
            "items": len(app.chat.items),
        }
        for _ in QUERY_FAR:
            await key("backspace")
        for character in QUERY_COMMON:
            await key(character, character)
        figures["common_matches"] = search.total
        for _ in range(NEXT):
            await key("enter")
        for _ in range(PREVIOUS):
            await key("shift+enter")
        figures["open_ms"] = round(opened[0] * 1000, 1)
        figures["keys"] = len(walls)
        figures["key_wall_ms"] = _percentiles(walls)
        figures["key_cpu_ms"] = _percentiles(cpus)
        figures["search_cpu_ms"] = _percentiles(own)
        figures["corpus_chars"] = len(search.corpus.text)
    figures["load_average"] = round(os.getloadavg()[0], 2)
    return figures


def tui_search() -> Result:
    figures = run_child("bench.tui_search")
    worst = figures.get("key_wall_ms", {}).get("max", 0.0)
    return Result(
        name="tui_search_20k",
        description="transcript search on a 20k-entry session: typing, a far match, next / previous (headless)",
        wall_s=worst / 1000,
        cpu_s=figures.get("key_cpu_ms", {}).get("max", 0.0) / 1000,
        peak_rss_mb=0.0,
        requests=0,
        violations=0,
        cache_read_ratio=None,
        exit_code=0 if "error" not in figures else 1,
        extra=figures,
        stderr=str(figures.get("error", "")),
    )


def register_all() -> None:
    from .registry import register

    register("tui_search_20k", tui_search, section="tui")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_measure(Path(sys.argv[1])))))
