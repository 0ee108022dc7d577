"""Scrolling a generated 20k-entry session in the TUI, headless: what each key press costs while held.

A child process opens `bench.big_sessions`'s 20,000-entry session in the real `PiApp` (faux provider:
nothing is sent) at 120×40, with the collector set up as ``pi-tui`` sets it (off until the first
frame, then frozen), and waits until the app is idle and its screens are prepared. Then it holds keys
the way a terminal's key repeat does (one press every ``REPEAT`` seconds, or as soon as the previous
one is drawn when that takes longer):

- ``pageup``: from the bottom, ``PAGES`` presses (about 1,800 items up);
- ``ctrl+up`` (previous prompt) from the bottom, ``PROMPTS`` presses;
- ``shift+up`` (a line), ``LINES`` presses from where PageUp stopped;
- ``alt+home`` / ``alt+end`` (the start / the end), three times each.

A press's wall time runs from sending the key (a `Key` event, as the terminal driver posts it) to the
end of the first frame drawn after its action ran (work already running when the key comes, such as
mounting earlier items, counts); its CPU is what the process used from that press to the next (so
work the press left for later counts too).
Reported per key: p50 / p95 / max in ms, and the load average.

``tui_scroll_20k_terminal`` does the same in a real terminal (pty + pyte, `pi-tui --session` at
120×40, the fake server as the model): PageUp, Shift+Up, the mouse wheel (SGR reports) and Ctrl+Up held
from the bottom, each press timed from writing the key to the screen's first change after it and to its
settling (no output for 30 ms), counting presses whose chat area went blank meanwhile, and the app's CPU from
each press to the next (``cpu_ms``: a steadier figure than wall time on a loaded machine); then
Alt+Home / Alt+End three times each (to settling).

    python -m bench tui_scroll_20k -n 1 --no-write
    python -m bench tui_scroll_20k_terminal -n 1 --no-write
    python -m bench.tui_scroll REPO                 # the raw figures, as JSON
    python -m bench.tui_scroll --terminal 200 60    # the terminal's figures at another size, as JSON
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .scenarios import Result

__all__ = ["register_all", "tui_scroll"]

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = 20_000
REPEAT = 1 / 30
PAGES = 300
PROMPTS = 120
LINES = 200


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}
    return {
        "p50": round(ordered[len(ordered) // 2] * 1000, 1),
        "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
        "max": round(ordered[-1] * 1000, 1),
    }


async def _measure(repo: Path) -> dict[str, Any]:
    import gc

    from textual import events

    from pi_tui.args import parse_args
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.factory import create_session

    from .big_sessions import write_big_session

    session_file = write_big_session(repo / "big-session.jsonl", ENTRIES, repo)
    handled: list[asyncio.Future[float]] = []
    scroll_chat = PiApp.action_scroll_chat

    def scrolled(app: PiApp, how: str) -> None:  # every scroll key ends here: then its frame is awaited
        scroll_chat(app, how)
        for waiting in handled:
            app.call_after_refresh(lambda w=waiting: w.done() or w.set_result(time.perf_counter()))
        handled.clear()

    PiApp.action_scroll_chat = scrolled  # type: ignore[method-assign,assignment]

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

        async def press(key: str) -> float:
            """Send ``key`` as the terminal would; seconds until the frame after its action is drawn."""
            start = time.perf_counter()
            done: asyncio.Future[float] = loop.create_future()
            handled.append(done)
            app.post_message(events.Key(key, None))
            return await asyncio.wait_for(done, 10) - start

        async def hold(key: str, presses: int) -> dict[str, Any]:
            walls: list[float] = []
            cpus: list[float] = []
            for _ in range(presses):
                start, cpu = time.perf_counter(), time.process_time()
                walls.append(await press(key))
                rest = start + REPEAT - time.perf_counter()
                if rest > 0:
                    await asyncio.sleep(rest)
                cpus.append(time.process_time() - cpu)
            await pilot.pause(0.3)
            return {
                "presses": presses,
                "wall_ms": _percentiles(walls),
                "cpu_ms": _percentiles(cpus),
                "over_100ms": sum(1 for wall in walls if wall > 0.1),
                "slowest": [(n, round(wall * 1000)) for n, wall in enumerate(walls) if wall > 0.1][:12],
            }

        chat = app.chat
        figures["pageup"] = await hold("pageup", PAGES)
        figures["pageup"]["items_up"] = len(chat.items) - chat.first_mounted
        figures["shift_up"] = await hold("shift+up", LINES)
        jumps: dict[str, list[float]] = {"alt+home": [], "alt+end": []}
        for _ in range(3):
            for key in jumps:
                jumps[key].append(await press(key))
                await pilot.pause(0.5)
        figures["alt_home_ms"] = _percentiles(jumps["alt+home"])
        figures["alt_end_ms"] = _percentiles(jumps["alt+end"])
        figures["ctrl_up"] = await hold("ctrl+up", PROMPTS)
        figures["ctrl_up"]["items_up"] = len(chat.items) - chat.first_mounted
    figures["load_average"] = round(os.getloadavg()[0], 2)
    return figures


def run_child(module: str) -> dict[str, Any]:
    """Run ``python -m <module> REPO`` in a fresh temp home and repository; its last stdout line is the
    figures as JSON, or ``{"error": …}`` with the last line it wrote to stderr."""
    root = Path(tempfile.mkdtemp(prefix=f"pi-tui-{module.rpartition('.')[2]}-bench-"))
    env = dict(os.environ, HOME=str(root / "home"), PI_CODING_AGENT_DIR=str(root / "home" / ".pi" / "agent"))
    (root / "repo").mkdir(parents=True)
    run = subprocess.run(
        [sys.executable, "-m", module, str(root / "repo")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {run.returncode}"}
    figures: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return figures


def tui_scroll() -> Result:
    figures = run_child("bench.tui_scroll")
    worst = max(
        (
            figures[key]["wall_ms"].get("max", 0.0)
            for key in ("pageup", "shift_up", "ctrl_up")
            if key in figures
        ),
        default=0.0,
    )
    return Result(
        name="tui_scroll_20k",
        description="holding PageUp / Shift+Up / Ctrl+Up, Alt+Home / Alt+End on a 20k-entry session (headless)",
        wall_s=worst / 1000,
        cpu_s=worst / 1000,
        peak_rss_mb=0.0,
        requests=0,
        violations=0,
        cache_read_ratio=None,
        exit_code=0 if "error" not in figures else 1,
        extra=figures,
        stderr=str(figures.get("error", "")),
    )


_KEYS = {
    "pageup": "\x1b[5~",
    "ctrl+up": "\x1b[1;5A",
    "shift+up": "\x1b[1;2A",
    "wheel_up": "\x1b[<64;20;10M",  # an SGR mouse report: the wheel turned up over the chat
    "alt+home": "\x1b[1;3H",
    "alt+end": "\x1b[1;3F",
}
SETTLE_QUIET = 0.03
"""A press has settled when the program has written nothing for this long after its first change."""


def _cpu_clock(pid: int) -> int | None:
    """The clock id of process ``pid``'s CPU time (all its threads; for `time.clock_gettime`), or None.

    The app's CPU per key barely moves with the machine's load, where its wall time does: on a shared
    machine it is the figure to compare between runs.
    """
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        clock = ctypes.c_int()
        if libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return clock.value


def _terminal_figures(columns: int = 120, lines_: int = 40) -> dict[str, Any]:
    from pi_tui.testing import FakeLLM, Reply, text

    from .big_sessions import BIG_WINDOW, big_session_lines
    from .pty_screen import PtyScreen, ScreenTimeout
    from .targets import PI_TUI
    from .tui_fixtures import MODEL_ID, PROVIDER, make_tui_env

    fake = FakeLLM(context_window=BIG_WINDOW)
    fake.responder = lambda _request: Reply([text("PONG")])
    figures: dict[str, Any] = {"entries": ENTRIES, "size": f"{columns}x{lines_}"}
    with fake.serve() as server:
        env = make_tui_env(server)
        try:
            config = json.loads((env.agent_dir / "models.json").read_text())
            config["providers"][PROVIDER]["models"][0]["contextWindow"] = BIG_WINDOW
            (env.agent_dir / "models.json").write_text(json.dumps(config))
            lines = big_session_lines(ENTRIES, env.repo)
            last = json.loads(lines[-1])["message"]["content"][0]["text"]
            session = env.root / "big.jsonl"
            session.write_text("\n".join(lines) + "\n")
            environ = PI_TUI.environ(env.home, env.agent_dir)
            environ.update(LANG="C.UTF-8", TERM="xterm-256color")
            argv = PI_TUI.command(["--provider", PROVIDER, "--model", MODEL_ID, "--session", str(session)])
            chat_rows = lines_ - 8  # the editor, the footer and what lies between them are below

            def blank(shown: str) -> bool:
                return sum(1 for row in shown.split("\n")[:chat_rows] if row.strip()) < 3

            with PtyScreen(argv, cwd=env.repo, env=environ, columns=columns, lines=lines_) as screen:
                clock = _cpu_clock(screen.pid)

                def cpu_now() -> float:
                    return time.clock_gettime(clock) if clock is not None else 0.0

                screen.wait_for(" ".join(last.split()[:3]), timeout=120)
                screen.wait_for(MODEL_ID, timeout=120)
                screen.drain(quiet=2.0, limit=30)  # the work ahead done, the app idle

                def press(key: str, timeout: float) -> tuple[float, float, bool] | None:
                    """Seconds to the screen's first change and to its settling; whether the chat went
                    blank in between. None: nothing changed (the top)."""
                    before = screen.text()
                    start = screen.send(_KEYS[key])
                    try:
                        first = screen.wait_for(lambda shown: shown != before, timeout=timeout) - start
                    except ScreenTimeout:
                        return None
                    went_blank = blank(screen.text())
                    while screen.pump(SETTLE_QUIET):
                        went_blank = went_blank or blank(screen.text())
                    return first, screen.last_output_at - start, went_blank

                def hold(key: str, presses: int) -> dict[str, Any]:
                    firsts: list[float] = []
                    settled: list[float] = []
                    cpus: list[float] = []  # the app's CPU from one press to the next
                    blanks = 0
                    for _ in range(presses):
                        start, cpu = time.perf_counter(), cpu_now()
                        timed = press(key, 3)
                        if timed is None:
                            break
                        firsts.append(timed[0])
                        settled.append(timed[1])
                        blanks += timed[2]
                        rest = start + REPEAT - time.perf_counter()
                        if rest > 0:
                            screen.drain(quiet=rest, limit=rest)
                        cpus.append(cpu_now() - cpu)
                    screen.drain(quiet=0.5, limit=5)
                    return {
                        "presses": len(firsts),
                        "wall_ms": _percentiles(firsts),
                        "cpu_ms": _percentiles(cpus),
                        "cpu_ms_mean": round(sum(cpus) / len(cpus) * 1000, 2) if cpus else 0.0,
                        "over_100ms": sum(1 for wall in firsts if wall > 0.1),
                        "settled_ms": _percentiles(settled),
                        "settled_over_100ms": sum(1 for wall in settled if wall > 0.1),
                        "blank_frames": blanks,
                    }

                figures["pageup"] = hold("pageup", 250)
                figures["shift_up"] = hold("shift+up", 150)
                figures["wheel_up"] = hold("wheel_up", 150)
                figures["ctrl_up"] = hold("ctrl+up", 100)
                jumps: dict[str, list[float]] = {"alt+home": [], "alt+end": []}
                for _ in range(3):
                    for key, waits in jumps.items():
                        timed = press(key, 5)
                        if timed is not None:
                            waits.append(timed[1])
                        screen.drain(quiet=0.5, limit=5)
                figures["alt_home_settled_ms"] = _percentiles(jumps["alt+home"])
                figures["alt_end_settled_ms"] = _percentiles(jumps["alt+end"])
        finally:
            env.cleanup()
    figures["load_average"] = round(os.getloadavg()[0], 2)
    return figures


def tui_scroll_terminal() -> Result:
    try:
        figures = _terminal_figures()
    except Exception as error:  # a broken run is reported, not raised: the other scenarios go on
        figures = {"error": f"{type(error).__name__}: {error}"[:500]}
    worst = max(
        (
            figures[key]["wall_ms"].get("max", 0.0)
            for key in ("pageup", "shift_up", "wheel_up", "ctrl_up")
            if key in figures
        ),
        default=0.0,
    )
    return Result(
        name="tui_scroll_20k_terminal",
        description="holding PageUp / Shift+Up / the wheel / Ctrl+Up on a 20k-entry session in a real terminal (pty)",
        wall_s=worst / 1000,
        cpu_s=0.0,
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

    register("tui_scroll_20k", tui_scroll, section="tui")
    register("tui_scroll_20k_terminal", tui_scroll_terminal, section="tui")


if __name__ == "__main__":
    if sys.argv[1] == "--terminal":  # python -m bench.tui_scroll --terminal 200 60
        print(json.dumps(_terminal_figures(int(sys.argv[2]), int(sys.argv[3])), indent=1))
    else:
        print(json.dumps(asyncio.run(_measure(Path(sys.argv[1])))))
