"""Screens (issue #10): how long ``/tree``, ``/context`` and ``/resume`` take to open, headless.

Each measurement runs in a child process (its own HOME and agent dir) with a minimal Textual host app
holding a real `AgentSession` (faux provider: nothing is sent). "Open" is the time from calling the
screen's command handler to the first refresh after the screen is on the stack (``call_after_refresh``),
so it includes building the rows and the first paint. The first open in a process also pays for
importing the screen's modules; it is reported beside the median of the warm opens. ``first_prepared_*``
is the first open after the work the app does ahead once a session is shown
(`pi_tui.modes.interactive.screens.prepare`) has finished, in a second child; ``first_at_once_*`` the
first open made as that work starts (a command typed while the session loaded), in a third;
``first_after_<ms>_*`` the first open made that long after the work started (one child each); for
``/resume``, which may show before its rows, ``first_page_ms`` is when its first rows (the sessions
modified last) are there and ``first_rows_ms`` when all are. ``keystroke_*``
are search keystrokes in ``/resume`` and ``/tree``. CPU figures are `time.process_time()` (all threads).

    python -m bench screens_tree_open -n 1 --no-write
    python -m bench.screens tree REPO [prepared|racing]   # the raw figures of one run, as JSON
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
LARGE = Path("/work/shared/fixtures/pi-sessions/large-session.jsonl")
if not LARGE.exists():  # a clone beside ../shared
    LARGE = ROOT.parent / "shared" / "fixtures" / "pi-sessions" / "large-session.jsonl"
TARGETS_MS = {
    "tree": 150,
    "context": 150,
    "resume": 300,
    "tree_big": 150,
    "context_big": 150,
    "resume_big": 150,
}
BIG_ENTRIES = 20_000
BIG_COUNT = 10
WARM_OPENS = 5
AFTER_MS = (100, 300, 1000)
SESSIONS = 1000


def _write_sessions(repo: Path, count: int) -> None:
    """``count`` small pi v3 sessions of ``repo`` (2–12 messages each), as `SessionManager` writes them."""
    from pi_tui.session.paths import default_session_dir

    folder = default_session_dir(repo)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        stamp = f"2025-06-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00.000Z"
        sid = f"00000000-0000-4000-8000-{n:012d}"
        lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": str(repo)}
        ]
        parent = None
        for i in range(2 + n % 11):
            role = "user" if i % 2 == 0 else "assistant"
            message: dict[str, Any] = {
                "role": role,
                "content": [
                    {"type": "text", "text": f"session {n} message {i}: refactor module_{n % 97}.py"}
                ],
                "timestamp": 1748736000000 + n * 1000 + i,
            }
            if role == "assistant":
                message.update({"provider": "p", "model": "m", "stopReason": "stop"})
            entry_id = f"{n:04x}{i:04x}"
            lines.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": stamp,
                    "message": message,
                }
            )
            parent = entry_id
        path = folder / f"{stamp.replace(':', '-')}_{sid}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _write_big_sessions(repo: Path) -> None:
    """`BIG_COUNT` sessions of `BIG_ENTRIES` entries in ``repo``'s session folder (written once, copied)."""
    import shutil

    from pi_tui.session.paths import default_session_dir

    from .big_sessions import write_big_session

    folder = default_session_dir(repo)
    first = write_big_session(folder / "2025-07-01T00-00-00-000Z_big-0.jsonl", BIG_ENTRIES, repo)
    for n in range(1, BIG_COUNT):
        shutil.copyfile(first, folder / f"2025-07-{1 + n:02d}T00-00-00-000Z_big-{n}.jsonl")


async def _measure(which: str, repo: Path, mode: str = "") -> dict[str, Any]:
    from textual.app import App

    from pi_tui.args import parse_args
    from pi_tui.modes.interactive.screens import SCREEN_COMMANDS
    from pi_tui.runtime.factory import create_session

    command = which.removesuffix("_big")
    if which == "resume":
        _write_sessions(repo, SESSIONS)
        argv = ["--provider", "faux"]
    elif which == "resume_big":  # 990 small sessions and ten of 20,000 entries
        _write_sessions(repo, SESSIONS - BIG_COUNT)
        _write_big_sessions(repo)
        argv = ["--provider", "faux"]
    elif which.endswith("_big"):
        from .big_sessions import write_big_session

        session_file = write_big_session(repo / "big-session.jsonl", BIG_ENTRIES, repo)
        argv = ["--session", str(session_file), "--provider", "faux"]
    else:
        session_file = repo / "large-session.jsonl"
        lines = LARGE.read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        header["cwd"] = str(repo)
        session_file.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
        argv = ["--session", str(session_file), "--provider", "faux"]
    session = create_session(parse_args(argv), repo).session
    import gc

    gc.freeze()  # as the app does once the session is attached: collections skip the loaded session
    from pi_tui.modes.interactive.screens.prepare import preparation_for

    preparation = preparation_for(session)
    prepare_cpu = 0.0
    session.stats()  # the app's start-up thread counts the totals before the footer shows them
    if mode == "prepared":  # what the app does in a worker thread once the session is shown
        start_cpu = time.process_time()
        preparation.start()
        await preparation.wait()
        prepare_cpu = time.process_time() - start_cpu

    class Host(App[None]):
        def __init__(self) -> None:
            super().__init__()
            self.session = session

        def set_editor_text(self, text: str) -> None:
            pass

        async def run_command(self, text: str) -> None:
            pass

    app = Host()
    opens: list[float] = []
    open_cpu: list[float] = []
    keystrokes: list[float] = []
    keystroke_cpu: list[float] = []
    first_rows_ms = None
    first_page_ms = None
    first_report_ms = None
    async with app.run_test(size=(120, 40)) as pilot:
        if mode == "racing":  # the app starts the work ahead as the session shows; opened at once
            preparation.start()
        elif mode.startswith("after"):  # opened ``after<ms>`` once the work ahead started
            preparation.start()
            await asyncio.sleep(int(mode.removeprefix("after")) / 1000)
        for _ in range(WARM_OPENS + 1):
            start, cpu = time.perf_counter(), time.process_time()
            await SCREEN_COMMANDS[command](app, "")
            drawn: asyncio.Future[float] = asyncio.get_running_loop().create_future()
            app.call_after_refresh(lambda f=drawn: f.set_result(time.perf_counter()))  # type: ignore[misc]
            opens.append((await drawn) - start)
            open_cpu.append(time.process_time() - cpu)
            if command == "resume" and first_rows_ms is None:  # the picker may show before its rows
                from pi_tui.modes.interactive.screens.resume_screen import ResumeScreen

                screen = app.screen
                assert isinstance(screen, ResumeScreen)
                while not screen.shown and screen.lists["current"] is None:
                    await asyncio.sleep(0.002)
                first_page_ms = round((time.perf_counter() - start) * 1000, 1)
                while screen.lists["current"] is None:
                    await asyncio.sleep(0.002)
                first_rows_ms = round((time.perf_counter() - start) * 1000, 1)
            if command == "context" and first_report_ms is None:  # it shows before its figures
                from pi_tui.modes.interactive.screens.context_screen import ContextScreen

                shown = app.screen
                assert isinstance(shown, ContextScreen)
                await shown.ready.wait()
                first_report_ms = round((time.perf_counter() - start) * 1000, 1)
            if command == "tree":
                from textual import events

                for char in "module":
                    start, cpu = time.perf_counter(), time.process_time()
                    app.screen.post_message(events.Key(char, char))  # search: filter → redraw
                    searched: asyncio.Future[float] = asyncio.get_running_loop().create_future()
                    app.call_after_refresh(lambda f=searched: f.set_result(time.perf_counter()))  # type: ignore[misc]
                    keystrokes.append((await searched) - start)
                    keystroke_cpu.append(time.process_time() - cpu)
            if command == "resume":
                from textual.widgets import Input

                field = app.screen.query_one(Input)
                for char in "module_4":
                    start, cpu = time.perf_counter(), time.process_time()
                    field.value += char  # as a keystroke does: Input.Changed → filter → redraw
                    typed: asyncio.Future[float] = asyncio.get_running_loop().create_future()
                    app.call_after_refresh(lambda f=typed: f.set_result(time.perf_counter()))  # type: ignore[misc]
                    keystrokes.append((await typed) - start)
                    keystroke_cpu.append(time.process_time() - cpu)
            from textual.worker import WorkerCancelled

            try:
                await app.workers.wait_for_complete()
            except WorkerCancelled:  # a search worker replaced by the next key's (exclusive)
                pass
            await pilot.press("escape")
            await pilot.pause()
    await session.close()
    return {
        "mode": mode or "cold",
        "first_rows_ms": first_rows_ms,
        "first_page_ms": first_page_ms,
        "first_report_ms": first_report_ms,
        "prepare_cpu_ms": round(prepare_cpu * 1000, 1),
        "cold_ms": round(opens[0] * 1000, 1),
        "warm_ms": round(statistics.median(opens[1:]) * 1000, 1),
        "cold_cpu_ms": round(open_cpu[0] * 1000, 1),
        "warm_cpu_ms": round(statistics.median(open_cpu[1:]) * 1000, 1),
        "keystroke_ms_p50": round(statistics.median(keystrokes) * 1000, 1) if keystrokes else None,
        "keystroke_cpu_ms_p50": round(statistics.median(keystroke_cpu) * 1000, 1) if keystroke_cpu else None,
        "keystroke_ms_max": round(max(keystrokes) * 1000, 1) if keystrokes else None,
    }


def _child(which: str, mode: str = "") -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="pi-tui-screens-bench-"))
    env = dict(os.environ, HOME=str(root / "home"), PI_CODING_AGENT_DIR=str(root / "home" / ".pi" / "agent"))
    (root / "repo").mkdir(parents=True)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.screens",
            which,
            str(root / "repo"),
            *([mode] if mode else []),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode != 0:
        return {
            "error": run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"
        }
    figures: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return figures


def _scenario(which: str, description: str) -> Result:
    figures = _child(which)
    first = _child(which, "prepared")  # the work ahead ran before the open
    for key in ("prepare_cpu_ms", "cold_ms", "cold_cpu_ms"):
        figures[key.replace("cold", "first_prepared")] = first.get(key)
    racing = _child(which, "racing")  # opened as the session shows, while the work ahead starts
    later = {delay: _child(which, f"after{delay}") for delay in AFTER_MS}  # that long after it started
    for moment, run in (("at_once", racing), *((f"after_{d}", r) for d, r in later.items())):
        for key in ("cold_ms", "cold_cpu_ms", "first_rows_ms", "first_page_ms", "first_report_ms"):
            if run.get(key) is not None:  # e.g. first_at_once_ms, at_once_first_page_ms
                name = key.replace("cold", f"first_{moment}") if key.startswith("cold") else f"{moment}_{key}"
                figures[name] = run[key]
    warm = figures.get("warm_ms")
    figures["target_ms"] = TARGETS_MS[which]
    return Result(
        name=f"screens_{which}_open",
        description=description,
        wall_s=(warm or 0.0) / 1000,
        cpu_s=(warm or 0.0) / 1000,
        peak_rss_mb=0.0,
        requests=0,
        violations=0,
        cache_read_ratio=None,
        exit_code=0 if warm is not None else 1,
        extra=figures,
        stderr=str(figures.get("error", "")),
    )


def register_all() -> None:
    from .registry import register

    register(
        "screens_tree_open",
        lambda: _scenario("tree", "/tree on the 1,019-line fixture (target ≤ 150 ms)"),
        section="screens",
    )
    register(
        "screens_context_open",
        lambda: _scenario("context", "/context on the 1,019-line fixture (target ≤ 150 ms)"),
        section="screens",
    )
    register(
        "screens_tree_big_open",
        lambda: _scenario(
            "tree_big", f"/tree on a generated {BIG_ENTRIES:,}-entry session (target ≤ 150 ms)"
        ),
        section="screens",
    )
    register(
        "screens_context_big_open",
        lambda: _scenario(
            "context_big", f"/context on a generated {BIG_ENTRIES:,}-entry session (target ≤ 150 ms)"
        ),
        section="screens",
    )
    register(
        "screens_resume_big_open",
        lambda: _scenario(
            "resume_big",
            f"/resume over {SESSIONS:,} sessions, {BIG_COUNT} of {BIG_ENTRIES:,} entries (target ≤ 150 ms)",
        ),
        section="screens",
    )
    register(
        "screens_resume_open",
        lambda: _scenario("resume", f"/resume over {SESSIONS:,} sessions (target ≤ 300 ms)"),
        section="screens",
    )


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_measure(sys.argv[1], Path(sys.argv[2]), (sys.argv[3:] or [""])[0]))))
