"""A finished print run ends without the interpreter's teardown, and loses nothing by it.

The run's answer is on stdout, the session file holds the turn, the extensions' ``session_shutdown``
handlers and every ``atexit`` hook have run, and the exit status is the run's; only the freeing of the
objects left (a finaliser of a module-level object, here) is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_EXTENSION = '''
import atexit
from pathlib import Path

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext

OUT = Path({out!r})


class _Left:
    """Alive until the interpreter frees every module's objects."""

    # what it needs is bound here: the module's globals may be cleared before it is freed
    def __del__(self, _open=open, _path=str(OUT / "teardown")) -> None:
        with _open(_path, "w") as file:
            file.write("freed")


LEFT = _Left()
atexit.register(lambda: (OUT / "atexit").write_text("ran"))


def register(pi: ExtensionAPI) -> None:
    @pi.on("session_shutdown")
    async def shutdown(event: Event, ctx: ExtensionContext) -> None:
        (OUT / "shutdown").write_text("ran")
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PI_OFFLINE"] = "1"
    return env


def test_a_print_run_keeps_its_output_session_and_hooks_and_skips_the_teardown(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    extension = tmp_path / "marks.py"
    extension.write_text(_EXTENSION.format(out=str(out)))
    session = tmp_path / "s.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "pi_tui", "--provider", "faux", "-e", str(extension)]
        + ["--session", str(session), "-p", "hi"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr
    assert "faux provider" in run.stdout
    roles = [
        e["message"]["role"]
        for e in map(json.loads, session.read_text().splitlines())
        if e["type"] == "message"
    ]
    assert roles == ["system", "user", "assistant"]
    assert (out / "shutdown").read_text() == "ran"
    assert (out / "atexit").read_text() == "ran"
    assert not (out / "teardown").exists()  # the process ended before freeing the objects left


_THREAD = """
import threading
from pi_tui.util.quick_exit import end_process

release = threading.Event()
threading.Thread(target=release.wait).start()  # not a daemon: the interpreter would wait for it
end_process(3)
print("returned", flush=True)
release.set()
"""


def test_a_running_thread_makes_it_leave_the_ending_to_the_interpreter(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", _THREAD], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=50
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "returned"


def test_without_threads_it_ends_with_the_code_after_the_hooks_and_flushes(tmp_path: Path) -> None:
    script = (
        "import atexit, sys\n"
        "from pi_tui.util.quick_exit import end_process\n"
        "atexit.register(lambda: print('hook', flush=False))\n"
        "sys.stdout.write('unflushed')\n"
        "end_process(3)\n"
        "print('returned')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=50
    )
    assert run.returncode == 3
    assert run.stdout == "unflushedhook\n"


def test_a_profiled_print_run_still_writes_its_profile(tmp_path: Path) -> None:
    profile = tmp_path / "run.prof"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(profile),
            "-m",
            "pi_tui",
            "--provider",
            "faux",
            "-p",
            "hi",
        ],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr
    assert "faux provider" in run.stdout
    assert profile.stat().st_size > 0
