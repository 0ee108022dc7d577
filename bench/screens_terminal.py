"""``/tree``, ``/context`` and ``/resume`` on a 20k-entry session in a real terminal (pty + pyte), opened at
several moments after the session is loaded, and their keystrokes.

The program is the ``pi-tui`` a user runs, with ``--session`` of a generated 20,000-entry file in a folder
of 1,000 sessions (ten of 20,000 entries, `bench.screens`). The command is typed while the session loads
(the editor keeps it); once the footer names the model (the session is loaded and the work ahead of the
screens starts) the bench waits ``delay`` ms and presses Enter. "Open" is Enter → the screen's title on
the emulated screen (a frame finished: synchronized output; for ``/tree`` with the leaf's row in it;
``/context`` shows before its figures, ``report_*`` is when they are there),
and the CPU the process used meanwhile (/proc, all threads). A fresh process per (screen, delay), so every open is that screen's first.

Keystrokes (on the screen opened last, one second after the load): each key → the next frame that
changes the screen (characters or colours): ``/tree`` search typing, ↑ moves, filter toggles (Ctrl+T
twice, Ctrl+U twice); ``/context`` ↓ moves; ``/resume`` search typing and ↓ moves. A key that changes
nothing is timed by the next change there is (``/resume``'s search field blinks its cursor twice a
second), so the keys chosen each change something. ``keys_cpu_ms_per_key`` is the program's CPU over
those keys (search cleared again included), per key: what a key costs whatever the machine's load,
plus what the program does in the background meanwhile (before the first key the bench waits for 0.15 s
of quiet output, in which ``/context``'s cache projection may still be running).

    python -m bench screens_terminal_20k -n 1 --no-write
    python -c "from bench.screens_terminal import measure; print(measure(delays=(0, 300)))"
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text

from .big_sessions import BIG_WINDOW, write_big_session
from .pty_screen import PtyScreen, timing
from .scenarios import Result
from .tui import Program, _pi_tui_target, cpu_seconds
from .tui_fixtures import MODEL_ID, TuiEnv, make_tui_env

__all__ = ["measure", "register_all"]

ENTRIES = 20_000
DELAYS_MS = (0, 100, 300, 1000)
TARGET_OPEN_MS = 150
TARGET_KEY_MS = 33
TITLES = {"tree": "Session Tree", "context": "Next request →", "resume": "Type to search"}
"""What shows that the screen is drawn (its title, for ``/resume`` its search field, for ``/context`` its
tree's root, there before its messages are counted)."""


def _write_folder(env: TuiEnv) -> Path:
    """990 small sessions and ten of `ENTRIES` entries in the repo's session folder; the first big one
    is the session opened."""
    import shutil

    from pi_tui.session.paths import default_session_dir

    from .screens import BIG_COUNT, SESSIONS, _write_sessions

    before = os.environ.get("PI_CODING_AGENT_DIR")
    os.environ["PI_CODING_AGENT_DIR"] = str(env.agent_dir)  # `_write_sessions` writes to the default folder
    try:
        _write_sessions(env.repo, SESSIONS - BIG_COUNT)
    finally:
        if before is None:
            os.environ.pop("PI_CODING_AGENT_DIR", None)
        else:
            os.environ["PI_CODING_AGENT_DIR"] = before
    folder = default_session_dir(env.repo, env.agent_dir)
    first = write_big_session(folder / "2025-07-01T00-00-00-000Z_big-0.jsonl", ENTRIES, env.repo)
    for n in range(1, BIG_COUNT):
        shutil.copyfile(first, folder / f"2025-07-{1 + n:02d}T00-00-00-000Z_big-{n}.jsonl")
    return first


def _leaf_words(session: Path) -> str:
    """The first words of the session's last answer (the leaf's row in ``/tree``)."""
    import json

    last = session.read_text().rstrip("\n").rsplit("\n", 1)[-1]
    return " ".join(json.loads(last)["message"]["content"][0]["text"].split()[:3])


def _look(screen: PtyScreen) -> tuple[tuple[str, str], ...]:
    """The screen with its colours (a cursor move changes only those)."""
    return tuple(
        (char.data, char.bg)
        for line in range(screen.screen.lines)
        for char in screen.screen.buffer[line].values()
    )


def _key_ms(screen: PtyScreen, key: str, *, timeout: float = 5.0) -> float:
    """Send ``key``; ms until a finished frame differs from the screen before it."""
    screen.drain(quiet=0.15, limit=3)
    before = _look(screen)
    with timing():
        sent = screen.send(key)
        deadline = sent + timeout
        while time.perf_counter() < deadline:
            if screen.pump(0.05) and not screen.in_update and _look(screen) != before:
                return (screen.last_output_at - sent) * 1000
    return timeout * 1000


def _keys(screen: PtyScreen, keys: Sequence[str]) -> list[float]:
    return [round(_key_ms(screen, key), 1) for key in keys]


def _open(
    program: Program,
    env: TuiEnv,
    session: Path,
    command: str,
    delay_ms: int,
    keys: Callable[[PtyScreen], Any],
) -> dict[str, Any]:
    with program.spawn(env, ["--session", str(session)]) as screen:
        screen.wait_for(lambda s: MODEL_ID in s or "/" in s, timeout=60)
        screen.send(f"/{command}")
        screen.wait_for(f"/{command}", timeout=60)  # typed during the load: the editor keeps it
        ready = screen.wait_for(lambda s: MODEL_ID in s, timeout=120)
        while time.perf_counter() < ready + delay_ms / 1000:
            screen.pump(max(0.0, ready + delay_ms / 1000 - time.perf_counter()))
        cpu = cpu_seconds(screen.pid)
        title = TITLES[command]
        leaf = _leaf_words(session)
        with timing():
            sent = screen.send("\r")
            if command == "tree":  # drawn with the rows at the leaf (its row is the session's last answer)
                shown = screen.wait_for(lambda s: title in s and leaf in s, timeout=30)
            else:
                shown = screen.wait_for(title, timeout=30)
        figures: dict[str, Any] = {
            "open_ms": round((shown - sent) * 1000, 1),
            "open_cpu_ms": round((cpu_seconds(screen.pid) - cpu) * 1000, 1),
            "after_load_ms": round((sent - ready) * 1000, 1),
        }
        if command == "resume":
            figures["rows_ms"] = round((screen.wait_for("message 0", timeout=30) - sent) * 1000, 1)
        if command == "context":  # the report shown: every message counted
            figures["report_ms"] = round((screen.wait_for("Context transforms", timeout=30) - sent) * 1000, 1)
        extra = keys(screen)
        if extra:
            figures.update(extra)
        return figures


def _tree_keys(screen: PtyScreen) -> dict[str, Any]:
    screen.drain(quiet=0.5, limit=5)
    cpu = cpu_seconds(screen.pid)
    search = _keys(screen, "module")
    for _ in "module":
        screen.send("\x7f")  # Backspace: the search is cleared again
    moves = _keys(screen, ["\x1b[A"] * 8)
    filters = _keys(screen, ["\x14", "\x14", "\x15", "\x15"])  # Ctrl+T, Ctrl+U: on and back off
    figures = {"search_keys_ms": search, "move_keys_ms": moves, "filter_keys_ms": filters}
    return figures | _cpu_per_key(screen, cpu, 2 * len("module") + 8 + 4)


def _resume_keys(screen: PtyScreen) -> dict[str, Any]:
    screen.drain(quiet=0.5, limit=5)
    cpu = cpu_seconds(screen.pid)
    search = _keys(screen, "session 1")
    for _ in "session 1":
        screen.send("\x7f")
    moves = _keys(screen, ["\x1b[B"] * 8)  # down from the first row (up there changes nothing)
    return {"search_keys_ms": search, "move_keys_ms": moves} | _cpu_per_key(
        screen, cpu, 2 * len("session 1") + 8
    )


def _context_keys(screen: PtyScreen) -> dict[str, Any]:
    screen.drain(quiet=0.5, limit=5)
    cpu = cpu_seconds(screen.pid)
    moves = _keys(screen, ["\x1b[B"] * 8)
    return {"move_keys_ms": moves} | _cpu_per_key(screen, cpu, 8)


def _cpu_per_key(screen: PtyScreen, since: float, keys: int) -> dict[str, float]:
    """The program's CPU (all threads) over the keys sent, per key: what a key costs whatever the load
    (/proc counts in 10 ms ticks, so only the mean over several keys means something)."""
    return {"keys_cpu_ms_per_key": round((cpu_seconds(screen.pid) - since) * 1000 / keys, 1)}


KEYS: dict[str, Callable[[PtyScreen], dict[str, Any]]] = {
    "tree": _tree_keys,
    "context": _context_keys,
    "resume": _resume_keys,
}


def measure(
    commands: Sequence[str] = ("tree", "context", "resume"), delays: Sequence[int] = DELAYS_MS, runs: int = 1
) -> dict[str, Any]:
    """Figures per command: each delay's open (min and all runs), and the keystrokes of the last open."""
    fake = FakeLLM(context_window=BIG_WINDOW)
    fake.responder = lambda _request: Reply([text("unused")])
    out: dict[str, Any] = {}
    with fake.serve() as server:
        env = make_tui_env(server)
        try:
            session = _write_folder(env)
            program = Program("pi-tui", _pi_tui_target())
            with program.spawn(env, ["--session", str(session)]) as warm:  # bytecode and file caches
                warm.wait_for(lambda s: MODEL_ID in s, timeout=120)
            for command in commands:
                figures: dict[str, Any] = {}
                for delay in delays:
                    opens = []
                    for run in range(runs):
                        last = delay == delays[-1] and run == runs - 1
                        keys = KEYS[command] if last else (lambda _screen: {})
                        opens.append(_open(program, env, session, command, delay, keys))
                    figures[f"open_{delay}ms"] = [o["open_ms"] for o in opens]
                    figures[f"open_cpu_{delay}ms"] = [o["open_cpu_ms"] for o in opens]
                    if command == "resume":
                        figures[f"rows_{delay}ms"] = [o["rows_ms"] for o in opens]
                    if command == "context":
                        figures[f"report_{delay}ms"] = [o["report_ms"] for o in opens]
                    for key in ("search_keys_ms", "move_keys_ms", "filter_keys_ms", "keys_cpu_ms_per_key"):
                        if key in opens[-1]:
                            figures[key] = opens[-1][key]
                worst = max(min(figures[f"open_{d}ms"]) for d in delays)
                figures["worst_open_ms"] = worst
                keys_all = [
                    k
                    for key in ("search_keys_ms", "move_keys_ms", "filter_keys_ms")
                    for k in figures.get(key, [])
                ]
                figures["key_p50_ms"] = round(statistics.median(keys_all), 1) if keys_all else None
                figures["key_max_ms"] = max(keys_all) if keys_all else None
                out[command] = figures
            out["load_average"] = round(os.getloadavg()[0], 2)
        finally:
            env.cleanup()
    return out


def _scenario(runs: int) -> Result:
    figures = measure(runs=max(1, runs))
    worst = max(figures[c]["worst_open_ms"] for c in ("tree", "context", "resume"))
    flat = {f"{c}_{k}": v for c in ("tree", "context", "resume") for k, v in figures[c].items()}
    flat["load_average"] = figures["load_average"]
    flat["target_open_ms"] = TARGET_OPEN_MS
    flat["target_key_ms"] = TARGET_KEY_MS
    return Result(
        name="screens_terminal_20k",
        description=f"/tree, /context, /resume on a {ENTRIES:,}-entry session in a terminal, opened "
        f"{', '.join(map(str, DELAYS_MS))} ms after the load (target ≤ {TARGET_OPEN_MS} ms, keys ≤ {TARGET_KEY_MS} ms)",
        wall_s=worst / 1000,
        cpu_s=0.0,
        peak_rss_mb=0.0,
        requests=0,
        violations=0,
        cache_read_ratio=None,
        exit_code=0,
        extra=flat,
    )


def register_all() -> None:
    from .registry import register

    register("screens_terminal_20k", lambda: _scenario(1), section="screens")


if __name__ == "__main__":
    import json
    import sys

    wanted = sys.argv[1:] or ["tree", "context", "resume"]
    print(json.dumps(measure(commands=wanted), indent=1))
