"""In the TUI the MCP SDK is imported only when a server is configured, and only after the first frame.

Each check runs the app (``App.run_test``) in a fresh interpreter: the point is what that process
imports and when. An audit hook notes when the SDK's protocol types and ``pydantic`` start to load, on the same
clock as the app's ``first_frame_at``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.shipped_extensions.test_mcp_process import write_config

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import asyncio, json, sys, threading, time
from pathlib import Path

started = {}
WATCHED = ("mcp_types._types", "pydantic")  # import statements (importlib.import_module raises no event)


def note(event, args):
    if event == "import" and args[0] in WATCHED and args[0] not in started:
        started[args[0]] = time.perf_counter()


sys.addaudithook(note)
from pi_tui.ai.providers.faux import FauxScript, faux_reply
from tests.modes.interactive.helpers import make_app, type_text, until


def loading():
    return any(t.name == "mcp-sdk-import" for t in threading.enumerate())


async def main():
    cwd, agent_dir, configured = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "configured"
    app = make_app(cwd, agent_dir, FauxScript(faux_reply("done")), argv=["-e", "mcp"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set, timeout=30)
        if configured:
            await until(pilot, lambda: "mcp_types._types" in started, timeout=30)
        else:  # a turn too: nothing may start the load later either
            await type_text(pilot, "hi")
            await pilot.press("enter")
            await until(pilot, lambda: app.session.messages and not app.session.is_streaming, timeout=30)
        frame = app.first_frame_at
        print(json.dumps({
            name: None if name not in started else started[name] > frame for name in WATCHED
        } | {"loading": loading()}))


asyncio.run(main())
"""


def _run(tmp_path: Path, agent_dir: Path, configured: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = str(ROOT)
    cwd = tmp_path / "project"
    cwd.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(cwd), str(agent_dir), "configured" if configured else "none"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_with_a_server_configured_the_sdk_loads_after_the_first_frame(
    tmp_path: Path, agent_dir: Path
) -> None:
    pid_file = tmp_path / "server.pid"
    write_config(agent_dir, pid_file)
    seen = _run(tmp_path, agent_dir, configured=True)
    # True: the load started after the first frame was drawn (None: it never started).
    assert seen["mcp_types._types"] is True and seen["pydantic"] is True, seen
    assert not pid_file.exists()  # the server itself is lazy: not started while nobody uses it


def test_with_no_server_configured_the_sdk_is_never_loaded(tmp_path: Path, agent_dir: Path) -> None:
    seen = _run(tmp_path, agent_dir, configured=False)
    assert seen == {"mcp_types._types": None, "pydantic": None, "loading": False}
