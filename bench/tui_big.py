"""TUI figures on generated big sessions (`bench.big_sessions`), pi-tui beside pi 0.87.1 in one run.

``tui_big_<size>``: spawn with ``--session FILE`` → the session's last answer on screen (the figure,
and the process's CPU, all threads, when the bytes of that frame were read), → the model in the footer (the session loaded: pi shows both at once), then type a prompt and Enter → the answer on screen. One warm-up spawn per
program first (file and bytecode caches warm).
"""

from __future__ import annotations

import json
import os
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text

from .big_sessions import BIG_WINDOW, SIZES, big_session_lines
from .pty_screen import timing
from .scenarios import Result
from .tui import Program, _each, _median_ms, _result, _settle, _type_and_wait, frame_cpu_seconds, rss_mb
from .tui_fixtures import MODEL_ID, PROVIDER, TuiEnv, make_tui_env

__all__ = ["tui_big"]


def _write_session(env: TuiEnv, entries: int) -> tuple[str, str]:
    lines = big_session_lines(entries, env.repo)
    last = json.loads(lines[-1])["message"]["content"][0]["text"]
    path = env.root / f"big-{entries}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path), " ".join(last.split()[:3])


def _big_window(env: TuiEnv, server: Any) -> None:
    config = json.loads((env.agent_dir / "models.json").read_text())
    config["providers"][PROVIDER]["models"][0]["contextWindow"] = BIG_WINDOW
    (env.agent_dir / "models.json").write_text(json.dumps(config))


def tui_big(size: str, runs: int = 2) -> Result:
    entries = SIZES[size]
    answered = [0]

    def respond(_request: Any) -> Reply:
        answered[0] += 1
        return Reply([text(f"PONG{answered[0] - 1:04d} is the answer.")])

    fake = FakeLLM(context_window=BIG_WINDOW)
    fake.responder = respond
    with fake.serve() as server:
        env = make_tui_env(server)
        _big_window(env, server)
        session, last_words = _write_session(env, entries)
        try:

            def measure(program: Program) -> dict[str, Any]:
                frames: list[float] = []
                cpu: list[float] = []
                enter: list[float] = []
                readies: list[float] = []
                rss = 0.0
                for run in range(runs + 1):
                    with program.spawn(env, ["--session", session]) as screen:
                        screen.track_cpu = True
                        with timing():
                            shown = screen.wait_for(lambda s: last_words in s, timeout=120)
                        spent = frame_cpu_seconds(screen)  # as the frame was read, before it was parsed
                        ready = screen.wait_for(lambda s: MODEL_ID in s, timeout=120)
                        _settle(screen, quiet=0.5, limit=30)
                        _type_and_wait(screen, "hello")
                        expected = f"PONG{answered[0]:04d}"
                        t0 = screen.send("\r")
                        done = screen.wait_for(expected, timeout=120)
                        if run:
                            frames.append(shown - screen.started)
                            readies.append(ready - screen.started)
                            cpu.append(spent)
                            enter.append(done - t0)
                        if run == runs:
                            _settle(screen, quiet=0.5, limit=10)
                            rss = rss_mb(screen.pid)
                return {
                    "last_messages_ms": _median_ms(frames),
                    "last_messages_cpu_ms": _median_ms(cpu),
                    "ready_ms": _median_ms(readies),
                    "enter_answer_ms": _median_ms(enter),
                    "rss_mb": round(rss, 1),
                }

            figures, failed = _each(measure)
            figures["load_average"] = round(os.getloadavg()[0], 2)
        finally:
            env.cleanup()
    ours = figures.get("ours_last_messages_ms")
    return _result(
        f"tui_big_{size}",
        f"`--session` a generated {entries:,}-entry session → its last answer on screen; Enter → answer",
        figures,
        ours / 1000 if ours else None,
        fake,
        failed,
        figures.get("ours_rss_mb", 0.0),
    )


def register_all() -> None:
    from .registry import register

    for size in ("20k", "100k"):
        register(f"tui_big_{size}", lambda size=size: tui_big(size, runs=1), section="tui")
